"""`dtfilm check`: the dry run of chapters (no frames) and what it verifies."""
