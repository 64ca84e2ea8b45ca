"""A date or time written as text with a template, PostgreSQL's ``to_char(d, 'Mon DD, YYYY')`` and Snowflake's
``TO_CHAR(d, 'YYYY-MM-DD')`` / ``TO_VARCHAR``, as Spark's ``DATE_FORMAT`` with its pattern letters.

sqlglot reads PostgreSQL's template into its own letters and loses the name patterns (``Day`` became ``'%uay'``, and
Spark refused ``Mon``); it refuses Snowflake's template when writing Spark SQL. Each template is read here element by
element; an element Spark's pattern letters cannot write is computed (``D``, ``IW``, upper- or lower-case names, the
blank-padding of names); an element this does not cover refuses the model at load, with the elements it does cover.

PostgreSQL (checked on PostgreSQL 15): ``YYYY YY MM DD DDD D HH24 HH12 HH MI SS MS US Q IW AM PM am pm``; the names
``Month MONTH month Day DAY day`` (blank-padded to 9 characters, as PostgreSQL pads them unless ``FM`` or ``TM`` is
given: 'May      ') and ``Mon MON mon Dy DY dy``; ``FM`` before a number drops its leading zeros (``FMDD``: '7'), ``TM``
does not ('07'); text in double quotes, and characters that are not letters, are written as they are. ``SSSS``
(seconds past midnight) is refused rather than read as ``SS`` twice, as is a digit 0 or 9 (a number's template).

Snowflake (from its documentation, "Date and time formats in conversion functions": it cannot run here): the
numeric elements ``YYYY YY MM DD HH24 HH12 MI SS`` and ``FF1`` ... ``FF9`` (a fraction of a second in that many
digits), in any letter case, and text in double quotes. Month and day names (``MON``, ``MMMM``, ``DY``) are refused:
the letter case Snowflake writes them in is not documented.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

from dagster_sparkmesh.project.sql.refused_functions import refused

_PLAIN_SEPARATORS = frozenset(" -/:,.;()_+")
"""Characters Spark's date patterns write as they are (letters, quotes and brackets must be quoted)."""
_NAME_WIDTH = 9  # PostgreSQL pads month and day names to the longest English name (September, Wednesday)


@dataclass(frozen=True)
class _Element:
    """How one template element is written: Spark pattern letters (``letters``, ``fill_letters`` under FM), or
    a computed text (``computed``, given the moment)."""

    letters: str | None = None
    fill_letters: str | None = None
    computed: str | None = None  # a key of _COMPUTED
    case: str = ""  # "upper" / "lower": the name in that case
    padded: bool = False  # a name PostgreSQL pads to 9 characters unless FM or TM


_POSTGRES_NUMBERS = {
    "YYYY": _Element("yyyy", "y"), "YY": _Element("yy"), "MM": _Element("MM", "M"), "DDD": _Element("DDD", "D"),
    "DD": _Element("dd", "d"), "D": _Element(computed="day_of_week"), "HH24": _Element("HH", "H"),
    "HH12": _Element("hh", "h"), "HH": _Element("hh", "h"), "MI": _Element("mm", "m"), "SS": _Element("ss", "s"),
    "MS": _Element("SSS"), "US": _Element("SSSSSS"), "Q": _Element("Q", "Q"), "IW": _Element(computed="iso_week"),
}
"""PostgreSQL's numeric elements, in either letter case."""
_POSTGRES_WORDS = {
    "AM": _Element("a", "a"), "PM": _Element("a", "a"), "am": _Element("a", "a", case="lower"),
    "pm": _Element("a", "a", case="lower"),
    "Month": _Element("MMMM", "MMMM", padded=True), "MONTH": _Element("MMMM", "MMMM", case="upper", padded=True),
    "month": _Element("MMMM", "MMMM", case="lower", padded=True),
    "Mon": _Element("MMM", "MMM"), "MON": _Element("MMM", "MMM", case="upper"),
    "mon": _Element("MMM", "MMM", case="lower"),
    "Day": _Element("EEEE", "EEEE", padded=True), "DAY": _Element("EEEE", "EEEE", case="upper", padded=True),
    "day": _Element("EEEE", "EEEE", case="lower", padded=True),
    "Dy": _Element("EEE", "EEE"), "DY": _Element("EEE", "EEE", case="upper"),
    "dy": _Element("EEE", "EEE", case="lower"),
}
"""PostgreSQL's words, whose letter case is the case of the text written."""
_SNOWFLAKE_NUMBERS = {
    "YYYY": _Element("yyyy"), "YY": _Element("yy"), "MM": _Element("MM"), "DD": _Element("dd"),
    "HH24": _Element("HH"), "HH12": _Element("hh"), "MI": _Element("mm"), "SS": _Element("ss"),
    **{f"FF{digits}": _Element("S" * digits) for digits in range(1, 10)},
}

