"""Pixels to rules: the camera side of rummikub-referee (capture, calibration, detection, layout, tracking).

Depends on :mod:`referee`, never the reverse. Imports nothing heavy at import time.
"""
