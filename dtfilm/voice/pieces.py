"""A spoken sentence cut into pieces that one synthesis can take (engine.MAX_SPOKEN_CHARS):
at clause ends (; :) first, then at commas, then between words; a sentence short enough is
one piece, the same text as before, so its cached audio keeps its key."""

from __future__ import annotations

import re

from dtfilm.voice.engine import MAX_SPOKEN_CHARS

# Where a cut may fall, the best first. The spoken text has words and pauses only (speech.spoken):
# "—" and "·" are already said as commas.
_CUTS = (re.compile(r"(?<=[;:])\s+"), re.compile(r"(?<=,)\s+"), re.compile(r"\s+"))


def _cut(text: str, most_chars: int, level: int) -> list[str]:
    """`text` cut where _CUTS[level] allows, neighbours joined back while they fit (so it is cut
    no more than it must); a part still too long is cut at the next level, on its own."""
    if len(text) <= most_chars:
        return [text]
    if level == len(_CUTS):  # one word longer than a piece: cut inside it
        return [text[i : i + most_chars] for i in range(0, len(text), most_chars)]
    out: list[str] = []
    joinable = False  # whether out[-1] is a whole part, which a neighbour may join
    for part in _CUTS[level].split(text):
        if not part:
            continue
        if len(part) > most_chars:
            out += _cut(part, most_chars, level + 1)
            joinable = False
        elif joinable and len(out[-1]) + 1 + len(part) <= most_chars:
            out[-1] += " " + part
        else:
            out.append(part)
            joinable = True
    return out


def voice_pieces(said: str, most_chars: int = MAX_SPOKEN_CHARS) -> list[str]:
    """`said` (what the voice is given for one sentence) in pieces of at most `most_chars`."""
    return _cut(said, most_chars, 0)
