"""Bad input, with nothing written: broken and hostile projects go through the real CLI, in a child process.

Every case must end with exit code 2, a message naming the problem, no traceback, and neither the state store nor
the warehouse folder changed. The corpus reuses the loader's broken projects and adds hostile ones: names meant to
break out of an identifier (quotes, backticks, semicolons, path separators), unreadable files, and bad
environment names on a valid project.

``RUNTIME`` cases load fine and fail only against the catalog (a missing external table or schema, a time column
of the wrong type or missing): they run on the suite's shared Spark Connect server and must be refused by the
preflight, before the plan-log row, the snapshots or any table is written.

CI's run (``./dev test``) takes every other case of each list (``harness_cases``); ``./dev test --full`` all of them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reliability_harness import connect_config, run_cli  # registered by conftest.py
from tests.conftest import harness_cases

TESTS = Path(__file__).resolve().parents[1]
CORPUS_FOLDERS = (TESTS / "project" / "broken", TESTS / "project" / "broken_other")
CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"
PYTHON_MODEL = (
    "from dagster_sparkmesh import model\n\n\n"
    '@model("shop.orders", kind={kind})\n'
    "def execute(context, start, end, execution_time, **kwargs):\n"
    "    return context.spark.sql(\"SELECT 1 AS id, DATE'2024-01-01' AS ds\")\n"
)
VALID_MODEL = "MODEL (name shop.orders, kind FULL);\n\nSELECT 1 AS id\n"
APPLY = ("plan", "{env}", "--auto-apply", "--no-prompts")


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str | bytes | None]
    environment: str = "prod"


def _model(name: str) -> dict[str, str]:
    return {"models/m.sql": f"MODEL (name {name}, kind FULL);\n\nSELECT 1 AS id\n"}


_MACRO = "from sqlmesh import macro\n\n\n@macro()\ndef quit_now(evaluator):\n    {body}\n    return 1\n"


def _calls_macro() -> dict[str, str]:
    return {"models/m.sql": "MODEL (name shop.orders, kind FULL);\n\nSELECT @quit_now() AS id\n"}


HOSTILE = (
    Case("name_with_quote", _model("shop.\"a'; DROP TABLE x; --\"")),
    Case("name_with_single_quote", _model("shop.'x'")),
    Case("name_with_backtick", _model("shop.`a` ; DROP DATABASE default; `b`")),
    Case("name_with_backtick_schema", _model("`sh``op`.orders")),
    Case("name_with_semicolon", _model("shop.a;b")),
    Case("name_with_slash", _model("shop/../../etc.passwd")),
    Case("name_with_backslash", _model("shop.a\\b")),
    Case("name_with_dot_dot", _model("../shop.orders")),
    Case("name_with_four_parts", _model("a.b.c.orders")),  # (a bare name is in `default`, as in SQLMesh)
    Case("name_with_space", _model("shop.my orders")),
    Case("external_name_injection", {
        "models/m.sql": VALID_MODEL,
        "external_models.yaml": "- name: raw.x; DROP TABLE y\n  columns:\n    id: int\n",
    }),
    Case("empty_model_file", {"models/m.sql": ""}),
    Case("only_comments", {"models/m.sql": "-- nothing here\n/* still nothing */\n"}),
    Case("non_utf8_model", {"models/m.sql": b"MODEL (name shop.orders, kind FULL);\n\nSELECT '\xff\xfe\xc3' AS x\n"}),
    Case("huge_garbage_model", {"models/m.sql": "MODEL (name shop.orders, kind FULL);\n\nSELECT " + "(" * 20000 + "1"}),
    Case("binary_config", {"config.yaml": b"\x00\x01\x02\xff", "models/m.sql": VALID_MODEL}),
    Case("config_is_a_list", {"config.yaml": "- a\n- b\n", "models/m.sql": VALID_MODEL}),
    Case("config_bad_yaml", {"config.yaml": "model_defaults: [\n", "models/m.sql": VALID_MODEL}),
    Case("env_with_semicolon", {"models/m.sql": VALID_MODEL}, environment="dev; DROP DATABASE default"),
    Case("env_with_backtick", {"models/m.sql": VALID_MODEL}, environment="dev`x"),
    Case("env_with_quote", {"models/m.sql": VALID_MODEL}, environment="dev'--"),
    Case("env_with_path", {"models/m.sql": VALID_MODEL}, environment="../../prod"),
    Case("env_with_dot", {"models/m.sql": VALID_MODEL}, environment="dev.x"),
    Case("env_with_slash", {"models/m.sql": VALID_MODEL}, environment="dev/x"),
    Case("env_with_backslash", {"models/m.sql": VALID_MODEL}, environment="dev\\x"),
    Case("env_with_space", {"models/m.sql": VALID_MODEL}, environment="dev x"),
    Case("env_with_newline", {"models/m.sql": VALID_MODEL}, environment="dev\nx"),
    Case("env_empty", {"models/m.sql": VALID_MODEL}, environment=""),
    Case("env_non_ascii", {"models/m.sql": VALID_MODEL}, environment="dév"),
    Case("python_time_column_with_backtick", {"models/m.py": PYTHON_MODEL.format(
        kind='dict(name="INCREMENTAL_BY_TIME_RANGE", time_column="ds` >= 0; DROP DATABASE default; --")'
    )}),
    Case("python_unique_key_with_quote", {"models/m.py": PYTHON_MODEL.format(
        kind="dict(name=\"INCREMENTAL_BY_UNIQUE_KEY\", unique_key=[\"id') OR ('1\"])"
    )}),
    # Project code that tries to end the process: exit 2 with a message, never its own code (0 looked like success).
    Case("macro_calls_sys_exit", {**_calls_macro(), "macros/m.py": _MACRO.format(body="import sys; sys.exit(3)")}),
    Case("macro_calls_os_exit_0", {**_calls_macro(), "macros/m.py": _MACRO.format(body="import os; os._exit(0)")}),
    Case("macro_file_calls_os_exit_0_at_import", {**_calls_macro(), "macros/m.py": "import os\nos._exit(0)\n"}),
    Case("config_py_calls_os_exit_0", {"config.yaml": None, "config.py": "import os\nos._exit(0)\n",
                                       "models/m.sql": VALID_MODEL}),
    Case("python_model_file_calls_os_exit_0", {"models/m.py": "import os\nos._exit(0)\n"}),
    Case("jinja_division_by_zero", {"models/m.sql": "MODEL (name shop.orders, kind FULL);\n\nSELECT {{ 1/0 }} AS id\n"}),
    Case("jinja_undefined_variable", {"models/m.sql": "MODEL (name shop.orders, kind FULL);\n\nSELECT {{ var('nope') }} AS id\n"}),
    Case("macro_returns_none_in_projection", {"models/m.sql": "MODEL (name shop.orders, kind FULL);\n\nSELECT @nothing() AS id\n",
                                              "macros/m.py": "from sqlmesh import macro\n\n\n@macro()\ndef nothing(evaluator):\n    return None\n"}),
    Case("on_additive_change_unknown", {"models/m.sql": "MODEL (name shop.orders, kind INCREMENTAL_BY_TIME_RANGE "
         "(time_column ds, on_additive_change sometimes));\n\nSELECT DATE'2024-01-01' AS ds\n"}),
    Case("seed_outside_the_project", {"models/m.sql": "MODEL (name shop.seeded, kind SEED (path '../../../../../../etc/passwd'));\n"}),
    Case("python_partitioned_by_with_semicolon", {"models/m.py": PYTHON_MODEL.format(kind='"FULL"').replace(
        'kind="FULL"', 'kind="FULL", partitioned_by=["id; DROP TABLE x"]'
    )}),
)


@dataclass(frozen=True)
class RuntimeCase:
    """A project that loads and plans; only the catalog can tell it is broken. ``{p}``: the case's schema prefix."""

    name: str
    files: dict[str, str]
    expected: str
    setup: tuple[str, ...] = ()
    """Statements run on the shared server before the case (schemas it must find)."""


