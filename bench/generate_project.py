"""Generate a layered SQLMesh-format project of N models, for load and run benchmarks.

    python bench/generate_project.py --models 300 --out /tmp/bench_300 [--days 90] [--seed 7]

Layer 0 holds FULL source models that make their own rows with Spark's ``sequence``/``explode`` (one row per day
and id), so the project runs on an empty catalog. Every later layer holds INCREMENTAL_BY_TIME_RANGE (``ds``), FULL
and VIEW models reading 1-3 models of earlier layers. All models share one column set (ds, id, category, amount),
so that any choice of parents joins. The output is deterministic for a given (models, days, seed).

``--macros`` writes the same DAG with SQLMesh's macro language the way real projects use it: ``@DEF``, ``@EACH``
over a project variable, ``@IF``, ``@VAR``, ``@SAFE_DIV``, user Python macros from ``macros/`` (one expanded at load
time, one reading the interval) and the macro variables ``@start_ds``/``@end_ds``.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

START = date(2024, 1, 1)
IDS_PER_SOURCE = 20
KINDS = ("INCREMENTAL_BY_TIME_RANGE", "FULL", "VIEW")
KIND_WEIGHTS = (5, 3, 2)
OWNERS = ("analytics", "finance", "marketing", "platform")


@dataclass(frozen=True)
class Spec:
    """One generated model: enough to write its file."""

    name: str
    layer: int
    kind: str
    parents: tuple[str, ...] = field(default_factory=tuple)

    @property
    def relative_path(self) -> Path:
        schema, table = self.name.split(".")
        return Path("models") / schema / f"{table}.sql"


def layer_count(models: int) -> int:
    # Depth grows slowly with size, as in real projects: 30 models → 5 layers, 1,000 → 10.
    return max(2, min(10, round(math.log2(max(models, 2)))))


def plan_specs(models: int, rng: random.Random) -> list[Spec]:
    layers = layer_count(models)
    sources = max(2, models // 15)
    specs = [Spec(name=f"src.source_{index:04d}", layer=0, kind="FULL") for index in range(sources)]
    remaining = models - sources
    by_layer: list[list[Spec]] = [specs[:]]
    for layer in range(1, layers):
        size = remaining // (layers - layer)
        remaining -= size
        current = [_derived_spec(layer, index, by_layer, rng) for index in range(size)]
        by_layer.append(current)
        specs.extend(current)
    return specs


def _derived_spec(layer: int, index: int, by_layer: list[list[Spec]], rng: random.Random) -> Spec:
    # Most parents come from the layer just below, some from deeper ones: a DAG, not a stack of layers.
    previous = by_layer[layer - 1]
    earlier = [spec for lower in by_layer[: layer - 1] for spec in lower]
    count = rng.choice((1, 1, 2, 2, 3))
    parents = {rng.choice(previous).name}
    while len(parents) < count:
        pool = earlier if earlier and rng.random() < 0.3 else previous
        parents.add(rng.choice(pool).name)
        if len(parents) >= len(previous) + len(earlier):
            break
    kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
    return Spec(name=f"layer_{layer:02d}.model_{index:04d}", layer=layer, kind=kind, parents=tuple(sorted(parents)))


def source_sql(spec: Spec, days: int, salt: int) -> str:
    end = START + timedelta(days=days - 1)
    return f"""MODEL (
  name {spec.name},
  kind FULL,
  grain (ds, id),
  owner 'platform',
  description 'Synthetic source: one row per day and id.',
  audits (
    not_null(columns := (ds, id))
  )
);

SELECT
  d.ds,
  k.id,
  CONCAT('c', CAST(PMOD(k.id, 5) AS STRING)) AS category,
  CAST(PMOD(HASH(d.ds, k.id, {salt}), 1000) AS DOUBLE) / 10 AS amount
