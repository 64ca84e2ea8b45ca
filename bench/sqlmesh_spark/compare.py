"""Two fresh builds of one project compared model by model: same rows (count and per-column and per-row
checksums), or what differs."""

from __future__ import annotations

from sqlmesh_spark.digest import Digest
from sqlmesh_spark.records import DIFFERENT, EQUAL, EXCLUDED, UNREADABLE, BuildOutcome, ModelVerdict, SparkComparison


def compare_builds(sqlmesh: BuildOutcome, sparkmesh: BuildOutcome, excluded: dict[str, str]) -> SparkComparison:
    """Every model either build reports; ``excluded``: model -> the rule's reason (``nondeterminism.py``)."""
    verdicts = [_verdict(name, sqlmesh.digests.get(name), sparkmesh.digests.get(name), excluded.get(name, ""))
                for name in sorted(set(sqlmesh.digests) | set(sparkmesh.digests))]
    return SparkComparison(sqlmesh_error=sqlmesh.error, sparkmesh_error=sparkmesh.error, verdicts=tuple(verdicts))


def _verdict(name: str, theirs: Digest | str | None, ours: Digest | str | None, excluded: str) -> ModelVerdict:
    both = isinstance(theirs, Digest) and isinstance(ours, Digest)
    if excluded:  # what the rows did this time is said, not counted
        seen = ("rows equal this time" if not row_difference(theirs, ours) else "rows differ this time") if both else ""
        return ModelVerdict(name, EXCLUDED, f"{excluded}; {seen}" if seen else excluded)
    if not both:
        return ModelVerdict(name, UNREADABLE, f"SQLMesh: {_state(theirs)}; sparkmesh: {_state(ours)}")
    difference = row_difference(theirs, ours)
    return ModelVerdict(name, DIFFERENT if difference else EQUAL, difference, type_difference(theirs, ours))


def _state(value: Digest | str | None) -> str:
    if value is None:
        return "no such model"
    return f"{value.rows} rows" if isinstance(value, Digest) else value


def row_difference(theirs: Digest, ours: Digest) -> str:
    """Empty when both hold the same multiset of rows; else the first way they differ, SQLMesh's side first."""
    if theirs.rows != ours.rows:
        return f"rows: SQLMesh {theirs.rows}, sparkmesh {ours.rows}"
    their_columns, our_columns = dict(theirs.column_checksums), dict(ours.column_checksums)
    if set(their_columns) != set(our_columns):
        return (f"columns: only in SQLMesh {sorted(set(their_columns) - set(our_columns))}, "
                f"only in sparkmesh {sorted(set(our_columns) - set(their_columns))}")
    differing = sorted(name for name in their_columns if their_columns[name] != our_columns[name])
    if differing:
        return f"values differ in {differing} ({theirs.rows} rows each)"
    if theirs.row_checksum != ours.row_checksum:
        return "every column's values equal, paired differently across rows"
    return ""


def type_difference(theirs: Digest, ours: Digest) -> str:
    their_types, our_types = dict(theirs.columns), dict(ours.columns)
    differing = [f"{name} {their_types[name]} / {our_types[name]}" for name in sorted(their_types)
                 if name in our_types and their_types[name] != our_types[name]]
    return f"types (SQLMesh / sparkmesh): {', '.join(differing)}" if differing else ""
