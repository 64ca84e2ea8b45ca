"""Readable text diffs of a model's definition, for the plan summary."""

from __future__ import annotations

import difflib

import sqlglot
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.model.records import Model


def definition_diff(old: Model | None, new: Model) -> str:
    """Unified diff of the two definitions; SQL is pretty-printed so that one changed clause is one changed line."""
    before = definition_text(old) if old else []
    after = definition_text(new)
    lines = difflib.unified_diff(
        before, after, fromfile=f"{new.name} (before)", tofile=f"{new.name} (after)", lineterm=""
    )
    return "\n".join(lines)


def definition_text(model: Model) -> list[str]:
    kind = model.kind.model_dump(exclude_defaults=True)
    lines = [f"-- kind: {model.kind.name}" + "".join(f", {key} {value}" for key, value in kind.items())]
    if model.columns:
        lines.append("-- columns: " + ", ".join(f"{name} {type_}" for name, type_ in model.columns))
    for statement in model.pre_statements:
        lines.extend(_pretty(statement) + [";"])
    if model.query is not None:
        lines.extend(_pretty(model.query))
    if model.python_source is not None:  # the user's own text; the normalized form is only for hashing
        lines.extend((model.python_code or model.python_source).splitlines())
    if model.seed_content_hash is not None:
        lines.append(f"-- seed content sha256: {model.seed_content_hash}")
    for statement in model.post_statements:
        lines.extend([";"] + _pretty(statement))
    return lines


def _pretty(sql: str) -> list[str]:
    try:
        return sqlglot.transpile(sql, read="spark", write="spark", pretty=True)[0].splitlines()
    except (SqlglotError, IndexError):
        return sql.splitlines()
