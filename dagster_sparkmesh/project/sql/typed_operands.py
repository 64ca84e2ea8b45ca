"""Operations whose Spark SQL depends on their operands' types, which only the tables a query reads tell.

- **Integer division.** PostgreSQL, Trino, Redshift, T-SQL, SQLite ... divide two integers into an integer (rounded
  toward zero): ``7 / 2`` is 3, where Spark's ``/`` gives 3.5. sqlglot writes such a division for Spark as
  ``CAST(a / b AS BIGINT)`` (a cast that truncates, as those dialects do) only when it knows both operands are
  integers, and that needs the columns of the tables the query reads: it is how SQLMesh renders such a model for
  Spark.
- **DuckDB's ROUND of a DOUBLE column.** ``ROUND(x, n)`` of a DOUBLE rounds the double ``x * 10^n`` in DuckDB, where
  Spark rounds the shortest decimal spelling of ``x`` (``duckdb_doubles`` says more, and rewrites the ROUND of what
  is a DOUBLE by its spelling); a ROUND of a column whose type only the tables tell is marked here.
- **A date minus a date.** In PostgreSQL, DuckDB, Redshift and Snowflake ``d - d2`` of two DATEs is a whole number
  of days; in Spark an interval (``d - d2 > 30`` fails there). ``dialect_functions`` writes ``DATEDIFF`` where both
  sides are dates by their spelling, and marks a subtraction of columns.
- **DuckDB's EPOCH_MS of a column**: the milliseconds since 1970 of a timestamp or a date, the timestamp of a number
  of milliseconds (``duckdb_functions`` writes the first where the argument is a moment by its spelling).
- **DuckDB's TIMEZONE(zone, ts) of a column**: the instant of a naive wall clock in ``zone`` (a TIMESTAMP there,
  Spark's TIMESTAMP_NTZ), the wall clock in ``zone`` of an instant (a TIMESTAMPTZ there, Spark's TIMESTAMP).

A model's query is parsed before its parents are loaded, so each such operation becomes a numbered marker,
``SPARKMESH_TYPED_DIVISION_1(a, b)``, ``SPARKMESH_TYPED_ROUND_2(x, n)``, ``SPARKMESH_TYPED_DAYS_3(d, d2)``,
``SPARKMESH_TYPED_MILLIS_4(ts, 3)``, ``SPARKMESH_TYPED_ZONE_5(ts, zone)`` (``marked_operands``). Once every model is
loaded the loader resolves the markers of each query with the column types of what it reads, parents first
(``resolved_operands``): a division of two integers becomes the cast, a ROUND of a DOUBLE DuckDB's rounding, a
subtraction of two DATEs ``DATEDIFF``, the EPOCH_MS of a moment its milliseconds, a TIMEZONE ``TO_UTC_TIMESTAMP`` or
``CONVERT_TIMEZONE``; any other one, or one whose operand types are unknown, is written as Spark's ``/``, ``ROUND``,
``-``, ``TIMESTAMP_MILLIS`` or DuckDB's ``TIMEZONE`` as before. The markers are replaced in the query's text, so
the rest of the text (macros waiting for an interval) is kept as it was written; no marker outlives the load. A
division or subtraction whose operands' types are unknown may give another value than the dialect's (3.5 for
7 / 2), so the load warns of it, and the plan shows the warning (``with_typed_operands``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from dagster_sparkmesh.model.records import ExternalModel, Model, UnitTest
from dagster_sparkmesh.project.sql.duckdb_doubles import ROUND_MARKER, is_double, rounded_double

MARKER = "SPARKMESH_TYPED_"
_DIVISION, _ROUND, _DAYS, _MILLIS, _ZONE = "DIVISION", "ROUND", "DAYS", "MILLIS", "ZONE"
assert ROUND_MARKER == f"{MARKER}{_ROUND}"  # numbered here with the divisions
DAYS_MARKER = f"{MARKER}{_DAYS}"
MILLIS_MARKER = f"{MARKER}{_MILLIS}"
ZONE_MARKER = f"{MARKER}{_ZONE}"
_UNNUMBERED = (ROUND_MARKER, DAYS_MARKER, MILLIS_MARKER, ZONE_MARKER)
_NUMBERED = re.compile(MARKER + r"(DIVISION|ROUND|DAYS|MILLIS|ZONE)_(\d+)\(")
_NAIVE, _ZONED = "naive", "zoned"  # how a TIMEZONE marker is written, by its moment's type
_TIMESTAMPS = (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.TIMESTAMPLTZ,
               exp.DataType.Type.TIMESTAMPTZ)
_MOMENTS = (exp.DataType.Type.DATE, *_TIMESTAMPS)
_QUOTES = "'\"`"
_VALUE = "SPARKMESH_ROUNDED_VALUE"
_UNKNOWN_TYPES = {exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL}


def marked_operands(query: exp.Expression, dialect: str) -> exp.Expression:
    """``query`` with each division of a dialect that divides integers into integers replaced by a marker, and each
    ROUND marker (``duckdb_doubles``) numbered."""
    typed_division = Dialect.get_or_raise(dialect).TYPED_DIVISION
    # Children first: a marker replacing an operation holds the markers of the operations inside it.
    found = [node for node in query.find_all(exp.Div, exp.Anonymous, bfs=False)
             if (typed_division and isinstance(node, exp.Div) and node.args.get("typed"))
             or (isinstance(node, exp.Anonymous) and node.name in _UNNUMBERED)]
    for number, node in enumerate(reversed(found)):
        if isinstance(node, exp.Anonymous):
            node.set("this", f"{node.name}_{number}")
            continue
        marker = exp.Anonymous(this=f"{MARKER}{_DIVISION}_{number}", expressions=[node.this, node.expression])
        if node is query:
            return marker
        node.replace(marker)
    return query


def unmarked(statement: exp.Expression) -> exp.Expression:
    """``statement`` with the markers of operations (not numbered yet) written as Spark writes them: a statement
    that is not a model's query is not typed by the loader."""
    for node in list(statement.find_all(exp.Anonymous)):
        if node.name in _UNNUMBERED:
            plain = _operation(node.name[len(MARKER):], *node.expressions)
            if node is statement:
                return plain
            node.replace(plain)
    return statement


