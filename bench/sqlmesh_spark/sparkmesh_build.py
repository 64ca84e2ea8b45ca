"""sparkmesh's fresh build of a project on local Spark, as a user types it: ``sparkmesh plan prod --auto-apply
--no-prompts --end DAY --execution-time NEXT_MIDNIGHT`` (``mode: local``, so the command's own process holds the
session and its catalog is the project's ``.sparkmesh/``), then every model's prod view read back. Each step is a
child process of this environment (a JVM holds one SparkContext; the caller may hold another):

    python sparkmesh_build.py prepare|setup|plan|read FOLDER [MORE_FOLDERS...] [-- PLAN ARGUMENTS]

``prepare`` removes from the copy the files of models sparkmesh's loader sets aside (a kind it does not run, e.g.
MANAGED, and their readers), as Dagster's code location sets them aside: the CLI refuses a project with one, and
the rest is still worth comparing; it prints them with the reason. ``read`` prints model -> digest (``digest.py``,
the same reduction SQLMesh's side makes) or why there is none. No ``--start``: SQLMesh refuses one for a production
plan, so both tools start every model at its own start. ``SQLMESH_SPARK_REQUIREMENTS`` names a folder of the
projects' own imports (faker, ibis), appended to ``sys.path``: after sparkmesh's own packages, so its pins win.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench/, one name for the package

from sqlmesh_spark.digest import Digest, digest_table  # noqa: E402
from sqlmesh_spark.records import BuildOutcome, Window  # noqa: E402
from sqlmesh_spark.settings import CONCURRENT_TASKS, SHUFFLE_PARTITIONS  # noqa: E402

BUILD_TIMEOUT_SECONDS = 1800
REQUIREMENTS_VARIABLE = "SQLMESH_SPARK_REQUIREMENTS"
SETUP_VARIABLE = "SQLMESH_SPARK_SETUP_SQL"
"""JSON list of the statements ``setup`` runs."""
SPARK_CONF = {"spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS), "spark.sql.session.timeZone": "UTC"}


def sparkmesh_build(python: Path, folders: list[Path], window: Window, env: dict[str, str],
                    requirements: Path | None = None, setup_sql: tuple[str, ...] = ()) -> BuildOutcome:
    """``python``: this environment's interpreter; ``requirements``: the projects' own imports (see above);
    ``setup_sql``: run first in the project's catalog (the tables it reads as externals)."""
    local = {**env, "SPARKMESH_SPARK_MODE": "local", "SPARKMESH_SPARK_MASTER": "local[2]",
             "SPARKMESH_SPARK_CONCURRENT_TASKS": str(CONCURRENT_TASKS),
             "SPARKMESH_SPARK_CONF": json.dumps(SPARK_CONF), "SPARK_LOCAL_IP": "127.0.0.1"}
    if requirements is not None:
        local[REQUIREMENTS_VARIABLE] = str(requirements)
    folders_args = [str(folder) for folder in folders]
    prepared = _child(python, ["prepare", *folders_args], local)
    if prepared.returncode != 0:
        return BuildOutcome(error=f"load: {_last_line(prepared.stderr)}", digests={})
    set_aside = json.loads(prepared.stdout.strip().splitlines()[-1])
    if setup_sql:
        setup = _child(python, ["setup", *folders_args], {**local, SETUP_VARIABLE: json.dumps(list(setup_sql))})
        if setup.returncode != 0:
            return BuildOutcome(error=f"setup: {_last_line(setup.stderr)}", digests={})
    plan = _child(python, ["plan", *folders_args, "--", "plan", "prod", "--auto-apply", "--no-prompts",
                           *window.sparkmesh_arguments], local)
    error = "" if plan.returncode == 0 else f"plan (exit {plan.returncode}): {_last_line(plan.stdout + plan.stderr)}"
    read = _child(python, ["read", *folders_args], local)
    if read.returncode != 0:
        return BuildOutcome(error=error or f"read: {_last_line(read.stderr)}", digests={})
    document = json.loads(read.stdout.strip().splitlines()[-1])
    digests = {name: Digest.from_json(value) if isinstance(value, dict) else value for name, value in document.items()}
    digests.update({name: f"set aside by sparkmesh's loader: {why}" for name, why in set_aside.items()})
    return BuildOutcome(error=error, digests=digests)


