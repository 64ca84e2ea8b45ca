"""Imported by models from the project root. SQLMesh passes ``end`` inclusive: the last day is end's own day."""

from datetime import datetime, timedelta


def iter_dates(start: datetime, end: datetime):
    for offset in range((end - start).days + 1):
        yield start + timedelta(days=offset)
