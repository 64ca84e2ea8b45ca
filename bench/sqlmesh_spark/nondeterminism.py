"""The rule that sets a model apart from the row comparison: its rows need not repeat from one build to the next,
so two tools cannot be expected to agree on them.

- A SQL model whose query (as written) calls a clock or a random function: ``now()``, ``current_timestamp``,
  ``current_date``, ``rand()``, ``uuid()``, ... Macros that read the plan's times (``@execution_ds``) are
  deterministic: both builds get the same execution time.
- A Python model whose code uses a random source (``random``, ``numpy.random``, ``Faker``, ``uuid``) and never
  seeds one (``seed(``), or reads the wall clock (``datetime.now``, ``date.today``, ``time.time``).
- A model that reads such a model, directly or through others.
"""

from __future__ import annotations

import re

from sqlmesh_spark.records import ModelSource

_SQL_CLOCK_OR_RANDOM = re.compile(
    r"\b(now|rand|randn|random|uuid|gen_random_uuid|shuffle|getdate|sysdate)\s*\("
    r"|\b(current_timestamp|current_date|current_time|localtimestamp|localtime)\b",
    re.IGNORECASE,
)
_PYTHON_RANDOM = re.compile(r"\b(random|np\.random|numpy\.random|Faker|faker|uuid)\b")
_PYTHON_SEED = re.compile(r"\bseed\s*\(")
_PYTHON_CLOCK = re.compile(r"\b(datetime\.now|datetime\.utcnow|date\.today|time\.time)\s*\(")


def own_reason(source: ModelSource) -> str:
    """Why this model's own code is non-deterministic; empty when it is not."""
    if source.python:
        if _PYTHON_CLOCK.search(source.source):
            return "Python model reads the wall clock"
        if _PYTHON_RANDOM.search(source.source) and not _PYTHON_SEED.search(source.source):
            return "Python model uses a random source without a seed"
        return ""
    found = _SQL_CLOCK_OR_RANDOM.search(source.source)
    return f"query calls {found.group(0).rstrip('( ').lower()}" if found else ""


def nondeterministic_models(sources: dict[str, ModelSource]) -> dict[str, str]:
    """Model -> why it is set apart, by its own code or by what it reads (the first such parent named)."""
    reasons: dict[str, str] = {}

    def reason_of(name: str, visiting: frozenset[str]) -> str:
        if name in reasons:
            return reasons[name]
        source = sources.get(name)
        if source is None or name in visiting:
            return ""
        why = own_reason(source)
        for parent in source.depends_on if not why else ():
            if reason_of(parent, visiting | {name}):
                why = f"reads {parent}, non-deterministic"
                break
        reasons[name] = why
        return why

    for name in sources:
        reason_of(name, frozenset())
    return {name: why for name, why in sorted(reasons.items()) if why}
