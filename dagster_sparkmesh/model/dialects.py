"""Dialect names as SQLMesh projects write them: a sqlglot dialect, optionally with settings
(``duckdb, normalization_strategy=case_sensitive``), which sqlglot reads wherever it takes a dialect."""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect


DIALECT_HINT = "use a sqlglot dialect name such as spark or duckdb"
"""What to do about a dialect name sqlglot does not know."""


def is_known_dialect(name: str) -> bool:
    try:
        Dialect.get_or_raise(name)
    except ValueError:
        return False
    return True
