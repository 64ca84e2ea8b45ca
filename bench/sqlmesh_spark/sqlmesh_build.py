"""SQLMesh's fresh build of a project on local Spark, run by the referee's own Python (the virtualenv with SQLMesh
and pyspark installed):

    python sqlmesh_build.py REQUEST_JSON_FILE

The request names the project folders (a copy: SQLMesh writes its cache there), the plan's execution time, the
folder of the Spark catalog and DuckDB state, and SQL to run first (tables the project reads as externals). Each
folder's own config is loaded and given one more gateway, local Spark, made the default; then a production plan is
applied (a production plan takes no start in SQLMesh: every model from its own start up to the execution time).
One JSON document goes to stdout: the plan's error if any, and per model its kind, dependencies, the text the
non-determinism rule reads, and the digest of its prod view (or why there is none).

Imports: the standard library, SQLMesh, pyspark, and this folder's stdlib-only ``digest`` and ``settings`` (its ``__init__`` imports nothing); this
file never runs in sparkmesh's environment.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: this folder's stdlib-only modules by path

from sqlmesh_spark.digest import digest_table  # noqa: E402
from sqlmesh_spark.settings import CONCURRENT_TASKS, local_spark_config, state_database  # noqa: E402

GATEWAY = "sparkmesh_referee_spark"


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    # SQLMesh prints progress on stdout; only our JSON document may go there.
    with contextlib.redirect_stdout(io.StringIO()):
        result = build(request)
    print(json.dumps(result))


def build(request: dict) -> dict:
    folder = Path(request["spark_folder"])
    spark = _session(folder)
    for statement in request.get("setup_sql", []):
        spark.sql(statement)
    try:
        context = _context(request["paths"], folder)
    except Exception as error:  # a project that does not load is a result
        return {"error": f"load: {_one_line(error)}", "models": {}}
    error = ""
    try:
        context.plan("prod", execution_time=request["execution_time"], auto_apply=True, no_prompts=True,
                     skip_tests=True, skip_linter=True)
    except Exception as raised:  # a failed plan still leaves the models it built: read those
        error = f"plan: {_one_line(raised)}"
    models = {
        _short_name(model.fqn, context): _model_result(context, spark, model, promoted=not error)
        for model in context.models.values()
        if not model.kind.is_external
    }
    return {"error": error, "models": models}


def _session(folder: Path):
    """The session SQLMesh's Spark connection will find (it calls ``getOrCreate`` with the same settings)."""
    from pyspark.conf import SparkConf
    from pyspark.sql import SparkSession

    (folder / "metastore").mkdir(parents=True, exist_ok=True)
    conf = SparkConf()
    for key, value in local_spark_config(folder).items():
        conf.set(key, value)
    return SparkSession.builder.config(conf=conf).enableHiveSupport().getOrCreate()


def _context(paths: list[str], folder: Path):
    from sqlmesh import Context
    from sqlmesh.core.config import Config, DuckDBConnectionConfig, GatewayConfig, SparkConnectionConfig
    from sqlmesh.core.config.loader import load_configs

    spark_gateway = GatewayConfig(
        connection=SparkConnectionConfig(config=local_spark_config(folder), concurrent_tasks=CONCURRENT_TASKS),
        state_connection=DuckDBConnectionConfig(database=str(state_database(folder))),
    )
    configs = {}
    for path, config in load_configs(None, Config, paths).items():
        # The project's own gateways are kept (their variables may be read), those that name a connection (SQLMesh
        # refuses a gateway without one, e.g. the empty default of a config that declares none); ours is the default.
        declared = dict(config.gateways) if isinstance(config.gateways, dict) else {}
        gateways = {name: gateway for name, gateway in declared.items() if gateway.connection is not None}
        configs[path] = config.model_copy(
            update={"gateways": {**gateways, GATEWAY: spark_gateway}, "default_gateway": GATEWAY}
        )
    return Context(paths=paths, config=configs, gateway=GATEWAY, load=True)


def _model_result(context, spark, model, promoted: bool) -> dict:
    result = {
        "kind": str(getattr(model.kind.name, "value", model.kind.name)),
        "python": bool(model.is_python),
        "depends_on": sorted(_short_name(parent, context) for parent in model.depends_on if parent != model.fqn),
        "source": _source_text(model),
        "digest": None,
        "missing": "",
    }
    if model.kind.is_embedded:
        result["missing"] = "embedded: no table of its own"
        return result
    try:
        result["digest"] = digest_table(spark, _relation(context, model, promoted)).to_json()
    except Exception as error:
        result["missing"] = _one_line(error)
    return result


def _relation(context, model, promoted: bool) -> str:
    """The prod view; after a failed plan (no view was promoted) the physical table the view would read."""
    from sqlglot import exp

    if promoted:
        return exp.to_table(model.fqn).sql(dialect="spark", identify=True)
    snapshot = context.get_snapshot(model.fqn)
    return exp.to_table(snapshot.table_name()).sql(dialect="spark", identify=True)


def _source_text(model) -> str:
    """What the non-determinism rule reads: the query as written (macros unexpanded), or a Python model's code."""
    if model.is_python:
        return "\n".join(str(getattr(executable, "payload", "")) for executable in model.python_env.values())
    query = getattr(model, "query", None)
    return query.sql(dialect=model.dialect) if query is not None else ""


def _short_name(fqn: str, context) -> str:
    """``"spark_catalog"."sushi"."orders"`` -> ``sushi.orders``: the gateway's default catalog is dropped."""
    from sqlglot import exp

    parts = [part.name.lower() for part in exp.to_table(fqn).parts]
    if len(parts) == 3 and parts[0] == (context.default_catalog or "").lower():
        parts = parts[1:]
    return ".".join(parts)


def _one_line(error: BaseException) -> str:
    """The message's lines joined: SQLMesh's first line names the statement, the last one Spark's error."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {' / '.join(lines)[:600]}"


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