_EXTERNAL = "- name: {p}_raw.events\n  columns:\n    ds: date\n    id: int\n"
_READS_EXTERNAL = {
    "external_models.yaml": _EXTERNAL,
    "models/stage.sql": "MODEL (name {p}_stg.events, kind VIEW);\n\nSELECT ds, id FROM {p}_raw.events\n",
    "models/daily.sql": "MODEL (name {p}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n\n"
    "SELECT ds, COUNT(*) AS n FROM {p}_stg.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds\n",
}


def _time_range(select: str) -> dict[str, str]:
    header = "MODEL (name {p}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));"
    return {"models/daily.sql": f"{header}\n\n{select}\n"}


RUNTIME = (
    RuntimeCase("external_table_missing", _READS_EXTERNAL, "schema {p}_raw has no table events",
                setup=("CREATE SCHEMA IF NOT EXISTS {p}_raw",)),
    RuntimeCase("external_schema_missing", _READS_EXTERNAL, "schema {p}_raw does not exist"),
    RuntimeCase("time_column_double", _time_range("SELECT 1.5D AS ds, 1 AS n"), "time column ds is a double"),
    RuntimeCase("time_column_int_with_dashed_format", _time_range("SELECT 20240101 AS ds, 1 AS n"),
                "time column ds is an integer (int) but its format 'yyyy-MM-dd'"),
    RuntimeCase("time_column_missing", _time_range("SELECT DATE'2024-01-01' AS day, 1 AS n"),
                "its query returns no column ds"),
    RuntimeCase("time_column_wrong_behind_new_parents", {
        "models/events.sql": "MODEL (name {p}_raw.events, kind FULL);\n\nSELECT TRUE AS ds, 1 AS id\n",
        "models/stage.sql": "MODEL (name {p}_stg.events, kind VIEW);\n\nSELECT ds, id FROM {p}_raw.events\n",
        **_time_range("SELECT ds, COUNT(*) AS n FROM {p}_stg.events GROUP BY ds"),
    }, "time column ds is a boolean"),
)  # fmt: skip


