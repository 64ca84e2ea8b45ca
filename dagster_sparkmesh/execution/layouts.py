"""The physical layout a new table gets: period tables for time-range models, generation tables for FULL ones.

Each can be switched off for new tables with an environment variable (tables keep the layout they were created
with): ``SPARKMESH_PERIOD_TABLES=0`` (day partitions of the time column) and ``SPARKMESH_GENERATION_TABLES=0``
(plain tables replaced in place).
"""

from __future__ import annotations

import os

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.intervals import daily_or_longer

PERIOD_TABLES_VARIABLE = "SPARKMESH_PERIOD_TABLES"
GENERATION_TABLES_VARIABLE = "SPARKMESH_GENERATION_TABLES"
_OFF = ("0", "false", "no")


def generation_tables_enabled() -> bool:
    """A new FULL model's table is a generation table (``engine.generation_tables``) unless
    ``SPARKMESH_GENERATION_TABLES=0`` (then a plain table, the layout before them)."""
    return os.environ.get(GENERATION_TABLES_VARIABLE, "").lower() not in _OFF


def partition_period(model: Model) -> str | None:
    """The period a new time-range table is partitioned by (``engine.period_tables``): a month of daily (weekly,
    monthly...) intervals, a day of hourly or other cron intervals. ``SPARKMESH_PERIOD_TABLES=0`` switches period
    tables off for new tables (None: one partition per time column value, the layout before them)."""
    if os.environ.get(PERIOD_TABLES_VARIABLE, "").lower() in _OFF:
        return None
    return "month" if daily_or_longer(model) else "day"
