"""One SQLMesh-format project built fresh on local Spark by SQLMesh and by sparkmesh, each model's rows compared:

    .venv/bin/python bench/sqlmesh_spark FOLDER [FOLDER ...] --end YYYY-MM-DD [--at 'YYYY-MM-DD HH:MM'] [--referee VENV]

Both tools plan prod from every model's own start to ``--end`` (inclusive), their clock the midnight after it;
with ``--at``, up to that clock (where ``allow_partials`` models compute their interval so far).
SQLMesh runs in its own virtualenv (default: the compat harness's, ``~/.cache/dagster-sparkmesh/sqlmesh-0.236.4/
venv``; pyspark is installed into it at sparkmesh's version when missing). Prints one line per model (equal,
different and how, excluded by the non-determinism rule and why, unreadable) and the counts; exit code 1 when a
model differs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a folder: import the package by its name

from sqlmesh_spark.records import DIFFERENT, EQUAL, EXCLUDED, UNREADABLE, Window  # noqa: E402
from sqlmesh_spark.runner import compare_on_spark, describe  # noqa: E402

CACHE = Path.home() / ".cache" / "dagster-sparkmesh" / "sqlmesh-0.236.4"
DEFAULT_REFEREE = CACHE / "venv"
DEFAULT_REQUIREMENTS = CACHE / "project-requirements"  # the compat harness installs SQLMesh's examples' imports there


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--end", required=True, help="the last day built (inclusive)")
    parser.add_argument("--at", help="both plans' clock instead of the midnight after --end (YYYY-MM-DD HH:MM)")
    parser.add_argument("--referee", type=Path, default=DEFAULT_REFEREE, help="SQLMesh's virtualenv")
    parser.add_argument("--requirements", type=Path, default=DEFAULT_REQUIREMENTS if DEFAULT_REQUIREMENTS.is_dir() else None,
                        help="a folder of the project's own imports, for sparkmesh's side (after its packages)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sqlmesh_spark_") as scratch:
        comparison = compare_on_spark(args.referee / "bin" / "python", [f.resolve() for f in args.folders],
                                      Window(end=args.end, at=args.at), Path(scratch), dict(os.environ), args.requirements)
    print("\n".join(describe(comparison)))
    print(", ".join(f"{comparison.count(o)} {o}" for o in (EQUAL, DIFFERENT, EXCLUDED, UNREADABLE)))
    return 1 if comparison.count(DIFFERENT) else 0


if __name__ == "__main__":
    sys.exit(main())