def _corpus_cases() -> list[str]:
    return sorted(
        f"{folder.name}/{case.name}"
        for folder in CORPUS_FOLDERS
        for case in folder.iterdir()
        if (case / "expected.txt").is_file()
    )


def _materialize(case: Case | str, root: Path) -> tuple[Path, str, str]:
    """Copy or write the case's project; return it, the environment and the message fragment expected."""
    if isinstance(case, str):
        source = TESTS / "project" / case
        project = root / case.replace("/", "__")
        shutil.copytree(source, project, ignore=shutil.ignore_patterns("expected.txt", ".sparkmesh"))
        expected = next(line.strip() for line in (source / "expected.txt").read_text().splitlines() if line.strip())
        return project, "prod", expected
    project = root / case.name
    (project / "models").mkdir(parents=True)
    files = {"config.yaml": CONFIG, **case.files}
    for relative, content in files.items():
        if content is None:  # the case removes a default file
            continue
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return project, case.environment, ""


def _state_rows(project: Path) -> dict[str, int]:
    """Rows per table of the project's SQLite state store, except its version stamp ({} when there is none)."""
    database = project / ".sparkmesh" / "state.db"
    if not database.exists():
        return {}
    with sqlite3.connect(database) as connection:
        tables = [t for (t,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {t: connection.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    return {table: count for table, count in counts.items() if count and table != "_versions"}


def _warehouse(project: Path) -> list[str]:
    folder = project / ".sparkmesh" / "warehouse"
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def _check(case: Case | str, root: Path) -> dict:
    project, environment, expected = _materialize(case, root)
    name = case if isinstance(case, str) else case.name
    return _refusal(name, project, environment, expected, lambda: (_state_rows(project), _warehouse(project)))


def _refusal(name: str, project: Path, environment: str, expected: str, snapshot) -> dict:
    """Apply through the CLI; what went wrong with the refusal (``snapshot()`` is what must not change)."""
    before = snapshot()
    result = run_cli(project, *(arg.format(env=environment) for arg in APPLY), timeout=60)
    after = snapshot()
    output = result.stdout + result.stderr
    problems = []
    if result.returncode != 2:
        problems.append(f"exit {result.returncode}")
    if "Traceback" in output:
        problems.append("a traceback was printed")
    if "Error:" not in result.stderr:
        problems.append("no error message on stderr")
    if expected and expected not in output:
        problems.append(f"{expected!r} not in the message")
    if before != after:
        problems.append(f"state/warehouse changed: {before} -> {after}")
    return {"case": name, "ok": not problems, "problems": problems, "message": result.stderr.strip()[:300]}


def _report(results: list[dict]) -> None:
    for result in results:
        print("BAD_INPUT " + json.dumps({"case": result["case"], "ok": result["ok"]}))
    failures = [f"{r['case']}: {', '.join(r['problems'])}\n    {r['message']}" for r in results if not r["ok"]]
    assert not failures, f"{len(failures)} of {len(results)} cases failed:\n" + "\n".join(failures)


def test_corpus_size():
    assert len(_corpus_cases()) + len(HOSTILE) + len(RUNTIME) >= 70


def test_every_bad_input_is_refused_cleanly_and_writes_nothing(tmp_path):
    cases: list[Case | str] = harness_cases([*_corpus_cases(), *HOSTILE], ci_share=2)
    with ThreadPoolExecutor(max_workers=4) as pool:
        _report(list(pool.map(lambda case: _check(case, tmp_path), cases)))


def _catalog(engine, prefix: str) -> dict[str, list[str]]:
    """The case's schemas on the shared server (its own and the physical ``sparkmesh__`` ones) and their tables."""
    schemas = sorted(name for (name,) in engine.catalog.query_rows("SHOW SCHEMAS") if prefix in name)
    return {schema: engine.catalog.list_tables(schema) for schema in schemas}


def test_runtime_bad_inputs_are_refused_before_anything_is_written(tmp_path, connect_server, remote_engine):
    tag = f"bi{uuid.uuid4().hex[:6]}"
    cases = harness_cases(RUNTIME, ci_share=2)
    prefixes = {case.name: f"{tag}_{case.name}" for case in cases}
    projects = {}
    for case in cases:  # every setup first: the server's warehouse must then stay still during all the cases
        projects[case.name] = project = tmp_path / case.name
        (project / "models").mkdir(parents=True)
        files = {"config.yaml": connect_config(connect_server.url), **case.files}
        for relative, text in files.items():
            (project / relative).write_text(text.replace("{p}", prefixes[case.name]))
        for statement in case.setup:
            remote_engine.catalog.execute(statement.format(p=prefixes[case.name]))

    def run(case: RuntimeCase) -> dict:
        project, prefix = projects[case.name], prefixes[case.name]
        server_warehouse = connect_server.folder

        def snapshot():
            return _state_rows(project), _catalog(remote_engine, prefix), _warehouse(server_warehouse)

        return _refusal(case.name, project, "prod", case.expected.format(p=prefix), snapshot)

    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            _report(list(pool.map(run, cases)))
    finally:
        for schema in _catalog(remote_engine, tag):
            remote_engine.catalog.drop_schema(schema, cascade=True)
