"""Putting rendered chapters elsewhere: the docs plugins (Sphinx, MkDocs), slides, `dtfilm serve`,
the explorer page."""
