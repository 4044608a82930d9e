"""Training code for the vision models (the tile crop classifier).

Everything here imports ``torch`` lazily, inside the functions that need it: the package is only used to train
and export models, never imported at run time (the runtime loads the exported ONNX files with ONNX Runtime).
"""
