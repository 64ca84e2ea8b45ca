"""Which part of a match a regular-expression extraction returns, as the model's dialect returns it (part of
``dialect_functions``).

BigQuery's ``REGEXP_EXTRACT(s, pattern)`` (and ``REGEXP_SUBSTR``) returns the whole match when the pattern has no
capturing group, the group's text when it has one; Redshift's ``REGEXP_SUBSTR(s, pattern)`` returns the whole match
always. sqlglot writes both as Spark's ``REGEXP_EXTRACT(s, pattern)``, whose group defaults to 1: without a group in
the pattern Spark stops the backfill (``REGEX_GROUP_INDEX``), and with one Redshift's whole match became the group.
The whole match is Spark's group 0, written where the dialect means it. A pattern that is not a literal is left as
sqlglot writes it.
"""

from __future__ import annotations

from sqlglot import exp

_WHOLE_MATCH_ALWAYS = frozenset({"redshift"})
_WHOLE_MATCH_WITHOUT_GROUP = frozenset({"bigquery"})


def extracted_group(node: exp.RegexpExtract, dialect: str) -> exp.Expression:
    """``node`` with group 0 where the dialect returns the whole match; ``node`` itself otherwise."""
    if node.args.get("group") is not None or dialect not in _WHOLE_MATCH_ALWAYS | _WHOLE_MATCH_WITHOUT_GROUP:
        return node
    pattern = node.expression
    if not isinstance(pattern, exp.RawString) and not (isinstance(pattern, exp.Literal) and pattern.is_string):
        return node
    if dialect in _WHOLE_MATCH_WITHOUT_GROUP and has_capturing_group(pattern.name):
        return node
    whole = node.copy()
    whole.set("group", exp.Literal.number(0))
    return whole


def has_capturing_group(pattern: str) -> bool:
    """Whether the regular expression (RE2's syntax) has a capturing group: a ``(`` that is not escaped, not in a
    character class, and not ``(?`` unless it names the group (``(?P<name>``, ``(?<name>``)."""
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        index += 1
        if char == "\\":
            index += 1  # an escaped character
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1 if pattern.startswith("^", index) else 0
            index += 1 if pattern.startswith("]", index) else 0  # a ] first in a class is one of its characters
        elif char == "(" and _captures(pattern[index - 1:index + 3]):
            return True
    return False


def _captures(opening: str) -> bool:
    """Whether the group ``opening`` starts (its first characters) captures: plain, or named."""
    if not opening.startswith("(?"):
        return True
    return opening.startswith(("(?P<", "(?<")) and not opening.startswith(("(?<=", "(?<!"))
