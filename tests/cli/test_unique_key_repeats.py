"""Issue 32, item 3: an INCREMENTAL_BY_UNIQUE_KEY query that returns a key twice is refused whatever the batching
(one batch would keep both rows, two batches the later one), before anything is written, naming the key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.cli.sparkmesh_harness import invoke


LATEST = """
MODEL (name db.latest, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key customer_id), start '2024-01-01', cron '@daily');

SELECT c.customer_id, d.ds AS last_ds
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-06', INTERVAL 1 DAY)) AS ds) AS d
CROSS JOIN (SELECT explode(sequence(1, 3)) AS customer_id) AS c
WHERE d.ds BETWEEN @start_ds AND @end_ds
"""


def _project(folder: Path, query: str) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (folder / "models" / "latest.sql").write_text(textwrap.dedent(query))
    return folder


def _plan(project: Path, engine, end: str):
    args = ["plan", "prod", "--auto-apply", "--no-prompts", "--end", end]
    return invoke(project, args, engine)[0]


@pytest.mark.parametrize("ends", [("2024-01-06",), ("2024-01-03", "2024-01-06")], ids=["one-batch", "two-batches"])
def test_a_repeated_unique_key_is_refused_whatever_the_batching(tmp_path, spark, engine, clean_catalog, ends):
    project = _project(tmp_path / "p", LATEST)
    results = [_plan(project, engine, end) for end in ends]
    refused = results[-1]
    assert refused.exit_code == 2, refused.output
    assert "db.latest" in refused.output and "unique key customer_id = " in refused.output
    assert "latest.sql" in refused.output and "QUALIFY ROW_NUMBER()" in refused.output
    assert not spark.catalog.tableExists("db.latest")  # never promoted: no view with duplicates
    tables = [t.name for t in spark.catalog.listTables("sparkmesh__db") if not t.isTemporary] if spark.catalog.databaseExists(
        "sparkmesh__db") else []
    assert tables == []  # nothing written


def test_one_row_per_key_per_run_upserts_to_the_latest(tmp_path, spark, engine, clean_catalog):
    deduplicated = LATEST.replace("WHERE d.ds BETWEEN @start_ds AND @end_ds", (
        "WHERE d.ds BETWEEN @start_ds AND @end_ds\n"
        "QUALIFY ROW_NUMBER() OVER (PARTITION BY c.customer_id ORDER BY d.ds DESC) = 1"
    ))
    project = _project(tmp_path / "p", deduplicated)
    for end in ("2024-01-03", "2024-01-06"):
        result = _plan(project, engine, end)
        assert result.exit_code == 0, result.output
    rows = spark.sql("SELECT customer_id, CAST(last_ds AS STRING) FROM db.latest ORDER BY customer_id").collect()
    assert [tuple(r) for r in rows] == [(1, "2024-01-06"), (2, "2024-01-06"), (3, "2024-01-06")]
