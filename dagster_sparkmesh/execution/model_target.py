"""What the evaluator is asked to compute for one model: its version, the intervals it misses, what it reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dagster_sparkmesh.execution.preflight import FirstQuery
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class ModelTarget:
    """A model as the plan wants it computed: its version (physical table) and the intervals it misses."""

    model: Model
    version: str
    intervals: tuple[Interval, ...]
    table_for: Mapping[str, str]
    """Model or external name → the table to read (parents' physical tables, never views)."""
    should_stop: Callable[[], bool] = field(default=lambda: False, compare=False)
    """Checked between interval batches: a requested stop ends the model after its last recorded batch."""
    time_column_checked: bool = False
    """The preflight verified the time column already; else it is verified before the model's first write."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """Model name → the version the environment reads: where the parents' recorded intervals are looked up."""
    first_query: FirstQuery | None = None
    """The first batch's query as the preflight rendered (and analyzed) it from these very tables: not done again."""
    output_columns: tuple[tuple[str, str], ...] | None = None
    """The query's (column, type) pairs as the preflight analyzed it, also over temp views of parents not written
    yet: they name a new period table's columns (its first write gives it the types the query has then)."""
    listed_absent: bool = False
    """The preflight's catalog listing did not hold the physical table: no look-up before its first write, which
    creates it (a CTAS or CREATE TABLE that finds it there after all falls back to writing into it)."""
    keep_unchanged: bool = False
    """A FULL model whose query and inputs did not change since its last write keeps its table
    (``execution.unchanged_inputs``); False for a restatement, which recomputes whatever it finds."""

    @property
    def table(self) -> str:
        return physical_table(self.model.name, self.version, self.model.catalog)

    @property
    def span(self) -> Interval:
        """From the first missing interval's start to the last one's end."""
        return span_of(self.intervals)

    def columns_analyzed_for(self, batch: Interval) -> tuple[tuple[str, str], ...] | None:
        """The batch's query's (column, type) pairs when the preflight analyzed that very text over these tables."""
        return self.output_columns if self.first_query is not None and self.first_query.interval == batch else None

    def table_lookup(self) -> Callable[[str], str]:
        """Model or external name → the table its query reads (the model itself: its own physical table)."""

        def table_for(name: str) -> str:
            return self.table if name == self.model.name else self.table_for.get(name, name)

        return table_for


def span_of(intervals: tuple[Interval, ...]) -> Interval:
    return Interval(start=min(i.start for i in intervals), end=max(i.end for i in intervals))
