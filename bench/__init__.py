"""Benchmark helpers for footprint-reviewer: synthetic corpora in the real recording format (`bench.corpus`)."""
