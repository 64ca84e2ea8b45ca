"""The rule that sets a model apart from the row comparison: its rows need not repeat from one build to the next,
so two tools cannot be expected to agree on them.

- A SQL model whose query (as written) calls a clock or a random function: ``now()``, ``current_timestamp``,
  ``current_date``, ``rand()``, ``uuid()``, ... Macros that read the plan's times (``@execution_ds``) are
  deterministic: both builds get the same execution time.
- A Python model whose code (with the helpers it carries) reads the wall clock (``datetime.now``, ``date.today``,
  ``time.time``), calls ``uuid``, or draws from a random source it never seeds: Python's ``random`` functions
  without ``random.seed(``, numpy's global generator (``np.random.*``, pandas' ``.sample(`` without
  ``random_state``) without ``np.random.seed(``, ``Faker`` without a seed. Seeding one source does not seed another.
- A Python model that draws random values (seeded or not) and reads rows with a query that has no ``ORDER BY``:
  which row gets which draw depends on the order the engine returns them, which no SQL engine promises.
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
# (what draws from the source, what seeds it): a source drawn from and never seeded is non-deterministic.
_PYTHON_SOURCES = {
    "Python's random": (re.compile(r"(?<![\w.])random\.(?!seed\b|Random\b)\w+\s*\("), re.compile(r"(?<![\w.])random\.seed\s*\(")),
    "numpy's global generator": (
        re.compile(r"\b(np|numpy)\.random\.(?!seed\b|default_rng\b|RandomState\b)\w+\s*\(|\.sample\((?![^)]*random_state)"),
        re.compile(r"\b(np|numpy)\.random\.seed\s*\("),
    ),
    "Faker": (re.compile(r"\bFaker\s*\("), re.compile(r"\bseed(_instance)?\s*\(")),
    "a Random instance": (re.compile(r"\b(random\.Random|default_rng|RandomState)\s*\("), re.compile(r"\.seed\s*\(|(default_rng|RandomState|Random)\s*\(\s*\w")),
}
_PYTHON_UUID = re.compile(r"\buuid\.uuid[14]\s*\(")
_PYTHON_FETCH = re.compile(r"\.(fetchdf|fetch|fetchall|fetchone)\s*\(")
_ORDERED_READ = re.compile(r"order_by\s*\(|\bORDER\s+BY\b", re.IGNORECASE)
_PYTHON_CLOCK = re.compile(r"\b(datetime\.now|datetime\.utcnow|date\.today|time\.time)\s*\(")


def own_reason(source: ModelSource) -> str:
    """Why this model's own code is non-deterministic; empty when it is not."""
    if source.python:
        return _python_reason(source.source)
    found = _SQL_CLOCK_OR_RANDOM.search(source.source)
    return f"query calls {found.group(0).rstrip('( ').lower()}" if found else ""


def _python_reason(code: str) -> str:
    if _PYTHON_CLOCK.search(code):
        return "Python model reads the wall clock"
    if _PYTHON_UUID.search(code):
        return "Python model calls uuid"
    drawn = [name for name, (draw, _) in _PYTHON_SOURCES.items() if draw.search(code)]
    for name in drawn:
        if not _PYTHON_SOURCES[name][1].search(code):
            return f"Python model draws from {name} without seeding it"
    if drawn and _PYTHON_FETCH.search(code) and not _ORDERED_READ.search(code):
        return "Python model draws random values over rows read without ORDER BY"
    return ""


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
