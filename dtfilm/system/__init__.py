"""Files and processes every layer may use: atomic writes and video containers, sound levels,
signed pickles, write records, the manifest's schema, located YAML, helper processes."""
