"""The StandaloneAudit record: an audit of its own (``AUDIT (name ..., standalone true)``), not attached to a model.

It is a query over models named as written (``FROM shop.orders``) that returns the offending rows. It has no
table: what identifies a run of it is its fingerprint, which moves when its query or any model it reads changes.
"""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.records import Record


class StandaloneAudit(Record):
    name: str
    """Lower case, unique among the project's audits."""
    query: str
    """Canonical Spark SQL, macros of the interval (``@start_ds``) kept as placeholders, models named as written."""
    depends_on: frozenset[str] = frozenset()
    """The models and external models the query reads."""
    blocking: bool = True
    """A failure stops the promotion; else it only warns."""
    max_failing_rows: int | None = None
    """How many offending rows a failure shows (an AUDIT_ONLY model's kind sets it; else the audits' default)."""
    skip: bool = False
    """Loaded and listed, never run (SQLMesh's ``skip true``)."""
    description: str | None = None
    path: Path
    line: int = 1
    """Line of the ``AUDIT (`` header in its file."""
    fingerprint: str = ""
    """sha256 over the query and the fingerprints of what it reads (``snapshot.fingerprint``)."""
