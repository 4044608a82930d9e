"""Synthetic Rummikub scenes and games with exact ground truth."""
