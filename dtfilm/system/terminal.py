"""Text read back from files, made safe to print: what a terminal would act on taken out.

A manifest's fields (a chapter's voice and quality, its reasons), a validation report's and a
cache entry's are read back from renders/, which is not trusted (docs/security.md). Printed raw,
an escape sequence in one clears the screen, moves the cursor, or writes a line of its own ("dp
fresh") over what dtfilm printed. Every such line passes through `for_terminal` first.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, the C1 controls (U+0080-U+009F: 0x9B is a CSI on its
# own), and the Unicode line and paragraph separators and bidirectional overrides, which move or
# reorder what follows them on the line.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str, keep_newlines: bool = True) -> str:
    """`text` with every control character a terminal acts on removed (newlines kept unless
    `keep_newlines` is False, when each becomes a space: a value shown inside one line)."""
    text = _CONTROL.sub("", text)
    return text if keep_newlines else text.replace("\n", " ")
