"""The checks of ``model_defaults``' values, each failing with the message and hint its key's line gets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date


from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.model.cron_zones import read_cron_tz
from dagster_sparkmesh.model.dialects import DIALECT_HINT, is_known_dialect
from dagster_sparkmesh.model.interval_units import (
    TOO_FREQUENT_HINT, read_interval_unit, too_frequent, too_frequent_message, valid_cron,
)
from dagster_sparkmesh.model.kinds import SCHEMA_CHANGE_CHOICES


def check_default(key: str, value: object, error: Callable[[str, str], ConfigError]) -> None:
    """Raise ``error(message, hint)`` when ``value`` cannot be ``model_defaults.<key>``."""
    if key == "dialect" and not is_known_dialect(str(value).lower()):
        raise error(f"unknown dialect {value!r}", DIALECT_HINT)
    if key in ("allow_partials", "enabled") and not isinstance(value, bool):
        raise error(f"model_defaults.{key} must be true or false, not {value!r}",
                    f"write {key}: true")
    if key == "cron_tz":
        read_cron_tz(str(value), error)
    if key == "interval_unit":
        read_interval_unit(str(value), error)
    if key == "cron" and not valid_cron(str(value)):
        raise error(f"invalid cron {value!r}", "use @daily, @hourly, ... or a 5-field cron expression")
    if key == "cron" and _too_frequent_or_never(str(value)):
        raise error(f"{too_frequent_message(str(value))} (or never)", TOO_FREQUENT_HINT)
    if key in SCHEMA_CHANGE_CHOICES and value is not None and value not in SCHEMA_CHANGE_CHOICES[key]:
        raise error(f"invalid model_defaults.{key} {value!r}",
                    f"use one of: {', '.join(SCHEMA_CHANGE_CHOICES[key])}")
    if key == "batch_concurrency" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise error(f"model_defaults.batch_concurrency must be a whole number of at least 1, not {value!r}",
                    "write batch_concurrency: 1")
    if key == "start":
        try:
            date.fromisoformat(str(value)[:10])
        except ValueError:
            raise error(f"invalid start date {value!r}", "write an ISO date like 2024-01-31") from None


def _too_frequent_or_never(cron: str) -> bool:
    """A cron no model can have: ticking more often than every 5 minutes, or never."""
    try:
        return too_frequent(cron)
    except ValueError:
        return True
