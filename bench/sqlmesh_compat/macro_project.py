"""A small SQLMesh-format project the harness writes itself: SQLMesh's built-in macros that the examples do not
use (@PIVOT, @FILTER, @UNION as a whole query, @DEDUPLICATE, @DATE_SPINE, @STAR over a declared external), so
that SQLMesh's own renders referee them too. It is listed apart from SQLMesh's examples on the scoreboard."""

from __future__ import annotations

from pathlib import Path

from sqlmesh_compat.records import ExampleProject

NAME = "macro_probe"

FILES = {
    "config.yaml": "gateways:\n  local:\n    connection:\n      type: duckdb\ndefault_gateway: local\n"
                   "model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n",
    "external_models.yaml": "- name: raw.events\n  columns:\n    id: int\n    kind: text\n    amount: double\n",
    "models/src.sql": "MODEL (name m.src, kind FULL);\n"
                      "SELECT 1 AS id, 'a' AS status, 1 AS a, 2 AS b, 3 AS c, CAST('2024-01-01' AS TIMESTAMP) AS ts\n",
    "models/src2.sql": "MODEL (name m.src2, kind FULL);\n"
                       "SELECT 2 AS id, 'b' AS status, 4 AS a, 5 AS b, 6 AS c, CAST('2024-01-02' AS TIMESTAMP) AS ts\n",
    "models/pivot.sql": "MODEL (name m.pivot, kind FULL);\nSELECT id, @PIVOT(status, ['a', 'b']) FROM m.src GROUP BY id\n",
    "models/filter.sql": "MODEL (name m.filtered, kind FULL);\nSELECT @FILTER([a, b, c], x -> x <> c) FROM m.src\n",
    "models/union.sql": "MODEL (name m.unioned, kind FULL);\n@UNION('distinct', m.src, m.src2)\n",
    "models/dedup.sql": "MODEL (name m.dedup, kind FULL);\n@DEDUPLICATE(m.src, [id], ['ts desc'])\n",
    "models/spine.sql": "MODEL (name m.spine, kind FULL);\n@DATE_SPINE('day', '2024-01-01', '2024-01-03')\n",
    "models/star.sql": "MODEL (name m.star, kind FULL);\nSELECT @STAR(raw.events, exclude := [kind]) FROM raw.events\n",
}


SETUP_SQL = (
    "CREATE DATABASE IF NOT EXISTS raw",
    "CREATE TABLE raw.events USING parquet AS SELECT * FROM VALUES (1, 'click', 1.5), (2, 'view', 2.5) "
    "AS events(id, kind, amount)",
)
"""The declared external, with rows, in each tool's catalog for the ``--spark`` stage (``@STAR`` reads it)."""


def write_macro_project(under: Path) -> ExampleProject:
    root = under / NAME
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return ExampleProject(NAME, (NAME,), source=under, setup_sql=SETUP_SQL)
