"""sparkmesh's fresh build of a project on local Spark, as a user types it: ``sparkmesh plan prod --auto-apply
--no-prompts --end DAY --execution-time NEXT_MIDNIGHT`` (``mode: local``, so the command's own process holds the
session and its catalog is the project's ``.sparkmesh/``), then every model's prod view read back in a second
process of this environment:

    python sparkmesh_build.py read PROJECT_FOLDER [MORE_FOLDERS...]

which prints one JSON document: model -> digest (``digest.py``, the same reduction SQLMesh's side makes) or why
there is none. No ``--start``: SQLMesh refuses one for a production plan, so both tools start every model at its
own start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench/, one name for the package

from sqlmesh_spark.digest import Digest, digest_table  # noqa: E402
from sqlmesh_spark.records import BuildOutcome, Window  # noqa: E402
from sqlmesh_spark.settings import SHUFFLE_PARTITIONS  # noqa: E402

BUILD_TIMEOUT_SECONDS = 1800
SPARK_CONF = {"spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS), "spark.sql.session.timeZone": "UTC"}


def sparkmesh_build(python: Path, folders: list[Path], window: Window, env: dict[str, str]) -> BuildOutcome:
    """``python``: this environment's interpreter (its ``sparkmesh`` entry point is next to it)."""
    sparkmesh = python.parent / "sparkmesh"
    paths = [argument for folder in folders for argument in ("-p", str(folder))]
    local = {**env, "SPARKMESH_SPARK_MODE": "local", "SPARKMESH_SPARK_MASTER": "local[2]",
             "SPARKMESH_SPARK_CONF": json.dumps(SPARK_CONF), "SPARK_LOCAL_IP": "127.0.0.1"}
    plan = subprocess.run(
        [str(sparkmesh), *paths, "plan", "prod", "--auto-apply", "--no-prompts", "--end", window.end,
         "--execution-time", window.execution_time],
        capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_SECONDS, env=local,
    )
    error = "" if plan.returncode == 0 else f"plan (exit {plan.returncode}): {_last_line(plan.stdout + plan.stderr)}"
    read = subprocess.run(
        [str(python), __file__, "read", *map(str, folders)],
        capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_SECONDS, env=local,
    )
    if read.returncode != 0:
        return BuildOutcome(error=error or f"read: {_last_line(read.stderr)}", digests={})
    document = json.loads(read.stdout.strip().splitlines()[-1])
    digests = {name: Digest.from_json(value) if isinstance(value, dict) else value for name, value in document.items()}
    return BuildOutcome(error=error, digests=digests)


def prod_digests(spark, project) -> dict[str, Digest | str]:
    """Every table-backed model's prod view in ``spark``'s catalog, digested (or the error reading it)."""
    from dagster_sparkmesh.snapshot.naming import quote, view_name

    digests: dict[str, Digest | str] = {}
    for name, model in sorted(project.models.items()):
        if not model.enabled or model.kind_name in ("EXTERNAL", "EMBEDDED"):
            continue
        try:
            digests[name] = digest_table(spark, quote(view_name(name, "prod")))
        except Exception as error:  # noqa: BLE001 - an unreadable view is a finding
            digests[name] = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
    return digests


def _read(folders: list[Path]) -> None:
    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.project.config import SparkConnection
    from dagster_sparkmesh.project.loader import load_project

    project = load_project(folders[0], more_paths=folders[1:], use_cache=False, set_aside_broken=True)
    connection = SparkConnection(mode="local", master="local[2]", config=SPARK_CONF)
    try:
        digests = prod_digests(open_session(connection, folders[0]), project)
    finally:
        close_sessions()
    print(json.dumps({name: d.to_json() if isinstance(d, Digest) else d for name, d in digests.items()}))


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


if __name__ == "__main__":
    if sys.argv[1:2] != ["read"]:
        raise SystemExit(__doc__)
    _read([Path(folder) for folder in sys.argv[2:]])