def has_markers(text: str | None) -> bool:
    return bool(text) and MARKER in text  # type: ignore[operator]


def resolved_operands(text: str, schema: MappingSchema) -> str:
    """``text`` (canonical Spark SQL holding markers) with each marker written as the operation it is, given the
    columns of the tables the query reads in ``schema``."""
    return resolved_noting_unknowns(text, schema).text


@dataclass(frozen=True)
class ResolvedOperands:
    text: str
    """The query with every marker written out."""
    untyped_divisions: tuple[str, ...]
    """The divisions written as Spark's because their operands' types are unknown (as written), where the
    dialect divides two integers into an integer."""
    untyped_days: tuple[str, ...]
    """The same for date subtractions, a number of days in the dialect."""

    @property
    def untyped(self) -> bool:
        return bool(self.untyped_divisions or self.untyped_days)


def resolved_noting_unknowns(text: str, schema: MappingSchema) -> ResolvedOperands:
    chosen, unknown = _typed_as_marked(text, schema)
    untyped: list[tuple[str, str]] = []
    written = _rewritten(text, chosen, unknown, untyped)
    return ResolvedOperands(text=written, untyped_divisions=tuple(sql for kind, sql in untyped if kind == _DIVISION),
                            untyped_days=tuple(sql for kind, sql in untyped if kind == _DAYS))


