"""Headless persistence for footprint-reviewer: reading recordings, the SQLite schema, every SQL query.

Never imports `textual` or `reviewer` (a test enforces it).
"""
