"""The write path on both engines: the same project and commands through the in-process session (what the rest of
the suite uses) and through the managed Spark Connect server (what users get by default), whose writes differ by
the code: no write metrics over Connect (a count follows), empty days found another way, every statement a round
trip. Each model's view must hold the same rows, and each run report the same row counts.

Every kind's writer is here, over a sequence that exercises what differs: a first load, a later day and a day with
no rows, a restatement inside the history, a forward-only change that adds a column.
"""

from __future__ import annotations

import re
import textwrap
import uuid
from pathlib import Path

import pytest

from reliability_harness import checksum, connect_config, run_cli  # registered by conftest.py
from tests.cli.sparkmesh_harness import invoke

pytestmark = pytest.mark.slow


SEED_ROWS = "id,name\n1,ann\n2,bob\n3,cid\n"
MODELS = {
    "people.sql": "MODEL (name {p}_src.people, kind SEED (path '../people.csv'));\n",
    # No rows on the 4th: an empty interval must leave the day empty (and be counted 0) on both engines.
    "events.sql": """
        MODEL (name {p}_src.events, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), grain (ds, id));

        SELECT d.ds, p.id, p.id * 10 + dayofmonth(d.ds) AS amount
        FROM (SELECT explode(sequence(CAST(@start_ds AS DATE), CAST(@end_ds AS DATE), INTERVAL 1 DAY)) AS ds) AS d
        CROSS JOIN {p}_src.people AS p
        WHERE dayofmonth(d.ds) <> 4
        """,
    "daily.sql": """
        MODEL (name {p}_m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 2), grain ds);

        SELECT ds, SUM(amount) AS amount, COUNT(*) AS events FROM {p}_src.events
        WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
        """,
    "latest.sql": """
        MODEL (name {p}_m.latest, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id));

        SELECT id, MAX(ds) AS last_ds, MAX_BY(amount, ds) AS last_amount FROM {p}_src.events
        WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY id
        """,
    "totals.sql": """
        MODEL (name {p}_m.totals, kind FULL);

        SELECT p.name, COALESCE(SUM(e.amount), 0) AS amount
        FROM {p}_src.people AS p LEFT JOIN {p}_src.events AS e ON e.id = p.id GROUP BY p.name
        """,
    "history.sql": """
        MODEL (name {p}_m.history, kind SCD_TYPE_2_BY_TIME (unique_key id, updated_at_name updated_at));

        SELECT id, MAX(amount) AS amount, CAST(MAX(ds) AS TIMESTAMP) AS updated_at FROM {p}_src.events GROUP BY id
        """,
    "by_id.sql": """
        MODEL (name {p}_m.by_id, kind INCREMENTAL_BY_PARTITION, partitioned_by id);

        SELECT id, COUNT(*) AS events FROM {p}_src.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY id
        """,
    "log.sql": """
        MODEL (name {p}_m.log, kind INCREMENTAL_UNMANAGED);

        SELECT ds, id FROM {p}_src.events WHERE ds BETWEEN @start_ds AND @end_ds
        """,
    "report.sql": """
        MODEL (name {p}_m.report, kind VIEW);

        SELECT t.*, l.last_ds FROM {p}_m.totals AS t JOIN {p}_src.people AS p ON p.name = t.name
        LEFT JOIN {p}_m.latest AS l ON l.id = p.id
        """,
}
VIEWS = ("src.people", "src.events", "m.daily", "m.latest", "m.totals", "m.history", "m.by_id", "m.log", "m.report")
AT = ("--execution-time", "2024-01-08 00:00")
STEPS = (
    ("plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-03", *AT),
    ("plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-06", *AT),
    ("plan", "prod", "--auto-apply", "--no-prompts", "--restate-model", "{p}_src.events",
     "--start", "2024-01-02", "--end", "2024-01-02", *AT),
    "add a column",
    ("plan", "prod", "--auto-apply", "--no-prompts", "--forward-only", "--effective-from", "2024-01-05",
     "--end", "2024-01-06", *AT),
)


def _write(folder: Path, prefix: str, config: str) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(config)
    (folder / "people.csv").write_text(SEED_ROWS)
    for name, text in MODELS.items():
        (folder / "models" / name).write_text(textwrap.dedent(text).format(p=prefix))
    return folder


def _add_a_column(folder: Path) -> None:
    path = folder / "models" / "events.sql"
    path.write_text(path.read_text().replace("AS amount\n", "AS amount, p.id * 2 AS doubled\n"))


def _row_counts(output: str) -> list[str]:
    """The run report's "model: [range) N rows" lines, without timings."""
    return sorted(re.sub(r" in [0-9.]+ s", "", line.strip()) for line in output.splitlines() if " rows" in line)


def _views(engine, prefix: str) -> dict[str, tuple]:
    views = {}
    for view in VIEWS:
        schema, table = view.split(".")
        name = f"{prefix}_{schema}.{table}"
        views[view] = (checksum(engine, name), [c for c, _ in engine.catalog.columns(name)])
    return views


def test_every_writer_leaves_the_same_rows_on_both_engines(tmp_path, engine, connect_server, remote_engine):
    tag = f"be{uuid.uuid4().hex[:6]}"
    local = _write(tmp_path / "local", tag, connect_config("sc://unused").split("gateways:")[0])
    remote = _write(tmp_path / "remote", tag, connect_config(connect_server.url))
    try:
        for step in STEPS:
            if step == "add a column":
                _add_a_column(local), _add_a_column(remote)
                continue
            args = [part.format(p=tag) for part in step]
            here = invoke(local, args, engine)[0]
            there = run_cli(remote, *args)
            assert here.exit_code == 0, here.output
            assert there.returncode == 0, there.stdout + there.stderr
            assert _row_counts(there.stdout) == _row_counts(here.output), " ".join(args)
        local_views, remote_views = _views(engine, tag), _views(remote_engine, tag)
        assert remote_views == local_views
        assert "doubled" in local_views["src.events"][1]
        assert local_views["m.log"][0][0] > 0 and local_views["src.events"][0][0] == 15  # 3 people x 5 days
    finally:
        for schema in ("src", "m"):
            for which in (engine, remote_engine):
                which.catalog.drop_schema(f"{tag}_{schema}", cascade=True)
                which.catalog.drop_schema(f"sparkmesh__{tag}_{schema}", cascade=True)
