"""A SEED kind's ``csv_settings (delimiter = ';', na_values = ['-'], ...)`` → ``CsvSettings``, checked where
``pandas.read_csv`` would refuse them, with the position of the bad setting."""

from __future__ import annotations

import codecs
import difflib
import re
from collections.abc import Callable

from dagster_sparkmesh.model.seed_settings import CsvSettings, canonical_csv_settings
from dagster_sparkmesh.project.sql.header_values import Value

_SETTING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*:?=\s*")
_COLUMN_MARKERS = re.compile(r"""(`[^`]*`|"[^"]*"|[A-Za-z_][A-Za-z0-9_]*)\s*:?=\s*""")
# SQLMesh reads '\t' (a backslash and a t in most dialects' strings) as the character it names.
_ESCAPED_CHARACTERS = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\", "\\0": "\0", "\\f": "\f", "\\v": "\v"}


def read_csv_settings(value: Value) -> dict[str, CsvSettings | None]:
    """The ``csv_settings`` kind property's field."""
    written: dict[str, object] = {}
    for item in value.items():
        match = _SETTING.match(item.text)
        if not match:
            raise item.error(f"malformed csv setting {item.text!r}", "write csv_settings (delimiter = ';', ...)")
        key = match.group(1).lower()
        if key not in _READERS:
            close = difflib.get_close_matches(key, list(_READERS), n=1)
            hint = f"did you mean {close[0]}?" if close else f"csv_settings are: {', '.join(_READERS)}"
            raise item.error(f"unknown csv setting {match.group(1)!r}", hint)
        written.update(_READERS[key](item.sub(match.end(), len(item.text))))
    return {"csv_settings": canonical_csv_settings(written)}


def _text(value: Value) -> str:
    text = value.scalar()
    return _ESCAPED_CHARACTERS.get(text, text)


def _one_character(name: str, example: str) -> Callable[[Value], dict[str, object]]:
    def read(value: Value) -> dict[str, object]:
        character = _text(value)
        if len(character) != 1:
            # pandas would read a longer delimiter as a regular expression, with another parser: not done here.
            raise value.error(f"{name} must be one character, not {character!r}", f"write {name} = {example}")
        return {name: character}
    return read


def _boolean(name: str) -> Callable[[Value], dict[str, object]]:
    return lambda value: {name: value.boolean()}


def _encoding(value: Value) -> dict[str, object]:
    name = _text(value)
    try:
        return {"encoding": codecs.lookup(name).name}
    except LookupError:
        raise value.error(f"unknown encoding {name!r}", "use a Python codec name: 'utf-8', 'latin-1', 'cp1252'...") from None


def _na_values(value: Value) -> dict[str, object]:
    """``['-', 'n.a.']`` (every column) or ``(col := ['-'], other := ['x'])`` (those columns only)."""
    items = value.items()
    if items and _COLUMN_MARKERS.match(items[0].text):
        pairs = []
        for item in items:
            match = _COLUMN_MARKERS.match(item.text)
            if not match:
                raise item.error(f"malformed na_values entry {item.text!r}", "write na_values (column := ['-'], ...)")
            column = match.group(1).strip('`"')
            pairs.append((column, _markers(item.sub(match.end(), len(item.text)))))
        return {"column_na_values": tuple(pairs)}
    markers = _markers(value)
    return {"na_values": markers or None}


def _markers(value: Value) -> tuple[str, ...]:
    markers = []
    for item in value.items():
        if item.text[:1] not in ("'", '"'):
            # pandas also matches a number's other spellings (0 marks '0.0'): only text markers are read.
            raise item.error(f"na_values marker {item.text} is not quoted text", f"write it as text: '{item.text}'")
        markers.append(item.scalar())
    return tuple(markers)


_READERS: dict[str, Callable[[Value], dict[str, object]]] = {
    "delimiter": _one_character("delimiter", "';'"),
    "quotechar": _one_character("quotechar", "''''"),
    "doublequote": _boolean("doublequote"),
    "escapechar": _one_character("escapechar", "'\\\\'"),
    "skipinitialspace": _boolean("skipinitialspace"),
    "lineterminator": _one_character("lineterminator", "'|'"),
    "encoding": _encoding,
    "na_values": _na_values,
    "keep_default_na": _boolean("keep_default_na"),
}
