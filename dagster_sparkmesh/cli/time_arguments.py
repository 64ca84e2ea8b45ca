"""Times given on the command line, with SQLMesh's meaning of an end given as a date.

``--start 2024-01-01 --end 2024-01-31`` covers the whole of January: an end without a time of day is inclusive
(the interval ends at the next midnight); an end with a time is exclusive. Internally every interval is the
half-open ``[start, end)`` of naive UTC datetimes.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import click

from dagster_sparkmesh.clock import to_naive_utc, utc_now


def parse_time(text: str, option: str, *, now: datetime | None = None) -> datetime:
    """An ISO date or timestamp (``2024-01-01``, ``2024-01-01 05:00``, ``2024-01-01T05:00:00+02:00``) as naive UTC,
    or a relative one as SQLMesh reads them (``now``, ``today``, ``yesterday``, ``1 week ago``)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return _relative(text, option, now or utc_now())
    return to_naive_utc(moment)


def _relative(text: str, option: str, now: datetime) -> datetime:
    from dagster_sparkmesh.errors import PlanError
    from dagster_sparkmesh.dates import parse_datetime

    try:
        return parse_datetime(text, now=now)
    except PlanError:
        raise click.BadParameter(
            f"{text!r} is not a date or timestamp; use YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS', 'yesterday' or "
            "'N days ago'",
            param_hint=option,
        ) from None


def is_date_only(text: str) -> bool:
    try:
        date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


def interval_from_options(start: str | None, end: str | None, *, today: date | None = None) -> tuple[datetime, datetime]:
    """``[start, end)`` from ``--start``/``--end``; both missing means yesterday (UTC), the last complete day."""
    today = today or utc_now().date()
    start_at = parse_time(start, "--start") if start else datetime.combine(today - timedelta(days=1), time())
    if start_at >= datetime.max - timedelta(days=2):
        raise click.BadParameter(f"{start} is past the last date this tool can compute with", param_hint="--start")
    if end is None:
        end_at = start_at + timedelta(days=1)
    else:
        end_at = parse_time(end, "--end")
        if is_date_only(end):
            if end_at >= datetime.max - timedelta(days=2):
                raise click.BadParameter(f"{end} is past the last date this tool can compute with", param_hint="--end")
            end_at += timedelta(days=1)
    if end_at <= start_at:
        raise click.BadParameter(f"the end ({end}) is before the start ({start})", param_hint="--end")
    return start_at, end_at


def execution_time_from_option(text: str | None) -> datetime:
    if text:
        return parse_time(text, "--execution-time")
    return utc_now().replace(microsecond=0)
