"""Run the reliability suite and print what was tried and what survived: crash points x outcomes, cache damage,
bad inputs, concurrent and killed Dagster range runs, with counts.

    .venv/bin/python bench/reliability_report.py [extra pytest args]

The tests print one tagged JSON line per trial (``CRASH``, ``BAD_INPUT``, ``CACHE``, ``RACE``); this script runs
them with ``-s``, collects those lines and tabulates them. Its exit code is pytest's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TAGS = ("CRASH", "BAD_INPUT", "CACHE", "RACE")


def run_suite(extra: list[str]) -> tuple[int, dict[str, list[dict]]]:
    command = [sys.executable, "-m", "pytest", "tests/reliability", "-q", "-s", "-p", "no:cacheprovider", *extra]
    process = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    trials: dict[str, list[dict]] = defaultdict(list)
    for line in process.stdout.splitlines():
        tag, _, payload = line.partition(" ")
        if tag in TAGS:
            trials[tag].append(json.loads(payload))
    summary = [line for line in process.stdout.splitlines() if " passed" in line or " failed" in line]
    print(summary[-1] if summary else process.stdout[-2000:])
    return process.returncode, trials


def crash_table(rows: list[dict]) -> list[str]:
    kills = [r for r in rows if "crash_at" in r]
    lines = [f"{'crash point':<34} {'killed':>6} {'views complete':>15}"]
    for row in kills:
        point = row["crash_at"] + (f" +{row['delay']}s" if row["delay"] else "")
        lines.append(f"{point:<34} {'yes' if row['killed'] else 'NO':>6} {'yes' if row['views_complete'] else 'NO':>15}")
    resumed = [r for r in rows if "resumed_identical" in r]
    lines.append(
        f"kills: {len(kills)}, killed: {sum(r['killed'] for r in kills)}, views complete after the kill: "
        f"{sum(r['views_complete'] for r in kills)}; resumed runs identical to the uninterrupted run: "
        f"{sum(r['resumed_identical'] for r in resumed)}/{len(resumed)}"
    )
    return lines


def bad_input_table(rows: list[dict]) -> list[str]:
    groups = Counter(row["case"].split("/")[0] if "/" in row["case"] else "hostile (generated)" for row in rows)
    refused = Counter(
        row["case"].split("/")[0] if "/" in row["case"] else "hostile (generated)" for row in rows if row["ok"]
    )
    lines = [f"{'bad input group':<24} {'cases':>6} {'refused cleanly, nothing written':>33}"]
    lines += [f"{group:<24} {count:>6} {refused[group]:>33}" for group, count in sorted(groups.items())]
    lines.append(f"{'total':<24} {len(rows):>6} {sum(refused.values()):>33}")
    lines += [f"  FAILED: {row['case']}" for row in rows if not row["ok"]]
    return lines


def cache_table(rows: list[dict]) -> list[str]:
    return [
        f"cache damage: {r['damaged_files']} files deleted/truncated/garbled during {r['loads']} loads "
        f"in parallel processes, failed loads: {r['failed_loads']}"
        for r in rows
    ]


def race_table(rows: list[dict]) -> list[str]:
    """Concurrent Dagster range runs and a killed, re-launched range run: runs, intervals, rows checked, outcome."""
    lines = [f"{'scenario':<52} {'runs':>4} {'intervals':>9} {'rows checked':>12} {'seconds':>7}  outcome"]
    for row in rows:
        outcome = "ok" if row["ok"] else "FAILED"
        if "intervals_kept" in row:
            outcome += f" ({row['intervals_kept']} kept at the kill, {row['intervals_recomputed_after_kill']} computed after)"
        lines.append(
            f"{row['scenario']:<52} {row['runs']:>4} {row['intervals']:>9} {row['rows_checked']:>12} "
            f"{row['seconds']:>7}  {outcome}"
        )
    lines.append(f"scenarios: {len(rows)}, passed: {sum(row['ok'] for row in rows)}")
    return lines


def main(argv: list[str]) -> int:
    code, trials = run_suite(argv)
    for title, table in (
        ("Crash and resume (SIGKILL)", crash_table(trials["CRASH"])),
        ("Bad input (CLI, exit 2, no traceback, state and warehouse unchanged)", bad_input_table(trials["BAD_INPUT"])),
        ("Cache hardening", cache_table(trials["CACHE"])),
        ("Concurrent and killed Dagster range runs (shared Spark Connect server)", race_table(trials["RACE"])),
    ):
        print(f"\n{title}\n" + "\n".join(table))
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
