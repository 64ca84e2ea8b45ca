"""The lifecycle fuzzer, long run: seeded random sequences of user actions on the 8-model lifecycle project
(tests/lifecycle), each ending with a promotion of prod compared with a from-scratch build of the same files.

    .venv/bin/python bench/lifecycle_fuzz.py [--sequences 100] [--seed 1] [--length 5] [--minimize] [--keep DIR]
        [--sqlmesh-referee VENV | --no-sqlmesh-referee] [--table-format iceberg|delta]

One local Spark session in this process (own warehouse and metastore in a temporary folder, removed at the end
unless --keep); with --table-format, the session serves that lakehouse format and the project's models ask for it
(the same sequences on Iceberg or Delta tables; SQLMesh's referee builds its copy on the same format). Prints one line per sequence, each failing sequence (minimized with --minimize) as a list of
actions to paste into tests/lifecycle/test_fuzz.py, and the counts: sequences, actions, refusals, divergences.

A second referee, SQLMesh (``bench/sqlmesh_spark/lifecycle_referee.py``): after each sequence, SQLMesh's fresh
build of the same final files on local Spark of its own (a child process of SQLMesh's virtualenv, by default the
compat harness's cached one when it exists), each prod view compared with SQLMesh's; prints sequences refereed,
models compared and every difference. Exit code 1 when any sequence diverged or raised, or SQLMesh's rows differ.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections import Counter
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the fuzzer lives in tests/lifecycle
sys.path.insert(0, str(ROOT / "bench"))  # the SQLMesh referee: bench/sqlmesh_spark, imported by its name
CACHED_REFEREE = Path.home() / ".cache" / "dagster-sparkmesh" / "sqlmesh-0.236.4" / "venv"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--length", type=int, default=5, help="actions per sequence before the final promotion")
    parser.add_argument("--minimize", action="store_true", help="minimize each failing sequence (slow)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--sqlmesh-referee", type=Path, metavar="VENV",
                        default=CACHED_REFEREE if (CACHED_REFEREE / "bin" / "python").exists() else None,
                        help="SQLMesh's virtualenv (default: the compat harness's cached one, when present)")
    parser.add_argument("--no-sqlmesh-referee", action="store_true", help="no SQLMesh build after each sequence")
    parser.add_argument("--table-format", choices=("iceberg", "delta"), help="the models' tables in this format")
    args = parser.parse_args()
    if args.table_format:  # the lifecycle project (tests/lifecycle/project.py) asks for the format the tests serve
        os.environ["SPARKMESH_TEST_TABLE_FORMAT"] = args.table_format
        _serve_format_to_sqlmesh(args.table_format)

    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.project.config import SparkConnection
    from tests.lifecycle.fuzzer import SequenceResult, fuzz

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="lifecycle_fuzz_"))
    workdir.mkdir(parents=True, exist_ok=True)
    connection = SparkConnection(mode="local", master="local[2]", config={"spark.sql.shuffle.partitions": "2"})
    began = time.monotonic()

    def show(number: int, result: SequenceResult) -> None:
        status = "FAIL" if result.failed else "ok"
        print(f"sequence {number}: {status} ({len(result.actions)} actions, {result.seconds:.0f} s)", flush=True)
        if result.failed:
            print(result.describe(), flush=True)

    referee = _sqlmesh_referee(args, workdir)
    try:
        engine = SparkEngine(open_session(connection, workdir / "spark", args.table_format))
        report = fuzz(
            engine, workdir, sequences=args.sequences, seed=args.seed, length=args.length,
            minimize_failures=args.minimize, on_result=show, after_promotion=referee,
        )
    finally:
        close_sessions()
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"{args.table_format or 'default'} layouts, seed {args.seed}: {report.sequences} sequences, {report.actions} actions ({report.refusals} refused), "
        f"{len(report.failures)} failing sequence(s), {report.divergences} divergent view(s), "
        f"{time.monotonic() - began:.0f} s"
    )
    by_model = Counter(d.model for failure in report.failures for d in failure.divergences)
    if by_model:
        print("divergent views by model: " + ", ".join(f"{m} {n}" for m, n in by_model.most_common()))
    if referee is None:
        return 1 if report.failures else 0
    print(referee.summary())
    for line in referee.tally.differences + referee.tally.errors:
        print(f"  {line}")
    return 1 if report.failures or referee.tally.differences else 0


def _serve_format_to_sqlmesh(table_format: str) -> None:
    """SQLMesh's session (and the child reading its catalog) gets the settings that serve the format, as sparkmesh's
    does: the referee's copy of the project asks for the same tables."""
    import json

    from dagster_sparkmesh.engine.lakehouse import lakehouse_settings
    from sqlmesh_spark.settings import EXTRA_CONFIG_VARIABLE

    os.environ[EXTRA_CONFIG_VARIABLE] = json.dumps(lakehouse_settings(table_format))


def _sqlmesh_referee(args, workdir: Path):
    if args.no_sqlmesh_referee or args.sqlmesh_referee is None:
        return None
    from sqlmesh_spark.lifecycle_referee import SqlmeshReferee

    return SqlmeshReferee(args.sqlmesh_referee / "bin" / "python", workdir)


if __name__ == "__main__":
    sys.exit(main())
