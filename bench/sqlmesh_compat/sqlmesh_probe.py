"""SQLMesh's side of the comparison, run by the referee's own Python (the virtualenv with SQLMesh installed).

    python sqlmesh_probe.py REQUEST_JSON

The request names the project folders, the interval and whether to run the unit tests; one JSON document goes to
stdout: whether the project loads, its models (dependencies, rendered query), its unit tests' outcomes. Only the
standard library and SQLMesh are imported: this file never runs in sparkmesh's environment, and sparkmesh never
imports it.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from datetime import datetime


def main() -> None:
    request = json.loads(sys.argv[1])
    # SQLMesh prints progress and warnings on stdout; only our JSON document may go there.
    with contextlib.redirect_stdout(io.StringIO()):
        result = probe(request)
    print(json.dumps(result))


def probe(request: dict) -> dict:
    try:
        context = _context(request["paths"], request.get("gateway"))
    except Exception as error:  # a project that does not load is a result, not a crash of the harness
        return {"loaded": False, "error": _one_line(error), "models": {}, "externals": {}, "unit_tests": {}}
    interval = {key: datetime.fromisoformat(request[key]) for key in ("start", "end", "execution_time")}
    if request.get("runtime_stage"):  # e.g. "evaluating": render what runs (SQLMesh's default stage is loading)
        from sqlmesh.core.macros import RuntimeStage

        interval["runtime_stage"] = RuntimeStage(request["runtime_stage"])
    return {
        "loaded": True,
        "error": "",
        "default_catalog": context.default_catalog or "",
        "models": {
            _short_name(m.fqn, context): _model_facts(m, context, interval)
            for m in context.models.values()
            if not m.kind.is_external
        },
        "externals": {
            _short_name(m.fqn, context): _spark_columns(m)
            for m in context.models.values()
            if m.kind.is_external
        },
        "unit_tests": _unit_tests(context) if request.get("unit_tests", True) else {},
    }


def _context(paths: list[str], gateway: str | None):
    from sqlmesh import Context

    return Context(paths=paths, gateway=gateway, load=True)


def _model_facts(model, context, interval: dict) -> dict:
    facts = {
        "kind": model.kind.name.value if hasattr(model.kind.name, "value") else str(model.kind.name),
        "dialect": model.dialect or "",
        "depends_on": sorted(_short_name(parent, context) for parent in model.depends_on if parent != model.fqn),
        "columns": _spark_columns(model),
        "sql": None,
        "render_error": "",
        "statements": None,
    }
    if model.pre_statements or model.post_statements:
        try:
            rendered = [*model.render_pre_statements(**interval), *model.render_post_statements(**interval)]
            facts["statements"] = [statement.sql(dialect=model.dialect) for statement in rendered]
        except Exception as error:
            facts["render_error"] = facts["render_error"] or f"statements: {_one_line(error)}"
    if model.is_sql:
        try:
            facts["sql"] = _rendered(model, context, interval).sql(dialect=model.dialect)
        except Exception as error:
            facts["render_error"] = _one_line(error)
    return facts


def _rendered(model, context, interval: dict):
    """The query with the models' names (no physical tables: nothing is planned here) and the embedded models it
    reads inlined as subqueries, as SQLMesh's evaluation inlines them."""
    from sqlglot import exp

    query = model.render_query(**interval)
    if query is None:
        raise ValueError("rendered no query")
    models_by_name = {_short_name(m.fqn, context): m for m in context.models.values()}

    def inline(node):
        if isinstance(node, exp.Table) and node.name:
            parent = models_by_name.get(_short_name(exp.table_name(node, identify=True), context))
            if parent is not None and parent.kind.is_embedded and parent.fqn != model.fqn:
                alias = node.alias_or_name
                alias = exp.TableAlias(this=exp.to_identifier(alias))
                return exp.Subquery(this=_rendered(parent, context, interval), alias=alias)
        return node

    return query.transform(inline)


def _spark_columns(model) -> dict:
    return {name: dtype.sql(dialect="spark") for name, dtype in (model.columns_to_types or {}).items()}


def _unit_tests(context) -> dict:
    """Test name -> {"passed": bool, "message": str}. SQLMesh runs them on its own test connection (DuckDB)."""
    result = context.test(stream=io.StringIO())
    outcomes = {_test_name(test): {"passed": True, "message": ""} for test in result.successes}
    for test, problem in [*result.failures, *result.errors]:
        outcomes[_test_name(test)] = {"passed": False, "message": _first_line(problem)}
    return outcomes


def _test_name(test) -> str:
    return getattr(test, "test_name", None) or str(test)


def _short_name(fqn: str, context) -> str:
    """``"memory"."sushi"."orders"`` -> ``sushi.orders``: the gateway's default catalog is dropped, any other kept."""
    from sqlglot import exp

    table = exp.to_table(fqn)
    parts = [part.name.lower() for part in table.parts]
    if len(parts) == 3 and parts[0] == (context.default_catalog or "").lower():
        parts = parts[1:]
    return ".".join(parts)


def _one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {_first_line(str(error))}"


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
