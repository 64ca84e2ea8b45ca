"""The lifecycle fuzzer, long run: seeded random sequences of user actions on the 8-model lifecycle project
(tests/lifecycle), each ending with a promotion of prod compared with a from-scratch build of the same files.

    .venv/bin/python bench/lifecycle_fuzz.py [--sequences 100] [--seed 1] [--length 5] [--minimize] [--keep DIR]

One local Spark session in this process (own warehouse and metastore in a temporary folder, removed at the end
unless --keep). Prints one line per sequence, each failing sequence (minimized with --minimize) as a list of
actions to paste into tests/lifecycle/test_fuzz.py, and the counts: sequences, actions, refusals, divergences.
Exit code 1 when any sequence diverged or raised.
"""

from __future__ import annotations

import argparse
import shutil
from collections import Counter
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the fuzzer lives in tests/lifecycle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--length", type=int, default=5, help="actions per sequence before the final promotion")
    parser.add_argument("--minimize", action="store_true", help="minimize each failing sequence (slow)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()

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

    try:
        engine = SparkEngine(open_session(connection, workdir / "spark"))
        report = fuzz(
            engine, workdir, sequences=args.sequences, seed=args.seed, length=args.length,
            minimize_failures=args.minimize, on_result=show,
        )
    finally:
        close_sessions()
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"seed {args.seed}: {report.sequences} sequences, {report.actions} actions ({report.refusals} refused), "
        f"{len(report.failures)} failing sequence(s), {report.divergences} divergent view(s), "
        f"{time.monotonic() - began:.0f} s"
    )
    by_model = Counter(d.model for failure in report.failures for d in failure.divergences)
    if by_model:
        print("divergent views by model: " + ", ".join(f"{m} {n}" for m, n in by_model.most_common()))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
