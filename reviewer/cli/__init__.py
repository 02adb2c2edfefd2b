"""The `reviewer` command line: `main` (the commands), `pack_commands` (`reviewer pack ...`), `common`
(options and output every command shares), `exports` (writing export files)."""
