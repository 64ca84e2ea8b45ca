"""SQLMesh's side: ``sqlmesh_build.py`` run by the referee's interpreter, its JSON read into the shared records;
and the one package the referee's virtualenv needs for it beside SQLMesh, pyspark, at the version sparkmesh runs."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import version
from pathlib import Path

from sqlmesh_spark.digest import Digest
from sqlmesh_spark.records import BuildOutcome, ModelSource, Window

SCRIPT = Path(__file__).with_name("sqlmesh_build.py")
BUILD_TIMEOUT_SECONDS = 1800


class RefereeSparkError(RuntimeError):
    """The referee's virtualenv cannot run SQLMesh on Spark (pyspark missing and not installable)."""


def ensure_pyspark(python: Path) -> None:
    """Install sparkmesh's pyspark version into the referee's virtualenv, once: both tools then run the same Spark."""
    wanted = version("pyspark")
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('pyspark'))"],
                           capture_output=True, text=True, check=False)
    if probe.returncode == 0 and probe.stdout.strip() == wanted:
        return
    install = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", f"pyspark=={wanted}"],
                             capture_output=True, text=True, check=False)
    if install.returncode != 0:
        raise RefereeSparkError(f"could not install pyspark=={wanted} for {python}:\n{install.stderr[-2000:]}")


def sqlmesh_build(python: Path, folders: list[Path], window: Window, spark_folder: Path, env: dict[str, str],
                  setup_sql: tuple[str, ...] = ()) -> BuildOutcome:
    """SQLMesh's fresh production build of ``folders`` (copies: SQLMesh writes its cache into them) on local Spark
    whose catalog and state live in ``spark_folder``."""
    spark_folder.mkdir(parents=True, exist_ok=True)
    request = spark_folder / "request.json"
    request.write_text(json.dumps({
        "paths": [str(folder) for folder in folders], "execution_time": window.execution_time,
        "spark_folder": str(spark_folder), "setup_sql": list(setup_sql),
    }))
    result = subprocess.run(
        [str(python), str(SCRIPT), str(request)], capture_output=True, text=True, check=False,
        timeout=BUILD_TIMEOUT_SECONDS, cwd=folders[0], env={**env, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    if result.returncode != 0:
        return BuildOutcome(error=f"crashed (exit {result.returncode}): {result.stderr.strip()[-500:]}", digests={})
    return outcome_from_json(json.loads(result.stdout.strip().splitlines()[-1]))


def outcome_from_json(document: dict) -> BuildOutcome:
    digests: dict[str, Digest | str] = {}
    sources = {}
    for name, model in document["models"].items():
        sources[name] = ModelSource(kind=model["kind"], python=model["python"],
                                    depends_on=tuple(model["depends_on"]), source=model["source"])
        if model["kind"].upper() == "EMBEDDED":
            continue  # inlined into its readers: no table to compare (sparkmesh reports none either)
        digests[name] = Digest.from_json(model["digest"]) if model["digest"] else model["missing"]
    return BuildOutcome(error=document["error"], digests=digests, sources=sources)
