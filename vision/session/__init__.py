"""The drivers that put the rest together: `analyze`, `live`, `batch` and what they share."""
