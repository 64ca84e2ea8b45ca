"""Records SQLMesh's renders of its macro documentation's examples as golden data for sparkmesh's tests:

    .venv/bin/python bench/sqlmesh_compat/macro_goldens.py [--check]

Writes the cases of ``macro_doc_cases.py`` as one project (``project_files``), renders every model with SQLMesh
(the referee's virtualenv, as the harness runs it: ``sqlmesh_probe.py``) for the harness's interval and writes
``tests/macros/goldens/sqlmesh_macro_docs.json``: the project's files, and per case its model file, SQLMesh's
version, dialect and rendered SQL (or render error). The known differences (``KNOWN_DIFFERENCES``) are carried into
the file with their reasons; the test marks those cases as expected to differ. ``--check`` writes nothing and runs
no SQLMesh: it renders the recorded cases with sparkmesh and prints which are equal in the canonical form.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a file: import the harness by its name

from sqlmesh_compat.macro_doc_cases import CASES, CONFIG, EXTERNAL_MODELS, PARENT_MODEL, PYTHON_MACROS  # noqa: E402
from sqlmesh_compat.records import SQLMESH_VERSION, Interval  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "macros" / "goldens" / "sqlmesh_macro_docs.json"

RUNTIME_STAGE = "evaluating"
"""SQLMesh renders at the stage of a model's evaluation: the SQL that runs, which is what sparkmesh renders."""

KNOWN_DIFFERENCES: dict[str, str] = {
    "union_condition_false": "SQLMesh 0.236.4 refuses the documentation's own example at load: with a false "
                             "condition the model's dependencies leave out the second table, whose schema @UNION "
                             "still reads ('can't be statically determined'); sparkmesh renders what the "
                             "documentation shows, the first table's select",
    "deduplicate": "@DEDUPLICATE: SQLMesh writes QUALIFY (DuckDB) or a subquery over the expanded columns (Spark); "
                   "sparkmesh does not know the relation's columns when the model loads, so it keeps each row as a "
                   "struct and selects its fields: the same rows; expanding at render time would re-version every "
                   "model that uses it",
    "deduplicate_spark": "@DEDUPLICATE: as in the DuckDB case (a struct per row instead of the expanded columns)",
    "date_spine_spark": "@DATE_SPINE for Spark: SQLMesh's sqlglot drops the ARRAY<DATE> cast around SEQUENCE when "
                        "it writes Spark, sparkmesh keeps it (as SQLMesh writes DuckDB): the same dates; the macro "
                        "expands at load, so changing its output would re-version the models that use it",
    "predefined_variables": "@execution_dt and the other _dt variables: SQLMesh writes the UTC offset into the "
                            "TIMESTAMP literal ('2023-01-02 00:00:00+00:00'), sparkmesh writes naive UTC and keeps "
                            "the Spark session time zone at UTC: the same instant "
                            "(tests/project/fixtures/rendering.sql pins sparkmesh's form)",
}
"""Case name -> why sparkmesh's render differs from SQLMesh's (kept in the golden file, listed in bench/README)."""


def project_files() -> dict[str, str]:
    files = {
        "config.yaml": CONFIG,
        "external_models.yaml": EXTERNAL_MODELS,
        "macros/__init__.py": "",
        "macros/doc_macros.py": PYTHON_MACROS,
        "models/docs_src/parent.sql": PARENT_MODEL,
    }
    files.update({f"models/docs/{case.name}.sql": case.model_file() for case in CASES})
    return files


def write_project(files: dict[str, str], root: Path) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def models_of_case(case_name: str, model_names) -> list[str]:
    """The models a case's file defines: ``docs.<name>``, or the blueprints' models of a templated name."""
    if case_name == "blueprints":
        return sorted(name for name in model_names if name.endswith(".some_table"))
    return [f"docs.{case_name}"]


