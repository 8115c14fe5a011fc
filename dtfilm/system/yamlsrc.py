"""Safe YAML loading that remembers the line of every key, for errors that name file:line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dtfilm.errors import DtfilmError, Where
from dtfilm.userfile import read_limited

KeyPath = tuple[str | int, ...]


@dataclass
class Located:
    """A loaded YAML document: plain data plus the line of each key path."""

    file: str
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def where(self, path: KeyPath) -> Where:
        """The line of `path`, or of its nearest parent that has one."""
        while path and path not in self.lines:
            path = path[:-1]
        return Where(self.file, self.lines.get(path, 1))


def dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# Bounds that keep a hostile file (a "billion laughs" of nested aliases, a deeply nested
# list) to bounded time and memory: far above any real storyboard.
MAX_FILE_BYTES = 1_000_000
MAX_VALUES = 20_000
MAX_DEPTH = 24
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Half of a UTF-16 pair ("\ud800" in a double-quoted string): no UTF-8 encoder writes it.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# A whole number beyond a float's range cannot be any input; Python refuses to read one of more
# than 4,300 digits at all.
MAX_DIGITS = 300
# The tags of plain data (the YAML core schema, and timestamps, which safe_load reads); any other
# tag (`!foo`, `!!python/name:`, `!!binary`, `!!set`) is refused, on a key or a value.
_CORE = "tag:yaml.org,2002:"
PLAIN_TAGS = frozenset(_CORE + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp"))


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[KeyPath, int] = {}
        self.constructor = yaml.SafeLoader("")
        self.values = 0

    def _count(self, node: yaml.Node, path: KeyPath) -> None:
        self.values += 1
        line = node.start_mark.line + 1
        if self.values > MAX_VALUES:
            raise DtfilmError(
                f"more than {MAX_VALUES:,} values (aliases that expand without end?); valid: a storyboard"
                " of ordinary size",
                Where(self.file, line),
                dotted(path) or None,
            )
        if len(path) > MAX_DEPTH:
            raise DtfilmError(
                f"nested more than {MAX_DEPTH} levels deep; valid: a storyboard of ordinary depth",
                Where(self.file, line),
                dotted(path),
            )

    def _plain(self, node: yaml.Node, path: KeyPath) -> None:
        if node.tag not in PLAIN_TAGS:
            raise DtfilmError(
                f"the YAML tag {node.tag.removeprefix(_CORE)!r} is not supported; valid: plain values, without tags",
                Where(self.file, node.start_mark.line + 1),
                dotted(path) or None,
            )

    def _scalar(self, node: yaml.Node, path: KeyPath) -> Any:
        """A scalar's value: plain data only, a number within a float's range, text that UTF-8
        can write without control characters."""
        where = Where(self.file, node.start_mark.line + 1)
        self._plain(node, path)
        digits = len(node.value.lstrip("+-0").replace("_", "")) if node.tag == _CORE + "int" else 0
        if digits > MAX_DIGITS:
            raise DtfilmError(
                f"a whole number of {digits:,} digits; valid: a number of at most {MAX_DIGITS} digits",
                where,
                dotted(path) or None,
            )
        value = self.constructor.construct_object(node)
        if isinstance(value, str) and (bad := _CONTROL.search(value)):
            raise DtfilmError(
                f"text holds the control character U+{ord(bad.group()):04X}; valid: printable text",
                where,
                dotted(path) or None,
            )
        if isinstance(value, str) and (bad := _SURROGATE.search(value)):
            raise DtfilmError(
                f"text holds U+{ord(bad.group()):04X}, half of a UTF-16 pair that no UTF-8 file can hold;"
                " valid: printable text",
                where,
                dotted(path) or None,
            )
        return value

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        self._count(node, path)
        self._plain(node, path)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                line = key_node.start_mark.line + 1
                merge = key_node.tag == "tag:yaml.org,2002:merge"  # `<<` in flow style has no constructor
                key = "<<" if merge else self._key(key_node, path)
                if not isinstance(key, str):
                    raise DtfilmError(f"key {key!r} is not a name", Where(self.file, line), dotted(path))
                if key == "<<":
                    raise DtfilmError(
                        "merge keys (<<) are not supported; repeat the values",
                        Where(self.file, line),
                        dotted(path),
                    )
                if key in out:
                    raise DtfilmError("duplicate key", Where(self.file, line), dotted((*path, key)))
                self.lines[(*path, key)] = line
                out[key] = self.build(value_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.lines[(*path, index)] = item.start_mark.line + 1
                items.append(self.build(item, (*path, index)))
            return items
        return self._scalar(node, path)

    def _key(self, node: yaml.Node, path: KeyPath) -> Any:
        if not isinstance(node, yaml.ScalarNode):  # `? [a, b]: 1`
            raise DtfilmError(
                f"a {node.id} as a key is not a name", Where(self.file, node.start_mark.line + 1), dotted(path) or None
            )
        return self._scalar(node, path)


# libyaml composes nested nodes by recursing in C: a file nested 50,000 deep crashed the process.
LIBYAML_MAX_NESTING = 2_000


def _nesting_bound(text: str) -> int:
    """More than the document's nesting can be: every flow bracket opened, plus the longest line
    (each level of block nesting takes a character of indentation, or a "- " on one line)."""
    return text.count("[") + text.count("{") + max((len(line) for line in text.splitlines()), default=0)


def _composed(text: str) -> yaml.Node | None:
    """The document's nodes, by libyaml where PyYAML has it (a tenth of the time: the film's 33
    storyboard files took 0.3 s in pure Python, at every command) and the file cannot nest
    deeply enough to crash it. A file libyaml refuses is read again in pure Python, whose errors
    the messages below are written for."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None and _nesting_bound(text) < LIBYAML_MAX_NESTING:
        try:
            return yaml.compose(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


# PyYAML's words for the mistakes people make in storyboards, and what to write instead.
_QUOTE_BRACKET = 'quote a value that starts with {{ or [ ({key}: "{{model.label}} on ...")'
_SYNTAX_HINTS = (
    ("'\\t'", "indent with spaces; YAML does not take tabs"),
    ("quoted scalar", "close the quote, or write a quote inside a value as '' (single) or \\\" (double)"),
    ("flow sequence", "close the [ ]"),
    ("flow mapping", "close the { }"),
    ("expected <block end>", "indent this line as the keys beside it are"),
    ("could not find expected ':'", "write each key as 'key: value', with a space after the colon"),
)
_KEYED = re.compile(r"^\s*(?:-\s+)?([\w.-]+):(?:\s+(.*))?$")


def _syntax_hint(problem: str, lines: list[str], where: list[int], column: int | None) -> str:
    """What to write instead, for the mistake PyYAML's `problem` names at the 0-based `where`
    lines (the problem's, then the bracket's or quote's that opened it)."""
    for index in where:
        keyed = _KEYED.match(lines[index]) if index < len(lines) else None
        if keyed is None:
            continue
        value = (keyed.group(2) or "").rstrip()
        if value[:1] in ("[", "{"):
            closer = "]" if value[0] == "[" else "}"
            if closer in value and not value.endswith(closer):  # {model.label} on 8: words after the bracket
                return "; valid: " + _QUOTE_BRACKET.format(key=keyed.group(1))
            if closer not in value:
                return f"; valid: close the {value[0]} {closer}, or " + _QUOTE_BRACKET.format(key=keyed.group(1))
        if value[:1] in ("'", '"') and len(value) > 1 and value[0] in value[1:] and not value.endswith(value[0]):
            whole = f"{keyed.group(1)}: '{value}'"
            return f"; valid: a value that starts with a quote ends with it: quote all of it ({whole})"
    if "mapping values are not allowed" in problem:
        line = lines[where[0]] if where[0] < len(lines) else ""
        if column is not None and line.find(":") == column:  # the key's own colon: a key indented too far
            return "; valid: indent this key as the keys beside it are"
        return "; valid: quote a value that holds ': ' (caption: \"Note: the ring\")"
    for words, hint in _SYNTAX_HINTS:
        if words in problem:
            return f"; valid: {hint}"
    return ""


def load_yaml(path: Path, shown_as: str | None = None, what: str = "a storyboard") -> Located:
    """Load a YAML file with yaml.safe_load's safety, keeping each key's line. Only a regular
    file of at most MAX_FILE_BYTES is read (dtfilm.userfile)."""
    name = shown_as or str(path)
    raw = read_limited(path, MAX_FILE_BYTES, what, name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DtfilmError(
            f"byte 0x{raw[error.start]:02x} is not UTF-8; valid: a UTF-8 text file", Where(name, line)
        ) from None
    try:
        node = _composed(text)
    except RecursionError:
        raise DtfilmError("nested too deeply to read; valid: a storyboard of ordinary depth", Where(name, 1)) from None
    except yaml.reader.ReaderError as error:
        line = text[: error.position].count("\n") + 1
        raise DtfilmError(
            f"the character U+{error.character:04X} is not allowed in YAML; valid: printable text",
            Where(name, line),
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        # An unclosed bracket or quote is found at the end of the file: point at its start.
        if error.context_mark is not None and (mark is None or mark.index >= len(text.rstrip())):
            mark = error.context_mark
        line = mark.line + 1 if mark else 1
        problem = error.problem or error.context or "not valid YAML"
        if error.context and error.problem:
            problem = f"{error.problem} ({error.context})"
        where = [line - 1]
        opener = error.context_mark
        if opener is not None and opener.line + 1 != line and ("flow" in problem or "quoted" in problem):
            # PyYAML finds an unclosed [ or " where it gives up, lines later: point at where it opened.
            problem += f", found on line {line}"
            line = opener.line + 1
            where = [line - 1, *where]
        elif opener is not None:
            where.append(opener.line)
        column = mark.column if mark else None
        hint = _syntax_hint(problem, text.splitlines(), where, column)
        raise DtfilmError(f"YAML syntax: {problem}{hint}", Where(name, line)) from None
    except yaml.YAMLError as error:
        raise DtfilmError("YAML syntax: " + " ".join(str(error).split()), Where(name, 1)) from None
    builder = _Builder(name)
    data = builder.build(node, ()) if node is not None else None
    return Located(name, data, builder.lines)
