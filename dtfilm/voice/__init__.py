"""The film's voice: text made for speech (speech.py)."""
