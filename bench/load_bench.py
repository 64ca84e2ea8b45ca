"""How long does loading a project take, cold (no parse cache) and warm (cache populated)?

    python bench/load_bench.py --models 30 300 1000 [--repeats 3] [--days 90] [--macros]

For each size, generates a layered project (bench/generate_project.py) in a temporary folder and times
``dagster_sparkmesh.project.loader.load_project`` in a fresh Python process per measurement, as a CLI call or a
Dagster code-location load would meet it: no in-memory state survives between runs, only the on-disk cache.
Cold = ``.sparkmesh/cache`` removed first; warm = the cache left by the previous load. Imports are timed apart.
``--macros``: the models are written with SQLMesh macros (``generate_project.py --macros``).
Prints the median of the repeats as a table, then the 1,000-model figures against the issue's targets (cold < 2 s,
warm < 0.5 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_project import generate_project  # noqa: E402 (a sibling script, not a package)
from timing import Row as TargetRow  # noqa: E402
from timing import print_table as print_targets  # noqa: E402
from timing import verdict  # noqa: E402

TARGET_MODELS = 1000
COLD_TARGET_S = 2.0
WARM_TARGET_S = 0.5

# Runs in the child process: one import and one load, each timed; prints JSON on the last line.
# CPU counts the load's worker processes too (``project.parallel_parse``), once they have ended.
MEASURE = """
import json, resource, sys, time
def cpu():
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
started = time.perf_counter()
from dagster_sparkmesh.project.loader import load_project
imported, cpu_before = time.perf_counter(), cpu()
project = load_project(sys.argv[1])
loaded, cpu_after = time.perf_counter(), cpu()
print(json.dumps({"import_s": imported - started, "load_s": loaded - imported, "load_cpu_s": cpu_after - cpu_before,
                  "models": len(project.models)}))
"""


@dataclass(frozen=True)
class Measurement:
    import_s: float
    load_s: float
    load_cpu_s: float
    """The load's CPU time, its worker processes' included: what the load costs when other processes share the cores
    (the wall time grows)."""
    models: int


@dataclass(frozen=True)
class Row:
    models: int
    cold_s: float
    warm_s: float
    import_s: float
    cold_cpu_s: float
    warm_cpu_s: float


def measure(project: Path) -> Measurement:
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, str(project)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"load_project failed on {project}:\n{result.stderr.strip()}")
    return Measurement(**json.loads(result.stdout.strip().splitlines()[-1]))


def bench_size(models: int, *, repeats: int, days: int, workdir: Path, macros: bool = False) -> Row:
    project = workdir / f"project_{models}"
    generate_project(project, models=models, days=days, macros=macros)
    cache = project / ".sparkmesh" / "cache"
    cold, warm = [], []
    for _ in range(repeats):
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(measure(project))
        warm.append(measure(project))
    loaded = {m.models for m in cold + warm}
    if loaded != {models}:
        raise SystemExit(f"expected {models} models, the loader returned {sorted(loaded)}")
    return Row(
        models=models,
        cold_s=statistics.median(m.load_s for m in cold),
        warm_s=statistics.median(m.load_s for m in warm),
        import_s=statistics.median(m.import_s for m in cold + warm),
        cold_cpu_s=statistics.median(m.load_cpu_s for m in cold),
        warm_cpu_s=statistics.median(m.load_cpu_s for m in warm),
    )


def print_table(rows: list[Row]) -> None:
    print(f"{'models':>7}  {'cold load (s)':>13}  {'warm load (s)':>13}  {'cold CPU (s)':>12}  {'warm CPU (s)':>12}"
          f"  {'import (s)':>10}")
    for row in rows:
        print(f"{row.models:>7}  {row.cold_s:>13.3f}  {row.warm_s:>13.3f}  {row.cold_cpu_s:>12.3f}"
              f"  {row.warm_cpu_s:>12.3f}  {row.import_s:>10.3f}")


def target_rows(rows: list[Row], variant: str) -> list[TargetRow]:
    """The load of 1,000 models against the targets (cold: no parse cache; warm: the cache of the previous load)."""
    return [
        TargetRow(f"{row.models} {variant}: load_project, {label}", f"< {target:g} s",
                  f"{seconds:.3f} s (CPU {cpu:.3f} s)", verdict(seconds < target))
        for row in rows if row.models == TARGET_MODELS
        for label, seconds, cpu, target in (("cold", row.cold_s, row.cold_cpu_s, COLD_TARGET_S),
                                            ("warm", row.warm_s, row.warm_cpu_s, WARM_TARGET_S))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, nargs="+", default=[30, 300, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--macros", action="store_true", help="models written with SQLMesh macros")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparkmesh_load_bench_") as tmp:
        rows = [
            bench_size(n, repeats=args.repeats, days=args.days, workdir=Path(tmp), macros=args.macros)
            for n in args.models
        ]
    variant = "models with macros" if args.macros else "plain SQL models"
    print(f"load_project, {variant}, median of {args.repeats} (fresh process each; python {sys.version.split()[0]};"
          f" load average {os.getloadavg()[0]:.2f})")
    print_table(rows)
    targets = target_rows(rows, variant)
    if targets:
        print_targets("Targets (fresh process each, median; imports not counted)", targets)


if __name__ == "__main__":
    main()
