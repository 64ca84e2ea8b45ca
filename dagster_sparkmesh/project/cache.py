"""A cache of parsed records under ``<project>/.sparkmesh/cache/`` (architecture invariant 5: caches never block).

Key: sha256 of a salt (package version, sqlglot version, the parser's own source, the project settings that
affect parsing) and of the file's path and bytes. Each cache is ONE pack file of lines ``<key> <sha256> <record
as JSON>``, read once per load and rewritten (temp file in the same folder + ``os.replace``) only when the load
parsed something new or stopped using an entry. One file, not one per record: creating a thousand small files
costs about 0.7 s on a VM disk, more than parsing them. Anything wrong with a line (truncated, corrupt, not a
record, the file deleted or replaced meanwhile) is a miss for that line only; anything wrong with writing is
ignored.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

import sqlglot

from dagster_sparkmesh.project.config import state_dir
from dagster_sparkmesh.records import Record

CACHE_FORMAT = "3"
PACK_NAME = "records.pack"
_KEY_LENGTH = 64
_STALE_TEMP_SECONDS = 3600

R = TypeVar("R", bound=Record)


def cache_dir(project_path: Path, name: str) -> Path:
    return state_dir(project_path) / "cache" / name


def cache_salt(parts: Iterable[str], modules: Iterable[ModuleType]) -> str:
    """Everything besides the file itself that decides what parsing produces."""
    digest = hashlib.sha256()
    for part in (CACHE_FORMAT, _package_version(), sqlglot.__version__, *parts):
        digest.update(part.encode("utf-8") + b"\0")
    for module in modules:
        # The parser's own source: editing it must never serve records parsed by the old code.
        digest.update(Path(module.__file__ or "").read_bytes() if module.__file__ else b"")
    return digest.hexdigest()


def _package_version() -> str:
    try:
        return metadata.version("dagster-sparkmesh")
    except metadata.PackageNotFoundError:
        return "unknown"


class RecordCache(Generic[R]):
    """One folder holding one pack of records of one type; ``save()`` after the load writes what it used."""

    def __init__(self, directory: Path, salt: str, record_type: type[R]) -> None:
        self.directory = directory
        self.salt = salt
        self.record_type = record_type
        self.used: set[str] = set()
        self._stored: dict[str, bytes] | None = None  # read on first use: a load without cache never reads it
        self._fresh: dict[str, bytes] = {}

    def key(self, path: Path, content: bytes) -> str:
        digest = hashlib.sha256(self.salt.encode("utf-8"))
        digest.update(str(path).encode("utf-8") + b"\0")
        digest.update(content)
        key = digest.hexdigest()
        self.used.add(key)
        return key

    def get(self, key: str) -> R | None:
        line = self._lines().get(key)
        if line is None:
            return None
        try:
            checksum, payload = line[:_KEY_LENGTH], line[_KEY_LENGTH + 1 :]
            # A damaged entry can still be valid JSON (a flipped letter in a query): only a checksum tells.
            if hashlib.sha256(payload).hexdigest().encode("ascii") != checksum:
                return None
            return self.record_type.model_validate_json(payload)
        except Exception:  # noqa: BLE001 - any broken entry is a miss (invariant 5)
            return None

    def put(self, key: str, record: R) -> None:
        try:
            payload = record.model_dump_json().encode("utf-8")
        except Exception:  # noqa: BLE001 - a record that cannot be stored is only parsed again next time
            return
        self._fresh[key] = hashlib.sha256(payload).hexdigest().encode("ascii") + b" " + payload

    def save(self) -> None:
        """Write the entries this load used, when that changes the pack (and remove abandoned temp files and
        files of older cache formats); never fails."""
        stored = self._lines()
        kept = {key: self._fresh.get(key) or stored.get(key) for key in sorted(self.used)}
        entries = {key: line for key, line in kept.items() if line is not None}
        if not self._fresh and entries.keys() == stored.keys():
            return  # a warm load writes nothing
        temp = self.directory / f"{PACK_NAME}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with open(temp, "wb") as handle:
                handle.writelines(key.encode("ascii") + b" " + line + b"\n" for key, line in entries.items())
            os.replace(temp, self.directory / PACK_NAME)
        except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
            _unlink_quietly(temp)
            return
        self._stored = entries
        self._fresh = {}
        self._remove_leftovers()

    def _lines(self) -> dict[str, bytes]:
        """Key → ``<checksum> <payload>`` of every well-formed line of the pack (nothing when it is unreadable)."""
        if self._stored is None:
            self._stored = {}
            try:
                data = (self.directory / PACK_NAME).read_bytes()
            except Exception:  # noqa: BLE001 - missing, a folder, unreadable: an empty cache
                return self._stored
            for line in data.split(b"\n"):
                if len(line) > _KEY_LENGTH * 2 + 2 and line[_KEY_LENGTH : _KEY_LENGTH + 1] == b" ":
                    self._stored[line[:_KEY_LENGTH].decode("ascii", "replace")] = line[_KEY_LENGTH + 1 :]
        return self._stored

    def _remove_leftovers(self) -> None:
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        limit = time.time() - _STALE_TEMP_SECONDS
        for entry in entries:
            if entry.name.endswith(".json") or (entry.name.endswith(".tmp") and _older_than(entry, limit)):
                _unlink_quietly(Path(entry.path))


def _older_than(entry: os.DirEntry[str], limit: float) -> bool:
    try:
        return entry.stat().st_mtime < limit
    except OSError:
        return False


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
