"""Bytes -> rows: finding recordings, decoding them, deciding outcomes and extracting rows. No database."""
