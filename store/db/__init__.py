"""The review database: connection, schema and migrations, the writer, ingest and re-extraction."""