FROM (
  SELECT EXPLODE(SEQUENCE(DATE'{START.isoformat()}', DATE'{end.isoformat()}', INTERVAL 1 DAY)) AS ds
) AS d
CROSS JOIN (
  SELECT EXPLODE(SEQUENCE(1, {IDS_PER_SOURCE})) AS id
) AS k
"""


def derived_sql(spec: Spec, rng: random.Random, *, macros: bool = False) -> str:
    if macros:
        return f"{_header(spec, rng)}\n\n{_macro_query(spec, rng)}"
    return f"{_header(spec, rng)}\n\n{_query(spec, rng)}"


def _header(spec: Spec, rng: random.Random) -> str:
    if spec.kind == "INCREMENTAL_BY_TIME_RANGE":
        kind = "INCREMENTAL_BY_TIME_RANGE (\n    time_column ds\n  )"
    else:
        kind = spec.kind
    lines = [f"  name {spec.name}", f"  kind {kind}", f"  owner '{rng.choice(OWNERS)}'"]
    if rng.random() < 0.5:
        lines.append(f"  description 'Layer {spec.layer} model reading {len(spec.parents)} upstream model(s).'")
    if spec.kind != "VIEW" and rng.random() < 0.4:
        lines.append("  audits (\n    not_null(columns := (ds, id))\n  )")
    return "MODEL (\n" + ",\n".join(lines) + "\n);"


def _query(spec: Spec, rng: random.Random) -> str:
    aliases = [f"p{index}" for index in range(len(spec.parents))]
    first = aliases[0]
    joins = "".join(
        f"\nJOIN {parent} AS {alias}\n  ON {first}.ds = {alias}.ds AND {first}.id = {alias}.id"
        for parent, alias in zip(spec.parents[1:], aliases[1:])
    )
    amount = " + ".join(f"{alias}.amount" for alias in aliases)
    factor = rng.choice(("1.0", "0.9", "1.1", "2"))
    where = f"\nWHERE\n  {first}.ds BETWEEN @start_ds AND @end_ds" if spec.kind == "INCREMENTAL_BY_TIME_RANGE" else ""
    if rng.random() < 0.25:
        # An aggregating model: keeps the shared column set, so that its own readers can join it like any other.
        return (
            f"SELECT\n  {first}.ds,\n  MIN({first}.id) AS id,\n  {first}.category,\n  SUM({amount}) AS amount\n"
            f"FROM {spec.parents[0]} AS {first}{joins}{where}\nGROUP BY\n  {first}.ds,\n  {first}.category\n"
        )
    bucket = rng.choice((50, 100, 200))
    return (
        f"SELECT\n  {first}.ds,\n  {first}.id,\n"
        f"  CASE WHEN {first}.amount > {bucket} THEN 'high_' || {first}.category ELSE {first}.category END AS category,\n"
        f"  ({amount}) * {factor} AS amount\n"
        f"FROM {spec.parents[0]} AS {first}{joins}{where}\n"
    )


def _macro_query(spec: Spec, rng: random.Random) -> str:
    """The same columns as ``_query`` (plus one per category), written with macros."""
    aliases = [f"p{index}" for index in range(len(spec.parents))]
    first = aliases[0]
    joins = "".join(
        f"\nJOIN {parent} AS {alias}\n  ON {first}.ds = {alias}.ds AND {first}.id = {alias}.id"
        for parent, alias in zip(spec.parents[1:], aliases[1:])
    )
    amounts = ", ".join(f"{alias}.amount" for alias in aliases)
    factor = rng.choice(("1.0", "0.9", "1.1", "2"))
    # @in_window reads the interval, so it is expanded when an interval is rendered, not at load time.
    where = f"\nWHERE\n  @in_window({first}.ds)" if spec.kind == "INCREMENTAL_BY_TIME_RANGE" else ""
    if rng.random() < 0.25:
        return (
            f"@DEF(factor, {factor});\n\n"
            f"SELECT\n  {first}.ds,\n  MIN({first}.id) AS id,\n  {first}.category,\n"
            f"  SUM(@total({amounts})) * @factor AS amount,\n"
            f"  @EACH(@categories, c -> SUM(IF({first}.category = c, {first}.amount, 0)) AS amount_@c),\n"
            f"  @SAFE_DIV(SUM({first}.amount), COUNT(*)) AS mean_amount\n"
            f"FROM {spec.parents[0]} AS {first}{joins}{where}\nGROUP BY\n  {first}.ds,\n  {first}.category\n"
        )
    bucket = rng.choice((50, 100, 200))
    return (
        f"@DEF(bucket, {bucket});\n@DEF(factor, {factor});\n\n"
        f"SELECT\n  {first}.ds,\n  {first}.id,\n"
        f"  @IF(@VAR('label_high', TRUE), @bucketed({first}.amount, @bucket, {first}.category), {first}.category) AS category,\n"
        f"  @total({amounts}) * @factor AS amount,\n"
        f"  @EACH(@categories, c -> IF({first}.category = c, {first}.amount, 0) AS amount_@c)\n"
        f"FROM {spec.parents[0]} AS {first}{joins}{where}\n"
    )


MACRO_FILE = """from sqlglot import exp