def _typed_as_marked(text: str, schema: MappingSchema) -> tuple[dict[int, str], set[int]]:
    """The numbers of the markers whose operands have the types their rewrite is for: both integers (a division), a
    DOUBLE (a ROUND), both DATEs (a subtraction), a moment (EPOCH_MS, TIMEZONE: which one); and of the divisions and
    subtractions whose operands' types are unknown (every one where the query cannot be typed)."""
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except SqlglotError:
        return {}, _all_numbers(text)
    markers = [node for node in tree.find_all(exp.Anonymous, bfs=False) if _NUMBERED.match(f"{node.name}(")]
    for marker in reversed(markers):  # children first, as they were marked
        if marker is tree or len(marker.expressions) != 2:
            return {}, _all_numbers(text)
        kind, number = _NUMBERED.match(f"{marker.name}(").groups()
        left, right = marker.expressions
        operation = _operation(kind, left, right)
        operation.meta[MARKER] = int(number)
        marker.replace(operation)
    typed = _annotated(tree, schema)
    if typed is None:
        return {}, _all_numbers(text)
    unknown = {node.meta[MARKER] for node in typed.find_all(exp.Div, exp.Sub) if MARKER in node.meta and _untyped(node)}
    days = [node for node in typed.find_all(exp.Sub) if MARKER in node.meta and _as_marked(node)]
    if days:  # a number of days is an integer for what holds it (PostgreSQL's ``(d - d2) / 7`` divides integers)
        for node in days:
            counted = exp.DateDiff(this=node.this.copy(), expression=node.expression.copy(), unit=exp.var("DAY"))
            counted.meta[MARKER] = node.meta[MARKER]
            node.replace(counted)
        typed = _annotated(typed, schema)
        if typed is None:
            return {}, _all_numbers(text)
    operations = typed.find_all(exp.Div, exp.Round, exp.DateDiff, exp.UnixToTime, exp.Anonymous)
    chosen = {node.meta[MARKER]: _zone_variant(node) for node in operations
              if MARKER in node.meta and (isinstance(node, exp.DateDiff) or _as_marked(node))}
    return chosen, unknown - chosen.keys()


def _all_numbers(text: str) -> set[int]:
    """The divisions and subtractions of ``text``."""
    return {int(found.group(2)) for found in _NUMBERED.finditer(text) if found.group(1) in (_DIVISION, _DAYS)}


def _untyped(operation: exp.Div | exp.Sub) -> bool:
    """Whether the operation's value in the dialect depends on an operand type nobody knows: none of its operands
    has a known type that decides it (a fraction divides as a fraction; a number is not a date), one is unknown."""
    wanted = (exp.DataType.Type.DATE,) if isinstance(operation, exp.Sub) else tuple(exp.DataType.INTEGER_TYPES)
    types = [operand.type for operand in (operation.this, operation.expression)]
    unknown = [t is None or t.this in _UNKNOWN_TYPES for t in types]
    deciding = any(not gone and not t.is_type(*wanted) for t, gone in zip(types, unknown))
    return any(unknown) and not deciding


def _zone_variant(operation: exp.Expression) -> str:
    if not isinstance(operation, exp.Anonymous):
        return ""
    return _NAIVE if operation.expressions[1].is_type(exp.DataType.Type.TIMESTAMPNTZ) else _ZONED


def _annotated(tree: exp.Expression, schema: MappingSchema) -> exp.Expression | None:
    try:
        return annotate_types(qualify(tree, schema=schema, dialect="spark", validate_qualify_columns=False),
                              schema=schema, dialect="spark")
    except (SqlglotError, KeyError, ValueError):
        return None


def _operation(kind: str, left: exp.Expression, right: exp.Expression) -> exp.Expression:
    if kind == _DIVISION:
        return exp.Div(this=left, expression=right, typed=True)
    if kind == _ROUND:
        return exp.Round(this=left, decimals=right)
    if kind == _MILLIS:
        return exp.UnixToTime(this=left, scale=right)
    if kind == _ZONE:  # (the marker holds the moment first)
        return exp.Anonymous(this="TIMEZONE", expressions=[right, left])
    return exp.Sub(this=left, expression=right)


def _as_marked(operation: exp.Expression) -> bool:
    if isinstance(operation, exp.Anonymous):  # DuckDB's TIMEZONE of a naive or a zoned timestamp
        return operation.expressions[1].is_type(*_TIMESTAMPS)
    if isinstance(operation, exp.UnixToTime):  # DuckDB's EPOCH_MS of a moment
        return operation.this.is_type(*_MOMENTS)
    if isinstance(operation, exp.Round):  # (sqlglot types any ROUND a DOUBLE: DuckDB's spelling rules decide)
        return is_double(operation.this)
    if isinstance(operation, exp.Sub):
        return all(operand.is_type(exp.DataType.Type.DATE) for operand in (operation.this, operation.expression))
    return all(operand.is_type(*exp.DataType.INTEGER_TYPES) for operand in (operation.this, operation.expression))


