"""Bad input, with nothing written: broken and hostile projects go through the real CLI, in a child process.

Every case must end with exit code 2, a message naming the problem, no traceback, and neither the state store nor
the warehouse folder changed. The corpus reuses the loader's broken projects and adds hostile ones: names meant to
break out of an identifier (quotes, backticks, semicolons, path separators), unreadable files, and bad
environment names on a valid project.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from reliability_harness import run_cli  # registered by conftest.py

TESTS = Path(__file__).resolve().parents[1]
CORPUS_FOLDERS = (TESTS / "project" / "broken", TESTS / "project" / "broken_other")
CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"
VALID_MODEL = "MODEL (name shop.orders, kind FULL);\n\nSELECT 1 AS id\n"
APPLY = ("plan", "{env}", "--auto-apply", "--no-prompts")


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str | bytes]
    environment: str = "prod"


def _model(name: str) -> dict[str, str]:
    return {"models/m.sql": f"MODEL (name {name}, kind FULL);\n\nSELECT 1 AS id\n"}


HOSTILE = (
    Case("name_with_quote", _model("shop.\"a'; DROP TABLE x; --\"")),
    Case("name_with_single_quote", _model("shop.'x'")),
    Case("name_with_backtick", _model("shop.`a` ; DROP DATABASE default; `b`")),
    Case("name_with_backtick_schema", _model("`sh``op`.orders")),
    Case("name_with_semicolon", _model("shop.a;b")),
    Case("name_with_slash", _model("shop/../../etc.passwd")),
    Case("name_with_backslash", _model("shop.a\\b")),
    Case("name_with_dot_dot", _model("../shop.orders")),
    Case("name_unqualified", _model("orders")),
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
)


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
        path = project / relative
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
    before = (_state_rows(project), _warehouse(project))
    result = run_cli(project, *(arg.format(env=environment) for arg in APPLY), timeout=60)
    after = (_state_rows(project), _warehouse(project))
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
    name = case if isinstance(case, str) else case.name
    return {"case": name, "ok": not problems, "problems": problems, "message": result.stderr.strip()[:300]}


def test_corpus_size():
    assert len(_corpus_cases()) + len(HOSTILE) >= 40


@pytest.mark.slow
def test_every_bad_input_is_refused_cleanly_and_writes_nothing(tmp_path):
    cases: list[Case | str] = [*_corpus_cases(), *HOSTILE]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda case: _check(case, tmp_path), cases))
    for result in results:
        print("BAD_INPUT " + json.dumps({"case": result["case"], "ok": result["ok"]}))
    failures = [f"{r['case']}: {', '.join(r['problems'])}\n    {r['message']}" for r in results if not r["ok"]]
    assert not failures, f"{len(failures)} of {len(results)} cases failed:\n" + "\n".join(failures)
