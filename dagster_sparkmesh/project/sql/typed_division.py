"""Integer division as the model's dialect divides.

PostgreSQL, Trino, Redshift, T-SQL, SQLite ... divide two integers into an integer (rounded toward zero): ``7 / 2``
is 3, where Spark's ``/`` gives 3.5. sqlglot writes such a division for Spark as ``CAST(a / b AS BIGINT)`` (a cast
that truncates, as those dialects do) only when it knows both operands are integers, and that needs the columns of
the tables the query reads: it is how SQLMesh renders such a model for Spark.

A model's query is parsed before its parents are loaded, so each division of such a dialect becomes a numbered
marker, ``SPARKMESH_TYPED_DIVISION_1(a, b)`` (``marked_divisions``). Once every model is loaded the loader resolves the
markers of each query with the column types of what it reads, parents first (``resolved_divisions``): a division
of two integers becomes the cast, any other one, or one whose operand types are unknown, Spark's ``/`` as before.
The markers are replaced in the query's text, so the rest of the text (macros waiting for an interval) is kept as
it was written; no marker outlives the load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from dagster_sparkmesh.model.records import ExternalModel, Model, UnitTest

MARKER = "SPARKMESH_TYPED_DIVISION_"
_NUMBERED = re.compile(MARKER + r"(\d+)\(")
_QUOTES = "'\"`"


def marked_divisions(query: exp.Expression, dialect: str) -> exp.Expression:
    """``query`` with each division of a dialect that divides integers into integers replaced by the marker."""
    if not Dialect.get_or_raise(dialect).TYPED_DIVISION:
        return query
    # Children first: a marker replacing a division holds the markers of the divisions inside it.
    divisions = [node for node in query.find_all(exp.Div, bfs=False) if node.args.get("typed")]
    for number, division in enumerate(reversed(divisions)):
        marker = exp.Anonymous(this=f"{MARKER}{number}", expressions=[division.this, division.expression])
        if division is query:
            return marker
        division.replace(marker)
    return query


def has_markers(text: str | None) -> bool:
    return bool(text) and MARKER in text  # type: ignore[operator]


def resolved_divisions(text: str, schema: MappingSchema) -> str:
    """``text`` (canonical Spark SQL holding markers) with each marker written as the division it is, given the
    columns of the tables the query reads in ``schema``."""
    return _rewritten(text, _integer_divisions(text, schema))


def _integer_divisions(text: str, schema: MappingSchema) -> set[int]:
    """The numbers of the markers whose operands are both integers (none where the query cannot be typed)."""
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except SqlglotError:
        return set()
    markers = [node for node in tree.find_all(exp.Anonymous, bfs=False) if node.name.upper().startswith(MARKER)]
    for marker in reversed(markers):  # children first, as they were marked
        if marker is tree or len(marker.expressions) != 2:
            return set()
        division = exp.Div(this=marker.expressions[0], expression=marker.expressions[1], typed=True)
        division.meta[MARKER] = int(marker.name[len(MARKER):])
        marker.replace(division)
    try:
        typed = annotate_types(qualify(tree, schema=schema, dialect="spark", validate_qualify_columns=False),
                               schema=schema, dialect="spark")
    except (SqlglotError, KeyError, ValueError):
        return set()
    return {node.meta[MARKER] for node in typed.find_all(exp.Div) if MARKER in node.meta and _both_integers(node)}


def _both_integers(division: exp.Div) -> bool:
    return all(operand.is_type(*exp.DataType.INTEGER_TYPES) for operand in (division.this, division.expression))


def _rewritten(text: str, integers: set[int]) -> str:
    """The markers of ``text`` written out: a division of two integers as the cast, any other as Spark's ``/``."""
    out: list[str] = []
    position = 0
    while (found := _next_marker(text, position)) is not None:
        start, number = found
        out.append(text[position:start])
        left, right, end = _operands(text, text.index("(", start))
        division = f"{_rewritten(left, integers)} / {_rewritten(right, integers)}"
        out.append(f"CAST({division} AS BIGINT)" if number in integers else division)
        position = end
    out.append(text[position:])
    return "".join(out)


def _next_marker(text: str, position: int) -> tuple[int, int] | None:
    """Where the next marker outside quotes starts, and its number."""
    index = position
    while index < len(text):
        if text[index] in _QUOTES:
            index = _after_quoted(text, index)
            continue
        found = _NUMBERED.match(text, index)
        if found:
            return index, int(found.group(1))
        index += 1
    return None


def _operands(text: str, opening: int) -> tuple[str, str, int]:
    """The two operands of the marker call whose ``(`` is at ``opening``, and the index after its ``)``."""
    depth, index, comma = 0, opening, None
    while index < len(text):
        char = text[index]
        if char in _QUOTES:
            index = _after_quoted(text, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
        elif char == "," and depth == 1 and comma is None:
            comma = index
        index += 1
    if comma is None or depth != 0:
        raise ValueError(f"a malformed {MARKER} call in: {text}")
    return text[opening + 1:comma].strip(), text[comma + 1:index].strip(), index + 1


def _after_quoted(text: str, start: int) -> int:
    """The index after the quoted string or identifier that starts at ``start`` (Spark escapes with a backslash;
    a backquoted identifier doubles its backquote)."""
    quote, index = text[start], start + 1
    while index < len(text):
        if text[index] == "\\" and quote != "`":
            index += 2
            continue
        if text[index] == quote:
            if quote == "`" and text.startswith("``", index):
                index += 2
                continue
            return index + 1
        index += 1
    return index


def with_typed_divisions(models: Mapping[str, Model], externals: Mapping[str, ExternalModel]) -> dict[str, Model]:
    """``models`` (parents before children) with the markers of their queries resolved, in one pass in that order:
    the columns of the models a marked query reads (declared, or derived from their resolved queries) are known
    before it, so a column that is an integer division is typed BIGINT for its children."""
    from dagster_sparkmesh.project.column_schema import KnownColumns, rewritten_parents_first  # they read this

    def resolved(model: Model, known: KnownColumns) -> Model:
        return model.model_copy(update={"query": resolved_divisions(model.query or "", known.schema)})

    marked = {name for name, model in models.items() if has_markers(model.query)}
    return rewritten_parents_first(models, externals, marked, resolved)


def with_resolved_test_queries(
    tests: tuple[UnitTest, ...], models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> tuple[UnitTest, ...]:
    """Unit tests whose model was read again with the test's own variables (``model_query``), its markers resolved
    with the columns of what the model reads."""
    from dagster_sparkmesh.project.column_schema import KnownColumns, ModelColumns  # they read what this writes

    columns: ModelColumns | None = None  # derived only when a test's query is marked
    resolved = []
    for test in tests:
        model = models.get(test.model)
        if model is not None and has_markers(test.model_query):
            columns = columns or ModelColumns(models, externals, final=True)
            known = KnownColumns()
            for parent in sorted(model.depends_on - {model.name}):
                types = columns.types(parent)
                if types:
                    known.add(parent, tuple((column, type_.sql("spark")) for column, type_ in types.items()))
            test = test.model_copy(update={"model_query": resolved_divisions(test.model_query or "", known.schema)})
        resolved.append(test)
    return tuple(resolved)
