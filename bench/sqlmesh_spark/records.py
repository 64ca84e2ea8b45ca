"""The records that cross this folder's modules: a build's outcome, what SQLMesh says of each model, the
comparison's verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmesh_spark.digest import Digest


@dataclass(frozen=True)
class Window:
    """The days both builds cover: every model from its own start (SQLMesh's production plan takes no start) to
    ``end`` inclusive; the plan's clock is the midnight after it, so that day is complete and due in both tools."""

    end: str
    """YYYY-MM-DD, inclusive."""
    at: str | None = None
    """Another clock for both plans (``YYYY-MM-DD HH:MM``, after ``end``'s day), where partial intervals are due;
    both tools then plan up to it (no ``--end``: SQLMesh's production plan takes none either)."""

    @property
    def execution_time(self) -> str:
        from datetime import date, timedelta

        return self.at or (date.fromisoformat(self.end) + timedelta(days=1)).isoformat()

    @property
    def sparkmesh_arguments(self) -> list[str]:
        end = [] if self.at else ["--end", self.end]
        return [*end, "--execution-time", self.execution_time]


@dataclass(frozen=True)
class ModelSource:
    """What SQLMesh loaded of one model: what the non-determinism rule reads."""

    kind: str
    python: bool
    depends_on: tuple[str, ...]
    source: str
    """The query as written, or a Python model's code (its entry point and the helpers it carries)."""


@dataclass(frozen=True)
class BuildOutcome:
    """One tool's fresh build: the plan's error (empty: it applied) and per model a digest or why there is none."""

    error: str
    digests: dict[str, Digest | str]
    sources: dict[str, ModelSource] = field(default_factory=dict)
    """SQLMesh's side only."""


EQUAL, DIFFERENT, EXCLUDED, UNREADABLE = "equal", "different", "excluded", "unreadable"


@dataclass(frozen=True)
class ModelVerdict:
    model: str
    outcome: str
    """EQUAL (same rows), DIFFERENT, EXCLUDED (by the non-determinism rule), UNREADABLE (no digest on a side)."""
    reason: str = ""
    type_note: str = ""
    """Columns whose Spark types differ while their values are equal (listed, not counted as a row difference)."""


@dataclass(frozen=True)
class SparkComparison:
    sqlmesh_error: str
    sparkmesh_error: str
    verdicts: tuple[ModelVerdict, ...]

    def count(self, outcome: str) -> int:
        return sum(verdict.outcome == outcome for verdict in self.verdicts)

    @property
    def compared(self) -> int:
        """Models both builds hold and the rule keeps: equal or different."""
        return self.count(EQUAL) + self.count(DIFFERENT)