from dagster_sparkmesh import macro


@macro()
def total(evaluator, *columns):
    # Expanded at load time: depends only on its arguments.
    return exp.paren(" + ".join(column.sql("spark") for column in columns))


@macro()
def bucketed(evaluator, amount, threshold, category):
    return f"CASE WHEN {amount.sql('spark')} > {threshold.sql('spark')} THEN 'high_' || {category.sql('spark')} ELSE {category.sql('spark')} END"


@macro()
def in_window(evaluator, column):
    # Reads the interval: expanded per interval when rendering.
    return f"{column.sql('spark')} BETWEEN '{evaluator.locals['start_ds']}' AND '{evaluator.locals['end_ds']}'"
"""

MACRO_VARIABLES = """variables:
  categories: [c0, c1, c2, c3, c4]
  label_high: true
"""


CONFIG = """gateways:
  local:
    connection:
      type: spark
default_gateway: local

model_defaults:
  dialect: spark
  start: '{start}'
  cron: '@daily'
"""


def generate_project(
    out: Path, *, models: int, days: int = 90, seed: int = 7, macros: bool = False, table_format: str | None = None
) -> list[Spec]:
    """Write the project into ``out`` (its ``models/`` and ``macros/`` folders are replaced) and return what was
    written; ``macros`` writes the queries with macros (same DAG); ``table_format`` (iceberg, delta) goes into
    ``model_defaults``."""
    if models < 3:
        raise ValueError("a layered project needs at least 3 models")
    rng = random.Random(seed)
    specs = plan_specs(models, rng)
    shutil.rmtree(out / "models", ignore_errors=True)
    shutil.rmtree(out / "macros", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    config = CONFIG.format(start=START.isoformat()) + (f"  table_format: {table_format}\n" if table_format else "")
    (out / "config.yaml").write_text(config + MACRO_VARIABLES if macros else config)
    if macros:
        (out / "macros").mkdir()
        (out / "macros" / "project_macros.py").write_text(MACRO_FILE)
    for spec in specs:
        path = out / spec.relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        text = source_sql(spec, days, salt=rng.randrange(10_000)) if spec.layer == 0 else derived_sql(spec, rng, macros=macros)
        path.write_text(text)
    return specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--macros", action="store_true", help="write the queries with SQLMesh macros")
    args = parser.parse_args()
    specs = generate_project(args.out, models=args.models, days=args.days, seed=args.seed, macros=args.macros)
    kinds = {kind: sum(spec.kind == kind for spec in specs) for kind in KINDS}
    print(f"wrote {len(specs)} models in {layer_count(args.models)} layers to {args.out}: {kinds}")


if __name__ == "__main__":
    main()
