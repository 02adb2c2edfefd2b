"""Pure review domain: spans, phrase packs, matching, replay, metrics. No Textual, no SQL."""
