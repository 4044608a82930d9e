"""Pixels to tables: detection, classification, colour, layout, the play area, capture, seats and motion."""
