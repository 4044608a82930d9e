"""Evaluation and benchmarks (never loaded by the runtime)."""
