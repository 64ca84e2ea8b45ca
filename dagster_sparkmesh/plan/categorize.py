"""Categorize a direct change: does it invalidate what downstream models already computed?

A change is NON_BREAKING only when every edit of the semantic diff adds whole projections to the outermost
SELECT: existing columns keep their values and no row appears or disappears, so children need not recompute.
Anything else (a changed literal, filter, join, a removed or moved column) is BREAKING. When in doubt: BREAKING,
since a wrong NON_BREAKING leaves stale data behind while a wrong BREAKING only costs compute.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.diff import Insert
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.records import ChangeCategory

# Data-affecting Model fields other than the query: any change to them is breaking (columns are checked apart).
_OTHER_DATA_FIELDS = (
    "kind", "pre_statements", "post_statements", "partitioned_by", "python_source", "seed_content_hash"
)


class ColumnChange(Record):
    """An output column that a forward-only change would drop (``new_type`` None) or retype."""

    name: str
    dropped: bool = False
    old_type: str | None = None
    new_type: str | None = None

    def describe(self) -> str:
        if self.dropped:
            return f"drops column {self.name}"
        return f"changes column {self.name} from {self.old_type} to {self.new_type}"


def categorize_direct_change(old_query: str, new_query: str, dialect: str = "spark") -> ChangeCategory:
    try:
        old, new = sqlglot.parse_one(old_query, dialect=dialect), sqlglot.parse_one(new_query, dialect=dialect)
    except SqlglotError:
        return ChangeCategory.BREAKING
    try:
        edits = sqlglot.diff(old, new, delta_only=True)
    except Exception:  # noqa: BLE001 - any failure of the diff leaves the change undecided, for the user to judge
        return ChangeCategory.UNCATEGORIZED
    if not isinstance(new, exp.Select) or new.args.get("distinct"):
        # Under DISTINCT a new column can split rows; other roots (UNION ...) have no single projection list.
        return ChangeCategory.NON_BREAKING if not edits else ChangeCategory.BREAKING
    added = [_added_projection(edit, new) for edit in edits]
    if all(p is not None and _is_row_preserving(p, new) for p in added) or _only_adds_projections(old, new):
        return ChangeCategory.NON_BREAKING
    return ChangeCategory.BREAKING


def categorize_model_change(old: Model, new: Model) -> ChangeCategory:
    """The category of a change to a model's own definition (its data hash differs)."""
    if any(getattr(old, field) != getattr(new, field) for field in _OTHER_DATA_FIELDS):
        return ChangeCategory.BREAKING
    if _partition_texts(old) != _partition_texts(new):  # (their lines may move: not a change)
        return ChangeCategory.BREAKING
    if new.columns[: len(old.columns)] != old.columns:
        return ChangeCategory.BREAKING
    if old.query is None or new.query is None:
        return ChangeCategory.BREAKING
    return categorize_direct_change(old.query, new.query)


def destructive_changes(
    old_query: str | None,
    new_query: str | None,
    old_columns: tuple[tuple[str, str], ...] = (),
    new_columns: tuple[tuple[str, str], ...] = (),
) -> list[ColumnChange]:
    """Output columns removed or retyped, from the declared columns when both sides declare them, else from
    the outermost projections (a ``*`` projection hides the columns: then nothing can be said)."""
    if old_columns and new_columns:
        before, after = _lower(old_columns), _lower(new_columns)
    else:
        before, after = _output_columns(old_query), _output_columns(new_query)
        if before is None or after is None:
            return []
    changes = []
    for name, old_type in before.items():
        if name not in after:
            changes.append(ColumnChange(name=name, dropped=True, old_type=old_type))
        elif old_type and after[name] and old_type != after[name]:
            changes.append(ColumnChange(name=name, old_type=old_type, new_type=after[name]))
    return changes


def model_destructive_changes(old: Model, new: Model) -> list[ColumnChange]:
    return destructive_changes(old.query, new.query, old.columns, new.columns)


def added_columns(old: Model, new: Model) -> list[str]:
    """Output columns a change adds, from the declared columns when both sides declare them, else from the
    outermost projections (a ``*`` projection hides them: then nothing can be said)."""
    if old.columns and new.columns:
        before, after = _lower(old.columns), _lower(new.columns)
    else:
        before, after = _output_columns(old.query), _output_columns(new.query)
        if before is None or after is None:
            return []
    return [name for name in after if name not in before]


def _added_projection(edit: object, new_root: exp.Select) -> exp.Expression | None:
    """The new outermost projection an Insert edit belongs to, if it is one that did not exist before."""
    if not isinstance(edit, Insert):
        return None
    node: exp.Expression | None = edit.expression
    while node is not None and node.parent is not new_root:
        node = node.parent
    if node is None or node.arg_key != "expressions":
        return None
    return node


def _is_row_preserving(projection: exp.Expression, select: exp.Select) -> bool:
    """A table-generating function (explode) multiplies rows; an aggregate collapses them unless the query
    already groups (the GROUP BY is unchanged, or the diff would show it) or it is a window function."""
    if projection.find(exp.UDTF, exp.Explode):
        return False
    aggregate = projection.find(exp.AggFunc)
    return aggregate is None or select.args.get("group") is not None or aggregate.find_ancestor(exp.Window) is not None


def _only_adds_projections(old: exp.Expression, new: exp.Select) -> bool:
    """The diff sometimes replaces a whole SELECT for a small edit; check the intent directly: the old
    projections in order, plus row-preserving new ones, and nothing else different."""
    if not isinstance(old, exp.Select):
        return False
    old_sql = [p.sql(dialect="spark") for p in old.expressions]
    kept, extra = [], []
    for projection in new.expressions:
        if len(kept) < len(old_sql) and projection.sql(dialect="spark") == old_sql[len(kept)]:
            kept.append(projection)
        else:
            extra.append(projection)
    if len(kept) != len(old_sql) or not all(_is_row_preserving(p, new) for p in extra):
        return False
    stripped = new.copy()
    stripped.set("expressions", [p.copy() for p in kept])
    return stripped.sql(dialect="spark") == old.sql(dialect="spark")


def _output_columns(query: str | None) -> dict[str, str | None] | None:
    """Name → type (known only through a top-level CAST) of the outermost projections; None if unknown."""
    if query is None:
        return None
    try:
        root = sqlglot.parse_one(query, dialect="spark")
    except SqlglotError:
        return None
    if not isinstance(root, exp.Select) or any(isinstance(p, exp.Star) or p.is_star for p in root.expressions):
        return None
    columns: dict[str, str | None] = {}
    for projection in root.expressions:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        type_ = inner.to.sql(dialect="spark").lower() if isinstance(inner, exp.Cast) else None
        columns[projection.alias_or_name.lower()] = type_
    return columns


def _lower(columns: tuple[tuple[str, str], ...]) -> dict[str, str | None]:
    return {name.lower(): type_.lower() for name, type_ in columns}


def _partition_texts(model: Model) -> tuple[str, ...]:
    return tuple(expression.written for expression in model.partition_expressions)