_POSTGRES_HINT = (
    "write the template with YYYY, YY, MM, DD, DDD, D, HH24, HH12, MI, SS, MS, US, Q, IW, AM / PM, Month, Mon, Day, "
    "Dy (FM before one to drop its padding) and text in double quotes; a number is written as text with CAST or ROUND"
)
_SNOWFLAKE_HINT = (
    "write the format with YYYY, YY, MM, DD, HH24, HH12, MI, SS, FF1-FF9 and text in double quotes; month and day "
    "names with MONTHNAME(d) / DAYNAME(d) concatenated; a number with CAST or ROUND"
)


class _Text(str):
    """Text written as it is (quoted in Spark's pattern unless plain separators)."""


class _Unsupported(Exception):
    """An element of the template this translation does not cover."""


def postgres_to_char(node: exp.TimeToStr) -> exp.Expression:
    """PostgreSQL's ``to_char(moment, template)`` (read by sqlglot as ``TimeToStr``) as Spark SQL, or refused."""
    if not isinstance(node.args.get("format"), exp.Literal):
        return node
    # sqlglot turned the template into its own letters on reading; its PostgreSQL writer turns them back.
    template = sqlglot.parse_one(Postgres().generator().format_time(node), read="postgres").name
    try:
        pieces = _postgres_pieces(template, node.this)
    except _Unsupported as error:
        return refused(node, f"PostgreSQL's to_char template '{template}' has {error}, which Spark cannot write",
                       _POSTGRES_HINT)
    return _written(pieces, node.this) or node


def snowflake_to_char(node: exp.ToChar) -> exp.Expression:
    """Snowflake's ``TO_CHAR(moment, format)`` of a date or time as Spark SQL, or refused."""
    template = node.args.get("format")
    if not (isinstance(template, exp.Literal) and template.is_string):
        return node
    try:
        pieces = _snowflake_pieces(template.name, node.this)
    except _Unsupported as error:
        return refused(node, f"Snowflake's TO_CHAR format '{template.name}' has {error}, which Spark cannot write",
                       _SNOWFLAKE_HINT)
    return _written(pieces, node.this) or node


def _postgres_pieces(template: str, moment: exp.Expression) -> list[str | exp.Expression]:
    """The template's elements: Spark pattern letters, _Text, or computed texts."""
    pieces: list[str | exp.Expression] = []
    index = 0
    while index < len(template):
        prefix = template[index:index + 2].upper()
        start = index + 2 if prefix in ("FM", "TM") else index
        name, element = _postgres_element(template, start)
        if element is not None:
            # FM drops a number's leading zeros and a name's padding; TM (translated names) drops the padding only.
            pieces.append(_piece(element, moment, fill=prefix == "FM", unpadded=prefix in ("FM", "TM")))
            index = start + len(name)
        elif template[index] == '"':
            text, index = _quoted_text(template, index)
            pieces.append(_Text(text))
        elif template[index].isalpha():
            raise _Unsupported(f"'{template[index:index + 4]}...'" if len(template) > index + 4 else
                               f"'{template[index:]}'")
        elif template[index] in "09":  # to_char(number, '999D99') is read by sqlglot as a date's
            raise _Unsupported(f"'{template[index]}', a digit of a number's template")
        else:
            pieces.append(_Text(template[index]))
            index += 1
    if all(isinstance(piece, _Text) for piece in pieces):
        raise _Unsupported("no date or time element")
    return pieces


def _postgres_element(template: str, start: int) -> tuple[str, _Element | None]:
    """The longest element at ``start``: a word in its exact case, or a number in either case."""
    if template[start:start + 4].upper() == "SSSS":  # seconds past midnight, not SS twice
        raise _Unsupported("'SSSS'")
    found: tuple[str, _Element | None] = ("", None)
    for name, element in _POSTGRES_WORDS.items():
        if template.startswith(name, start) and len(name) > len(found[0]):
            found = (name, element)
    for name, element in _POSTGRES_NUMBERS.items():
        if template[start:start + len(name)].upper() == name and len(name) > len(found[0]):
            found = (name, element)
    return found