def _child(python: Path, arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), __file__, *arguments], capture_output=True, text=True, check=False,
                          timeout=BUILD_TIMEOUT_SECONDS, env=env)


def prod_digests(spark, project, built: dict[str, str] | None = None) -> dict[str, Digest | str]:
    """Every table-backed model's prod view in ``spark``'s catalog, digested (or the error reading it). ``built``:
    model -> its physical table, read where no prod view exists (a failed plan promotes nothing), as SQLMesh's side
    reads the tables its failed plan built."""
    from dagster_sparkmesh.snapshot.naming import quote, view_name

    digests: dict[str, Digest | str] = {}
    for name, model in sorted(project.models.items()):
        if not model.enabled or model.kind_name in ("EXTERNAL", "EMBEDDED"):
            continue
        relations = [quote(view_name(name, "prod")), *([quote(built[name])] if built and name in built else [])]
        for relation in relations:
            try:
                digests[name] = digest_table(spark, relation)
                break
            except Exception as error:  # noqa: BLE001 - an unreadable view is a finding
                digests.setdefault(name, f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}")
    return digests


def built_tables(project, folder: Path) -> dict[str, str]:
    """Model -> the physical table of the version this build planned (its snapshot with the model's fingerprint)."""
    from dagster_sparkmesh.snapshot.naming import physical_table
    from dagster_sparkmesh.state.store import open_state_store

    with open_state_store(None, folder) as state:
        snapshots = state.get_snapshots_by_name(list(project.models))
    fingerprints = {name: model.fingerprint for name, model in project.models.items()}
    return {s.name: physical_table(s.name, s.version) for s in snapshots if fingerprints.get(s.name) == s.fingerprint}


def _prepare(folders: list[Path]) -> None:
    from dagster_sparkmesh.project.loader import load_project

    project = load_project(folders[0], more_paths=folders[1:], use_cache=False, set_aside_broken=True)
    set_aside = {}
    for item in project.broken:
        lines = [line.strip() for line in item.error.splitlines() if line.strip()]
        set_aside[item.name or item.path.name] = f"reads {item.cause}" if item.cause else (lines[0] if lines else "")
        item.path.unlink(missing_ok=True)
    print(json.dumps(set_aside))


def _plan(folders: list[Path], cli_arguments: list[str]) -> None:
    from dagster_sparkmesh.cli import main

    paths = [argument for folder in folders for argument in ("-p", str(folder))]
    main(args=[*paths, *cli_arguments], prog_name="sparkmesh")


def _setup(folders: list[Path], statements: list[str]) -> None:
    """Run ``statements`` in the project's local catalog (its ``.sparkmesh/``), where its build then reads."""
    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.project.config import SparkConnection

    try:
        spark = open_session(SparkConnection(mode="local", master="local[2]", config=SPARK_CONF), folders[0], None)
        for statement in statements:
            spark.sql(statement)
    finally:
        close_sessions()


def _read(folders: list[Path]) -> None:
    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.model.table_formats import project_lakehouse_format
    from dagster_sparkmesh.project.config import SparkConnection
    from dagster_sparkmesh.project.loader import load_project

    project = load_project(folders[0], more_paths=folders[1:], use_cache=False, set_aside_broken=True)
    connection = SparkConnection(mode="local", master="local[2]", config=SPARK_CONF)
    table_format = project_lakehouse_format(project.models.values())
    try:
        spark = open_session(connection, folders[0], table_format)
        digests = prod_digests(spark, project, built_tables(project, folders[0]))
    finally:
        close_sessions()
    print(json.dumps({name: d.to_json() if isinstance(d, Digest) else d for name, d in digests.items()}))


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


if __name__ == "__main__":
    import os

    if os.environ.get(REQUIREMENTS_VARIABLE):
        sys.path.append(os.environ[REQUIREMENTS_VARIABLE])
    command, rest = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    folders_given = [Path(a) for a in (rest[:rest.index("--")] if "--" in rest else rest)]
    if command == "prepare":
        _prepare(folders_given)
    elif command == "setup":
        _setup(folders_given, json.loads(os.environ[SETUP_VARIABLE]))
    elif command == "plan":
        _plan(folders_given, rest[rest.index("--") + 1:])
    elif command == "read":
        _read(folders_given)
    else:
        raise SystemExit(__doc__)
