"""The game on camera: the per-frame pipeline (frames in, events out), the camera's side of the game and its log."""