def sqlmesh_renders(project: Path) -> tuple[object, dict[str, str]]:
    """SQLMesh's side of the project, and the cases whose model SQLMesh refuses to load (with its message): such a
    model stops SQLMesh's whole project from loading, so it is taken out and the load repeated."""
    from sqlmesh_compat.referee import prepare_referee
    from sqlmesh_compat.sqlmesh_side import sqlmesh_side

    python = prepare_referee().python
    refused: dict[str, str] = {}
    while True:
        side = sqlmesh_side(python, [project], Interval(), unit_tests=False, runtime_stage=RUNTIME_STAGE)
        if side.loaded:
            return side, refused
        message = _load_error(python, project)
        failing = _REFUSED_FILE.search(message)
        if failing is None:
            raise SystemExit(f"SQLMesh did not load the documentation project: {message or side.error}")
        refused[failing["case"]] = message
        (project / "models" / "docs" / f"{failing['case']}.sql").unlink()


_REFUSED_FILE = re.compile(r"models/docs/(?P<case>\w+)\.sql")

_LOAD = """
import sys
from sqlmesh import Context
try:
    Context(paths=[sys.argv[1]])
except Exception as error:
    print(" ".join(str(error).split()))
"""


def _load_error(python: Path, project: Path) -> str:
    """SQLMesh's whole message for the model it refuses, the scratch folder left out."""
    result = subprocess.run([str(python), "-c", _LOAD, str(project)], capture_output=True, text=True, check=False,
                            cwd=project)
    return result.stdout.strip().replace(f"{project}/", "")


def golden_document(side, refused: dict[str, str]) -> dict:
    models = side.models
    cases = []
    for case in CASES:
        renders = {}
        if case.name in refused:
            renders[f"docs.{case.name}"] = {"sql": None, "render_error": f"load: {refused[case.name]}",
                                            "statements": None, "columns": {}}
        for name in [] if case.name in refused else models_of_case(case.name, models):
            facts = models[name]
            renders[name] = {"sql": facts.sql, "render_error": facts.render_error, "statements": facts.statements,
                             "columns": facts.columns}
        cases.append({
            "name": case.name, "section": case.section, "dialect": case.dialect, "model_file": case.model_file(),
            "sqlmesh": renders, "known_difference": KNOWN_DIFFERENCES.get(case.name),
        })
    shared = {path: text for path, text in project_files().items() if not path.startswith("models/docs/")}
    columns = {name: facts.columns for name, facts in models.items() if facts.columns}
    columns.update({name: found for name, found in side.external_columns.items() if found})
    return {
        "about": "SQLMesh's renders of the examples of its macro documentation, recorded by "
                 "bench/sqlmesh_compat/macro_goldens.py; inputs restated in macro_doc_cases.py.",
        "sqlmesh_version": SQLMESH_VERSION, "interval": asdict(Interval()), "runtime_stage": RUNTIME_STAGE,
        "project_files": shared,
        "model_columns": columns, "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with sparkmesh, write nothing")
    args = parser.parse_args()
    if args.check:
        print_comparison(json.loads(GOLDEN.read_text()))
        return
    with tempfile.TemporaryDirectory(prefix="sparkmesh_macro_goldens_") as tmp:
        side, refused = sqlmesh_renders(write_project(project_files(), Path(tmp) / "docs_project"))
    document = golden_document(side, refused)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
    print(f"wrote {len(document['cases'])} cases to {GOLDEN}; SQLMesh refused to load: {sorted(refused)}")


def print_comparison(document: dict) -> None:
    from sqlmesh_compat.macro_golden_compare import compare_document

    results = compare_document(document)
    for result in results:
        known = f" (known: {result.known_difference})" if result.known_difference else ""
        print(f"{'equal' if result.equal else 'DIFFERENT':9} {result.case}{known} {result.detail}".rstrip())
    print(f"{sum(r.equal for r in results)} of {len(results)} examples render as SQLMesh {document['sqlmesh_version']}"
          " does (canonical form)")


if __name__ == "__main__":
    main()
