"""The scoreboard as text: one row per project and a total, then every non-equal item with its reason; and the
section of ``bench/README.md`` that keeps it."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from sqlmesh_compat.records import Count, ProjectScore, SparkRows

SECTION_TITLE = "## SQLMesh compatibility scoreboard"
HEADER = ("project", "SQLMesh loads", "sparkmesh loads", "models equal", "deps equal", "renders equivalent",
          "pre/post statements equal", "unit tests same outcome", "tests passing (SQLMesh / sparkmesh)", "rows equal on Spark")


def total(scores: list[ProjectScore]) -> ProjectScore:
    def add(pick) -> Count:
        return Count(sum(pick(s).equal for s in scores), sum(pick(s).total for s in scores))

    return ProjectScore(
        name="total",
        sqlmesh_loads=all(s.sqlmesh_loads for s in scores),
        sparkmesh_loads=all(s.sparkmesh_loads for s in scores),
        models_equal=all(s.models_equal for s in scores),
        deps=add(lambda s: s.deps),
        renders=add(lambda s: s.renders),
        statements=add(lambda s: s.statements),
        unit_tests=add(lambda s: s.unit_tests),
        sqlmesh_tests_passing=sum(s.sqlmesh_tests_passing for s in scores),
        sparkmesh_tests_passing=sum(s.sparkmesh_tests_passing for s in scores),
        differences=(),
        spark_rows=_total_spark_rows(scores),
    )


def _total_spark_rows(scores: list[ProjectScore]) -> SparkRows | None:
    ran = [s.spark_rows for s in scores if s.spark_rows is not None]
    if not ran:
        return None
    rows = Count(sum(r.rows.equal for r in ran), sum(r.rows.total for r in ran))
    return SparkRows(rows, sum(r.excluded for r in ran))


def markdown(scores: list[ProjectScore], version: str, today: date) -> str:
    rows = [*scores, total(scores)]
    lines = [
        f"{SECTION_TITLE} (SQLMesh {version}, {today.isoformat()})",
        "",
        "Written by `.venv/bin/python bench/sqlmesh_compat --write-readme`: SQLMesh's own example projects (its "
        "source distribution's `examples/`, dbt-based ones excluded) loaded, rendered and unit-tested by SQLMesh "
        "(in a virtualenv of its own, outside the repository) and by sparkmesh. Deps: models whose dependencies "
        "are SQLMesh's, of SQLMesh's models; renders: queries equivalent in canonical form, of those SQLMesh "
        "renders; statements: models whose rendered pre/post-statements are the same, of those with some in SQLMesh; "
        "unit tests: same pass/fail as SQLMesh; rows equal on Spark (`--spark`): both tools' fresh production "
        "builds on local Spark over the same days, models holding the same rows (count and order-independent "
        "checksums per column and per row), of the models SQLMesh builds, those whose rows need not repeat "
        "(clock, unseeded random) counted apart ('-': stage not run).",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *("| " + " | ".join(_cells(score)) + " |" for score in rows),
        "",
    ]
    for score in scores:
        if score.differences:
            lines.append(f"{score.name}, not equal:")
            lines += [f"- `{d.item}`: {_one_line(d.reason)}" for d in score.differences]
            lines.append("")
    return "\n".join(lines)


def _cells(score: ProjectScore) -> list[str]:
    yes = {True: "yes", False: "**no**"}
    return [
        score.name, yes[score.sqlmesh_loads], yes[score.sparkmesh_loads], yes[score.models_equal], str(score.deps),
        str(score.renders), str(score.statements), str(score.unit_tests),
        f"{score.sqlmesh_tests_passing} / {score.sparkmesh_tests_passing}",
        str(score.spark_rows) if score.spark_rows is not None else "-",
    ]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|")[:240]


def write_readme_section(readme: Path, section: str) -> None:
    """Replace the scoreboard section (up to the next ``## `` heading) or append it."""
    text = readme.read_text()
    start = text.find(SECTION_TITLE)
    if start < 0:
        readme.write_text(text.rstrip("\n") + "\n\n" + section)
        return
    following = text.find("\n## ", start + len(SECTION_TITLE))
    rest = text[following + 1:] if following >= 0 else ""
    readme.write_text(text[:start] + section + ("\n" + rest if rest else ""))
