"""Readable text diffs of a model's definition, for the plan summary."""

from __future__ import annotations

import difflib

import sqlglot
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.model.records import Model


def definition_diff(old: Model | None, new: Model) -> str:
    """Unified diff of the two definitions: the SQL as written when both versions kept it, else pretty-printed
    from the canonical query (versions stored before the text was kept) so that one changed clause is one line."""
    as_written = new.sql_code is not None and (old is None or old.sql_code is not None)
    before = definition_text(old, as_written=as_written) if old else []
    after = definition_text(new, as_written=as_written)
    lines = difflib.unified_diff(
        before, after, fromfile=f"{new.name} (before)", tofile=f"{new.name} (after)", lineterm=""
    )
    return "\n".join(lines)


def definition_text(model: Model, *, as_written: bool = False) -> list[str]:
    kind = model.kind.model_dump(exclude_defaults=True)
    lines = [f"-- kind: {model.kind.name}" + "".join(f", {key} {value}" for key, value in kind.items())]
    if model.columns:
        lines.append("-- columns: " + ", ".join(f"{name} {type_}" for name, type_ in model.columns))
    if as_written and model.sql_code is not None:
        return lines + model.sql_code.splitlines()
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