def _snowflake_pieces(template: str, moment: exp.Expression) -> list[str | exp.Expression]:
    """The format's elements (in any letter case, the longest first) and _Text."""
    pieces: list[str | exp.Expression] = []
    index = 0
    names = sorted(_SNOWFLAKE_NUMBERS, key=len, reverse=True)
    while index < len(template):
        if template[index:index + 4].upper() == "MMMM":  # the month's name, not MM twice
            raise _Unsupported(f"'{template[index:]}'")
        name = next((name for name in names if template[index:index + len(name)].upper() == name), None)
        if name is not None:
            pieces.append(_piece(_SNOWFLAKE_NUMBERS[name], moment, fill=False, unpadded=True))
            index += len(name)
        elif template[index] == '"':
            text, index = _quoted_text(template, index)
            pieces.append(_Text(text))
        elif template[index].isalnum():
            raise _Unsupported(f"'{template[index:]}'")
        else:
            pieces.append(_Text(template[index]))
            index += 1
    return pieces


def _quoted_text(template: str, index: int) -> tuple[str, int]:
    end = template.find('"', index + 1)
    if end < 0:
        raise _Unsupported("an unclosed double quote")
    return template[index + 1:end], end + 1


def _literal(text: str) -> str:
    if all(char in _PLAIN_SEPARATORS for char in text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _piece(element: _Element, moment: exp.Expression, fill: bool, unpadded: bool) -> str | exp.Expression:
    if element.computed is not None:
        return _COMPUTED[element.computed](moment, fill)
    letters = element.fill_letters if fill else element.letters
    if letters is None:
        raise _Unsupported(f"FM before '{element.letters}'")
    padded = element.padded and not unpadded
    if not element.case and not padded:
        return letters
    text: exp.Expression = _date_format(moment, letters)
    if element.case:
        text = exp.Upper(this=text) if element.case == "upper" else exp.Lower(this=text)
    if padded:
        text = exp.Pad(this=text, expression=exp.Literal.number(_NAME_WIDTH), fill_pattern=exp.Literal.string(" "),
                       is_left=False)
    return text


def _day_of_week(moment: exp.Expression, fill: bool) -> exp.Expression:
    """PostgreSQL's ``D``: Sunday = 1 ... Saturday = 7, as Spark's DAYOFWEEK counts."""
    return exp.Cast(this=exp.Anonymous(this="DAYOFWEEK", expressions=[moment.copy()]), to=exp.DataType.build("STRING"))


def _iso_week(moment: exp.Expression, fill: bool) -> exp.Expression:
    """PostgreSQL's ``IW``: the ISO week of the year, two digits unless FM (Spark's WEEKOFYEAR is ISO's)."""
    week = exp.Cast(this=exp.Anonymous(this="WEEKOFYEAR", expressions=[moment.copy()]), to=exp.DataType.build("STRING"))
    return week if fill else exp.Pad(this=week, expression=exp.Literal.number(2), fill_pattern=exp.Literal.string("0"),
                                     is_left=True)


_COMPUTED = {"day_of_week": _day_of_week, "iso_week": _iso_week}


def _date_format(moment: exp.Expression, pattern: str) -> exp.Expression:
    return exp.Anonymous(this="DATE_FORMAT", expressions=[moment.copy(), exp.Literal.string(pattern)])


def _written(pieces: list[str | exp.Expression], moment: exp.Expression) -> exp.Expression | None:
    """The pieces as one DATE_FORMAT, or a CONCAT of DATE_FORMATs (adjacent letters joined) and computed texts."""
    parts: list[exp.Expression] = []
    letters, text = "", ""
    for piece in pieces:
        if isinstance(piece, _Text):  # quoted as one run: Spark reads '' inside quotes as a quote
            text += piece
            continue
        letters, text = letters + (_literal(text) if text else ""), ""
        if isinstance(piece, str):
            letters += piece
            continue
        if letters:
            parts.append(_date_format(moment, letters))
            letters = ""
        parts.append(piece)
    letters += _literal(text) if text else ""
    if letters:
        parts.append(_date_format(moment, letters))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else exp.Concat(expressions=parts)
