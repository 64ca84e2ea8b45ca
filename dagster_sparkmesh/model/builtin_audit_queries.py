"""The queries of SQLMesh's built-in audits on values, patterns and statistics, written for Spark SQL.

Each builder takes the audited table and the call's parsed arguments (``get``, ``optional``, ``items``, as
``builtin_audits`` passes them) and returns a query selecting the offending rows (or one row when an aggregate
fails), with the verdict SQLMesh 0.236.4 gives on its own engine:

* regexes written by this module (``valid_uuid``, ``valid_email``, ``valid_url``) accept the strings RE2 (DuckDB's
  ``regexp_matches``) accepts with SQLMesh's patterns, in Java's syntax, which Spark's ``RLIKE`` reads: ``(?d)``
  makes ``\\n`` the only line end, ``\\z`` is the end of the text (Java's ``$`` also matches before a final line
  end), and a blank is spelled out (Java's ``\\s`` includes the vertical tab, RE2's does not). Patterns a user
  passes (``match_regex_pattern_list``) are used as written;
* the statistical audits compute what SQLMesh's queries compute: a sample standard deviation, chi-square summed
  over the observed cells only; ``kl_divergence``, whose query in SQLMesh runs on no engine, is an error.

``condition`` (every audit but ``valid_http_method``) keeps only the rows for which it holds, as SQLMesh's
``WHERE @condition``; ``z_score`` applies it to its statistics only, as SQLMesh does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError


class Arguments(Protocol):
    audit: str

    def get(self, name: str) -> exp.Expression: ...
    def optional(self, name: str) -> exp.Expression | None: ...
    def items(self, name: str) -> list[exp.Expression]: ...


Build = Callable[[exp.Expression, Any], exp.Query]


def is_false(value: exp.Expression | None) -> bool:
    """A flag argument (``inclusive``, ``dependent``) written as ``false``."""
    return value is not None and value.sql(dialect="spark").upper() == "FALSE"


def out_of_range(value: exp.Expression, args: Arguments, example: str) -> exp.Expression:
    """``value`` outside ``[min_v, max_v]`` (or the open range with ``inclusive := false``); one bound may be left out."""
    low, high = args.optional("min_v"), args.optional("max_v")
    if low is None and high is None:
        raise ProjectError(f"audit {args.audit} needs min_v or max_v", hint=f"write {example}")
    strict = is_false(args.optional("inclusive"))
    conditions: list[exp.Expression] = []
    if low is not None:
        conditions.append((exp.LTE if strict else exp.LT)(this=value.copy(), expression=low))
    if high is not None:
        conditions.append((exp.GTE if strict else exp.GT)(this=value.copy(), expression=high))
    return exp.or_(*conditions)


def with_condition(where: exp.Expression, args: Arguments) -> exp.Expression:
    condition = args.optional("condition")
    return where if condition is None else exp.and_(exp.paren(where), exp.paren(condition))


def _rows(table: exp.Expression, where: exp.Expression, args: Arguments) -> exp.Query:
    return exp.select("*").from_(table).where(with_condition(where, args))


def audited_rows(table: exp.Expression, args: Arguments, alias: str = "_sparkmesh_audited") -> exp.Expression:
    """The audited rows the ``condition`` keeps: the table itself without one."""
    condition = args.optional("condition")
    if condition is None:
        return table
    return exp.select("*").from_(table).where(condition).subquery(alias)


def _regex(column: exp.Expression, pattern: str) -> exp.Expression:
    return exp.RegexpLike(this=column, expression=exp.Literal.string(pattern))


# --- conditions on single rows -------------------------------------------------------------------------------

def _not_empty_string(table: exp.Expression, args: Arguments) -> exp.Query:
    return _rows(table, exp.EQ(this=args.get("column"), expression=exp.Literal.string("")), args)


def _string_length_equal(table: exp.Expression, args: Arguments) -> exp.Query:
    return _rows(table, exp.NEQ(this=exp.Length(this=args.get("column")), expression=args.get("v")), args)


def _string_length_between(table: exp.Expression, args: Arguments) -> exp.Query:
    length = exp.Length(this=args.get("column"))
    return _rows(table, out_of_range(length, args, "string_length_between(column := x, max_v := 10)"), args)


_HEX = "[0-9a-f]"
_UUID = f"(?d)^{_HEX}{{8}}-{_HEX}{{4}}-[1-5]{_HEX}{{3}}-[89ab]{_HEX}{{3}}-{_HEX}{{12}}\\z"
_BLANK = "\\t\\n\\f\\r "  # RE2's \s
_EMAIL = "(?d)^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[-.a-zA-Z0-9]+\\z"
_URL = f"(?d)^(https?|ftp)://[^{_BLANK}/$.?#].[^{_BLANK}]*\\z"
_HTTP_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT")


def _valid_uuid(table: exp.Expression, args: Arguments) -> exp.Query:
    return _rows(table, exp.not_(_regex(exp.Lower(this=args.get("column")), _UUID)), args)


def _valid_email(table: exp.Expression, args: Arguments) -> exp.Query:
    return _rows(table, exp.not_(_regex(args.get("column"), _EMAIL)), args)


def _valid_url(table: exp.Expression, args: Arguments) -> exp.Query:
    return _rows(table, exp.not_(_regex(args.get("column"), _URL)), args)


def _valid_http_method(table: exp.Expression, args: Arguments) -> exp.Query:
    methods = [exp.Literal.string(method) for method in _HTTP_METHODS]
    return exp.select("*").from_(table).where(exp.not_(exp.In(this=args.get("column"), expressions=methods)))


def _pattern_list(matches: Callable[[exp.Expression, exp.Expression], exp.Expression], wanted: bool) -> Build:
    """Offending: a value matching none of the patterns (``wanted``), or matching any of them."""

    def build(table: exp.Expression, args: Arguments) -> exp.Query:
        column, patterns = args.get("column"), args.items("patterns")
        if wanted:
            where = exp.and_(*(exp.not_(matches(column.copy(), pattern)) for pattern in patterns))
        else:
            where = exp.or_(*(matches(column.copy(), pattern) for pattern in patterns))
        return _rows(table, where, args)

    return build


def _regex_match(column: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    return exp.RegexpLike(this=column, expression=pattern)


def _like_match(column: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    return exp.Like(this=column, expression=pattern)


# --- aggregates and windows ----------------------------------------------------------------------------------

def _not_constant(table: exp.Expression, args: Arguments) -> exp.Query:
    distinct = exp.Count(this=exp.Distinct(expressions=[args.get("column")]))
    return (
        exp.select(exp.alias_(distinct, "distinct_values")).from_(audited_rows(table, args))
        .having(exp.LTE(this=distinct.copy(), expression=exp.Literal.number(1)))
    )


def _not_null_proportion(table: exp.Expression, args: Arguments) -> exp.Query:
    total, present = exp.Count(this=exp.Star()), exp.Count(this=args.get("column"))
    return (
        exp.select(exp.alias_(total, "row_count"), exp.alias_(present, "non_null_count")).from_(audited_rows(table, args))
        .having(exp.LTE(this=present.copy(), expression=exp.Mul(this=total.copy(), expression=args.get("threshold"))))
    )


def _sequential_values(table: exp.Expression, args: Arguments) -> exp.Query:
    # A value that is not the previous one (in ascending order) plus the interval; the first row has none.
    column = args.get("column")
    interval = args.optional("interval") or exp.Literal.number(1)
    previous = exp.Window(this=exp.Lag(this=column.copy()), order=exp.Order(expressions=[exp.Ordered(this=column.copy(), nulls_first=True)]))
    stepped = exp.select(exp.alias_(column.copy(), "value"), exp.alias_(previous, "previous_value")).from_(audited_rows(table, args))
    expected = exp.Add(this=exp.column("previous_value"), expression=interval)
    return (
        exp.select("*").from_(stepped.subquery("_sparkmesh_steps"))
        .where(exp.not_(exp.EQ(this=exp.column("value"), expression=expected)))
    )


def _mutually_exclusive_ranges(table: exp.Expression, args: Arguments) -> exp.Query:
    # Offending: a range whose lower bound is above its upper bound (or either is NULL), or that ends after the
    # next range (by lower, then upper bound) starts; the last range needs no successor.
    low, high = args.get("lower_bound_column"), args.get("upper_bound_column")
    partition = args.optional("partition_clause")
    if partition is not None and not is_false(partition):
        # SQLMesh 0.236.4 writes the value where a window's name goes (``OVER (g ORDER BY ...)``: DuckDB says window
        # "g" does not exist; ``PARTITION BY g`` is no argument it parses): the model fails there, so it does here.
        raise ProjectError(
            f"audit {args.audit} cannot take partition_clause: SQLMesh 0.236.4 writes it as a window name, which no "
            "engine runs (SQLMesh fails the model too)",
            hint="leave partition_clause out, or write a custom audit partitioning the ranges",
        )

    def ordered(descending: bool) -> exp.Order:
        return exp.Order(expressions=[exp.Ordered(this=bound.copy(), desc=descending, nulls_first=not descending) for bound in (low, high)])

    following = exp.Window(this=exp.Lead(this=low.copy()), order=ordered(False))
    is_last = exp.EQ(this=exp.Window(this=exp.RowNumber(), order=ordered(True)), expression=exp.Literal.number(1))
    bounds = exp.select(
        exp.alias_(low.copy(), "lower_bound"), exp.alias_(high.copy(), "upper_bound"),
        exp.alias_(following, "next_lower_bound"), exp.alias_(is_last, "is_last_record"),
    ).from_(audited_rows(table, args))
    ordered_bounds = exp.Coalesce(this=exp.LTE(this=exp.column("lower_bound"), expression=exp.column("upper_bound")), expressions=[exp.false()])
    before_next = exp.Coalesce(
        this=exp.LTE(this=exp.column("upper_bound"), expression=exp.column("next_lower_bound")),
        expressions=[exp.column("is_last_record"), exp.false()],
    )
    return exp.select("*").from_(bounds.subquery("_sparkmesh_ranges")).where(exp.not_(exp.and_(ordered_bounds, before_next)))


def _z_score(table: exp.Expression, args: Arguments) -> exp.Query:
    # The mean and deviation are of the rows the condition keeps, the scored rows all of the table's (as SQLMesh).
    column = args.get("column")
    stats = exp.select(
        exp.alias_(exp.Avg(this=column.copy()), "_sparkmesh_mean"), exp.alias_(exp.Stddev(this=column.copy()), "_sparkmesh_stddev")
    ).from_(audited_rows(table, args))
    score = exp.Div(
        this=exp.paren(exp.Sub(this=column.copy(), expression=exp.column("_sparkmesh_mean"))),
        expression=exp.Nullif(this=exp.column("_sparkmesh_stddev"), expression=exp.Literal.number(0)),
    )
    return (
        exp.select(column.copy(), exp.alias_(score, "z_score")).from_(table).join(stats.subquery("_sparkmesh_stats"), join_type="cross")
        .where(exp.GT(this=exp.Abs(this=score.copy()), expression=args.get("threshold")))
    )


def _statistic_in_range(name: str, statistic: type[exp.Func]) -> Build:
    def build(table: exp.Expression, args: Arguments) -> exp.Query:
        value = exp.select(exp.alias_(statistic(this=args.get("column")), name)).from_(audited_rows(table, args))
        where = out_of_range(exp.column(name), args, f"{name}_in_range(column := x, min_v := 0, max_v := 10)")
        return exp.select("*").from_(value.subquery("_sparkmesh_statistic")).where(where)

    return build


def _kl_divergence(table: exp.Expression, args: Arguments) -> exp.Query:
    # SQLMesh 0.236.4's query for this audit runs on no engine: where it joins the source column's value shares to
    # the target column's (on the source column's name, which the target side lacks unless it is the same column)
    # it selects ``num_rows`` unqualified, a column both sides have (DuckDB: "Ambiguous reference to column name").
    # A model calling it fails to compute in SQLMesh; here too, saying why, rather than pass an audit SQLMesh never
    # passes.
    raise ProjectError(
        f"audit {args.audit} cannot run: SQLMesh 0.236.4's kl_divergence query refers to num_rows ambiguously, and "
        "every engine refuses it (SQLMesh fails the model too)",
        hint="write a custom audit in audits/*.sql comparing the two columns' distributions",
    )


def _chi_square(table: exp.Expression, args: Arguments) -> exp.Query:
    # Pearson's statistic over the observed (non-empty) cells of the two columns' contingency table, both values
    # present; expected = row total * column total / grand total. Offending: not above the critical value when the
    # columns should be dependent (the default), above it when they should not.
    a, b = args.get("column_a"), args.get("column_b")
    present = exp.and_(exp.not_(exp.Is(this=a.copy(), expression=exp.Null())), exp.not_(exp.Is(this=b.copy(), expression=exp.Null())))
    condition = args.optional("condition")
    samples = exp.select(exp.alias_(a, "x_a"), exp.alias_(b, "x_b")).from_(table).where(present if condition is None else exp.and_(present, exp.paren(condition)))
    observed = exp.Count(this=exp.Star())

    def total(*partition: str) -> exp.Window:
        return exp.Window(this=exp.Sum(this=observed.copy()), partition_by=[exp.column(name) for name in partition], over="OVER")

    cells = exp.select(
        "x_a", "x_b", exp.alias_(observed, "observed"), exp.alias_(total("x_a"), "tot_a"), exp.alias_(total("x_b"), "tot_b"),
        exp.alias_(total(), "g_t"),
    ).from_(samples.subquery("_sparkmesh_samples")).group_by("x_a", "x_b")
    expected = exp.paren(exp.Div(this=exp.Mul(this=exp.column("tot_a"), expression=exp.column("tot_b")), expression=exp.column("g_t")))
    gap = exp.paren(exp.Sub(this=exp.column("observed"), expression=expected))
    statistic = exp.Sum(this=exp.Div(this=exp.Mul(this=gap, expression=gap.copy()), expression=expected.copy()))
    freedom = exp.Mul(
        this=exp.paren(exp.Sub(this=exp.Count(this=exp.Distinct(expressions=[exp.column("x_a")])), expression=exp.Literal.number(1))),
        expression=exp.paren(exp.Sub(this=exp.Count(this=exp.Distinct(expressions=[exp.column("x_b")])), expression=exp.Literal.number(1))),
    )
    critical = args.get("critical_value")
    dependent = exp.GT(this=statistic.copy(), expression=critical) if not is_false(args.optional("dependent")) else exp.LTE(this=statistic.copy(), expression=critical)
    return (
        exp.select(exp.alias_(freedom, "degrees_of_freedom"), exp.alias_(statistic, "chi_square"))
        .from_(cells.subquery("_sparkmesh_contingency")).having(exp.not_(exp.paren(dependent)))
    )


_RANGE = ("column", "min_v", "max_v", "inclusive", "condition")
_COLUMN = ("column", "condition")
_PATTERNS = ("column", "patterns", "condition")

AUDITS: dict[str, tuple[tuple[str, ...], Build]] = {
    "not_empty_string": (_COLUMN, _not_empty_string),
    "string_length_equal": (("column", "v", "condition"), _string_length_equal),
    "string_length_between": (_RANGE, _string_length_between),
    "valid_uuid": (_COLUMN, _valid_uuid),
    "valid_email": (_COLUMN, _valid_email),
    "valid_url": (_COLUMN, _valid_url),
    "valid_http_method": (("column",), _valid_http_method),
    "match_regex_pattern_list": (_PATTERNS, _pattern_list(_regex_match, wanted=True)),
    "not_match_regex_pattern_list": (_PATTERNS, _pattern_list(_regex_match, wanted=False)),
    "match_like_pattern_list": (_PATTERNS, _pattern_list(_like_match, wanted=True)),
    "not_match_like_pattern_list": (_PATTERNS, _pattern_list(_like_match, wanted=False)),
    "not_constant": (_COLUMN, _not_constant),
    "not_null_proportion": (("column", "threshold", "condition"), _not_null_proportion),
    "sequential_values": (("column", "interval", "condition"), _sequential_values),
    "mutually_exclusive_ranges": (("lower_bound_column", "upper_bound_column", "partition_clause", "condition"), _mutually_exclusive_ranges),
    "z_score": (("column", "threshold", "condition"), _z_score),
    "stddev_in_range": (_RANGE, _statistic_in_range("stddev", exp.Stddev)),
    "mean_in_range": (_RANGE, _statistic_in_range("mean", exp.Avg)),
    "kl_divergence": (("source_column", "target_column", "threshold", "condition"), _kl_divergence),
    "chi_square": (("column_a", "column_b", "critical_value", "dependent", "condition"), _chi_square),
}
"""name → (its arguments, the builder of its query)."""
