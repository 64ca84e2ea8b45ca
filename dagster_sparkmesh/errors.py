"""One error hierarchy for everything a user can cause or fix.

Every error carries where it happened (file, line, column), the offending text and what to do about it.
The CLI prints ``str(error)`` and exits with code 2; only unexpected bugs show a traceback.
"""

from __future__ import annotations

from pathlib import Path


class SparkMeshError(Exception):
    """Base class of every error raised on purpose by dagster-sparkmesh."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        col: int | None = None,
        snippet: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        self.col = col
        self.snippet = snippet
        self.hint = hint
        super().__init__(str(self))

    def __reduce__(self) -> tuple:
        # Pickled whole (the project loader's worker processes send errors back): the default would keep only the
        # formatted text and lose the file, line and hint.
        return (_restored, (type(self), dict(self.__dict__)))

    @property
    def location(self) -> str:
        if self.path is None:
            return ""
        parts = [str(self.path)]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def __str__(self) -> str:
        head = f"{self.location}: {self.message}" if self.location else self.message
        lines = [head]
        if self.snippet:
            lines.extend(f"    {text}" for text in self.snippet.rstrip().splitlines()[:8])
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


def _restored(kind: type[SparkMeshError], state: dict) -> SparkMeshError:
    error = kind.__new__(kind)
    error.__dict__.update(state)
    Exception.__init__(error, str(error))
    return error


class ProjectError(SparkMeshError):
    """A project file is malformed or inconsistent (models, config, seeds, audits, tests)."""


class ConfigError(ProjectError):
    """config.yaml or an engine/state setting is invalid."""


class PlanError(SparkMeshError):
    """A plan cannot be built or applied as asked (e.g. a destructive change to a forward-only model)."""


class StateError(SparkMeshError):
    """The state store is unreachable, of an unknown schema, or inconsistent."""


class StateConflictError(StateError):
    """Another promotion changed the environment after this plan was built."""


class EngineError(SparkMeshError):
    """Spark refused a statement or the session/server could not be reached.

    ``engine/`` judges the failure when it raises this, so that nothing else reads Spark's messages:
    ``transient``: the session, its channel or a metastore lock failed, not the statement, so repeating the work
    may succeed; ``refusal``: Spark could not analyze or parse the statement, and ``spark_message`` says why."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        refusal: bool = False,
        spark_message: str | None = None,
        **details,
    ) -> None:
        super().__init__(message, **details)
        self.transient = transient
        self.refusal = refusal
        self.spark_message = spark_message


class ExecutionError(SparkMeshError):
    """Applying a plan failed (a model's query, a missing interval, a missing physical table)."""


class AuditFailure(ExecutionError):
    """A blocking audit found offending rows."""


class UnitTestFailure(ExecutionError):
    """A model unit test produced rows different from its expected output."""