def _rewritten(text: str, chosen: Mapping[int, str], unknown: set[int], untyped: list[tuple[str, str]]) -> str:
    """The markers of ``text`` written out: a division of two integers as the cast, a ROUND of a DOUBLE as DuckDB
    rounds, ... (``chosen``: the numbers of those whose operands have their types), any other as before; those of
    ``unknown`` also added to ``untyped``."""
    out: list[str] = []
    position = 0
    while (found := _next_marker(text, position)) is not None:
        start, kind, number = found
        out.append(text[position:start])
        left, right, end = _operands(text, text.index("(", start))
        left, right = _rewritten(left, chosen, unknown, untyped), _rewritten(right, chosen, unknown, untyped)
        out.append(_written(kind, left, right, chosen.get(number)))
        if number in unknown:
            untyped.append((kind, out[-1]))
        position = end
    out.append(text[position:])
    return "".join(out)


def _written(kind: str, left: str, right: str, variant: str | None) -> str:
    """The marker's operation as its operands' types make it (``variant``; None where the types are not its)."""
    as_marked = variant is not None
    if kind == _ZONE:
        if variant == _NAIVE:
            return f"TO_UTC_TIMESTAMP({left}, {right})"
        return f"CONVERT_TIMEZONE({right}, {left})" if as_marked else f"TIMEZONE({right}, {left})"
    if kind == _DIVISION:
        return f"CAST({left} / {right} AS BIGINT)" if as_marked else f"{left} / {right}"
    if kind == _DAYS:
        return f"DATEDIFF({left}, {right})" if as_marked else f"{left} - {right}"
    if kind == _MILLIS:  # (DIV truncates toward zero, as DuckDB does; UNIX_MILLIS floors)
        return f"(UNIX_MICROS(CAST({left} AS TIMESTAMP)) DIV 1000)" if as_marked else f"TIMESTAMP_MILLIS({left})"
    if not as_marked:
        return f"ROUND({left}, {right})"
    # The value is text (it may hold macros waiting for an interval): the formula is written around a stand-in.
    return rounded_double(exp.column(_VALUE), int(right)).sql(dialect="spark").replace(_VALUE, f"({left})")


def _next_marker(text: str, position: int) -> tuple[int, str, int] | None:
    """Where the next marker outside quotes starts, its kind and its number."""
    index = position
    while index < len(text):
        if text[index] in _QUOTES:
            index = _after_quoted(text, index)
            continue
        found = _NUMBERED.match(text, index)
        if found:
            return index, found.group(1), int(found.group(2))
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


def with_typed_operands(
    models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> tuple[dict[str, Model], tuple[str, ...]]:
    """``models`` (parents before children) with the markers of their queries resolved, in one pass in that order:
    the columns of the models a marked query reads (declared, or derived from their resolved queries) are known
    before it, so a column that is an integer division is typed BIGINT for its children, a rounded DOUBLE DOUBLE.
    Also a warning for each model with an operation left as Spark's because its operands' types are unknown."""
    from dagster_sparkmesh.project.column_schema import KnownColumns, rewritten_parents_first  # they read this

    warnings: list[str] = []

    def resolved(model: Model, known: KnownColumns) -> Model:
        written = resolved_noting_unknowns(model.query or "", known.schema)
        if written.untyped:
            warnings.append(_untyped_warning(model, written))
        return model.model_copy(update={"query": written.text})

    marked = {name for name, model in models.items() if has_markers(model.query)}
    return rewritten_parents_first(models, externals, marked, resolved), tuple(warnings)


def _untyped_warning(model: Model, written: ResolvedOperands) -> str:
    """What the model computes otherwise than its dialect may, and what to do."""
    found = [*written.untyped_divisions, *written.untyped_days]
    shown = ", ".join(f"`{operation}`" for operation in found[:3]) + (" ..." if len(found) > 3 else "")
    meaning = [*(["divides two integers into an integer (7 / 2 is 3; in Spark 3.5)"] if written.untyped_divisions else []),
               *(["counts the days between two dates (in Spark an interval)"] if written.untyped_days else [])]
    return (f"{model.path.name}: {model.name} computes {shown} as Spark does, because the types of the columns it "
            f"reads are unknown, where {model.dialect} {' and '.join(meaning)}: declare the columns of the tables it "
            "reads (external_models.yaml, or `columns` in the model that makes them), or cast the operands")


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
            test = test.model_copy(update={"model_query": resolved_operands(test.model_query or "", known.schema)})
        resolved.append(test)
    return tuple(resolved)
