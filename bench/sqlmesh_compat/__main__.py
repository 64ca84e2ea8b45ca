"""SQLMesh's own example projects, side by side in SQLMesh and sparkmesh (issue 33's differential harness):

    .venv/bin/python bench/sqlmesh_compat [--project NAME ...] [--no-unit-tests] [--spark [--spark-end DAY]] [--write-readme]

Downloads SQLMesh's source distribution and installs SQLMesh in a virtualenv of its own, both cached under
``~/.cache/dagster-sparkmesh/`` (``SPARKMESH_COMPAT_CACHE`` moves it); SQLMesh never enters sparkmesh's environment.
For every SQLMesh-format example: load (models, dependencies), render (every model for one interval, in a canonical
form), unit tests (pass/fail per test); with ``--spark``, both tools' fresh production builds on local Spark (each
from its models' starts to ``--spark-end``, default yesterday UTC: some examples start "1 week ago"), each model's
rows compared (``bench/sqlmesh_spark``). Prints the scoreboard; ``--write-readme`` keeps it in ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a folder: import the package by its name

from sqlmesh_compat.harness import run_comparison  # noqa: E402
from sqlmesh_compat.records import SQLMESH_VERSION  # noqa: E402
from sqlmesh_compat.referee import prepare_referee  # noqa: E402
from sqlmesh_compat.scoreboard import markdown, write_readme_section  # noqa: E402
from sqlmesh_spark.records import Window  # noqa: E402

README = Path(__file__).resolve().parent.parent / "README.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", help="compare only this example (repeatable)")
    parser.add_argument("--no-unit-tests", action="store_true", help="skip the unit tests (no Spark session)")
    parser.add_argument("--spark", action="store_true", help="also build every project on Spark, compare rows")
    parser.add_argument("--spark-end", default=_yesterday(), help="the last day the Spark builds cover")
    parser.add_argument("--write-readme", action="store_true", help="keep the scoreboard in bench/README.md")
    args = parser.parse_args()
    referee = prepare_referee()
    with tempfile.TemporaryDirectory(prefix="sqlmesh_compat_") as scratch:
        window = Window(end=args.spark_end) if args.spark else None
        scores = run_comparison(referee, Path(scratch), not args.no_unit_tests, set(args.project or ()),
                                spark_window=window)
    section = markdown(scores, SQLMESH_VERSION, date.today())
    print(section)
    if args.write_readme:
        write_readme_section(README, section)


def _yesterday() -> str:
    return (datetime.now(timezone.utc).date() - timedelta(days=1)).isoformat()


if __name__ == "__main__":
    main()
