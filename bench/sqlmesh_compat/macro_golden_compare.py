"""sparkmesh's renders of the macro documentation goldens, compared with SQLMesh's recorded ones in the harness's
canonical form. Needs neither SQLMesh nor Spark: the golden file holds SQLMesh's side, sparkmesh renders in-process.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlmesh_compat.canonical import canonical_sql, first_difference, schema_of
from sqlmesh_compat.records import Interval, ModelFacts
from sqlmesh_compat.sparkmesh_side import sparkmesh_side


@dataclass(frozen=True)
class CaseResult:
    case: str
    equal: bool
    detail: str
    """Why not equal (the first difference of the canonical texts, or the failing side's error); empty if equal."""
    known_difference: str | None


def compare_document(document: dict) -> list[CaseResult]:
    with tempfile.TemporaryDirectory(prefix="sparkmesh_macro_goldens_") as tmp:
        root = _write(document, Path(tmp) / "docs_project")
        side = sparkmesh_side([root], Interval(**document["interval"]), spark_folder=None)
    schema = schema_of(document["model_columns"])
    results = []
    for case in document["cases"]:
        problems = [
            problem
            for name, theirs in case["sqlmesh"].items()
            if (problem := _model_difference(name, theirs, case["dialect"], side.models.get(name), side.broken,
                                             schema))
        ]
        if not case["sqlmesh"]:
            problems.append("SQLMesh rendered no model for this case")
        results.append(CaseResult(case["name"], not problems, "; ".join(problems), case.get("known_difference")))
    return results


def _write(document: dict, root: Path) -> Path:
    files = dict(document["project_files"])
    files.update({f"models/docs/{case['name']}.sql": case["model_file"] for case in document["cases"]})
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def _model_difference(name: str, theirs: dict, dialect: str, ours: ModelFacts | None, broken: dict,
                      schema) -> str:
    if ours is None:
        if theirs["render_error"].startswith("load:"):
            return ""  # both refuse to load the example's model: the same outcome
        return f"{name}: sparkmesh did not load it ({broken.get(name, 'not found')})"
    if theirs["render_error"] or ours.render_error:
        if theirs["render_error"] and ours.render_error:
            return ""  # both refuse the example: the same outcome
        return f"{name}: SQLMesh error {theirs['render_error']!r} / sparkmesh error {ours.render_error!r}"
    left = canonical_sql(theirs["sql"], dialect, schema)
    right = canonical_sql(ours.sql, "spark", schema)
    if left != right:
        return f"{name}: {first_difference(left, right)}"
    return _statements_difference(name, theirs["statements"], ours.statements, dialect, schema)


def _statements_difference(name: str, theirs, ours, dialect: str, schema) -> str:
    left = [canonical_sql(sql, dialect, schema) for sql in theirs or ()]
    right = [canonical_sql(sql, "spark", schema) for sql in ours or ()]
    if left != right:
        return f"{name}: statements SQLMesh {left} / sparkmesh {right}"
    return ""
