"""What a scene puts on screen, read back: its digest (a shot key's facts), the numbers drawn, the
layout check and the state kept at a shot's start."""
