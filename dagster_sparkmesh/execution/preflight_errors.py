"""The errors of the preflight (``execution.preflight``): a model would fail on its inputs at run time."""

from __future__ import annotations

from collections.abc import Iterable

from dagster_sparkmesh.errors import ExecutionError


class PreflightError(ExecutionError):
    """A model would fail on its inputs: raised before anything (of that model) is written."""


class MissingExternalTable(PreflightError):
    """An external model read by a model to compute has no table (or no schema) in the catalog."""


class BadTimeColumn(PreflightError):
    """An INCREMENTAL_BY_TIME_RANGE model's query lacks its time column, or returns it in a type that cannot hold
    a period."""


class UnanalyzableQuery(PreflightError):
    """Spark refused to analyze a model's query (a missing column or table, a type error)."""


def raise_all(problems: Iterable[PreflightError]) -> None:
    """Raise the first problem, listing the others too: one refused apply should show every reason."""
    problems = list(problems)
    if not problems:
        return
    first = problems[0]
    if len(problems) == 1:
        raise first
    raise type(first)(
        f"{first.message} (and {len(problems) - 1} more problem(s), all listed below)",
        path=first.path,
        line=first.line,
        snippet="\n".join(problem.message for problem in problems),
        hint=first.hint,
    )
