"""A file cache of parsed records under ``<project>/.sparkmesh/cache/`` (DESIGN invariant 5: caches never block).

Key: sha256 of a salt (package version, sqlglot version, the parser's own source, the project settings that
affect parsing) and of the file's path and bytes. Value: a sha256 line, then the record as JSON, written atomically (temp file in the
same folder + ``os.replace``). Anything wrong with an entry (missing, truncated, corrupt, unreadable, deleted
while being read) is a miss; anything wrong with writing or pruning is ignored.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

import sqlglot

from dagster_sparkmesh.project.config import state_dir
from dagster_sparkmesh.records import Record

CACHE_FORMAT = "2"
_CHECKSUM_LENGTH = 64
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
    """One folder of ``<key>.json`` entries holding records of one type."""

    def __init__(self, directory: Path, salt: str, record_type: type[R]) -> None:
        self.directory = directory
        self.salt = salt
        self.record_type = record_type
        self.used: set[str] = set()

    def key(self, path: Path, content: bytes) -> str:
        digest = hashlib.sha256(self.salt.encode("utf-8"))
        digest.update(str(path).encode("utf-8") + b"\0")
        digest.update(content)
        key = digest.hexdigest()
        self.used.add(key)
        return key

    def get(self, key: str) -> R | None:
        try:
            data = (self.directory / f"{key}.json").read_bytes()
            checksum, payload = data[:_CHECKSUM_LENGTH], data[_CHECKSUM_LENGTH + 1 :]
            # A damaged entry can still be valid JSON (a flipped letter in a query): only a checksum tells.
            if hashlib.sha256(payload).hexdigest().encode("ascii") != checksum:
                return None
            return self.record_type.model_validate_json(payload)
        except Exception:  # noqa: BLE001 - any broken entry is a miss (invariant 5)
            return None

    def put(self, key: str, record: R) -> None:
        temp_name = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("wb", dir=self.directory, suffix=".tmp", delete=False) as handle:
                temp_name = handle.name
                payload = record.model_dump_json().encode("utf-8")
                handle.write(hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload)
            os.replace(temp_name, self.directory / f"{key}.json")
        except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
            if temp_name is not None:
                _unlink_quietly(Path(temp_name))

    def prune(self) -> None:
        """Remove entries not used by this load (and abandoned temp files); never fails."""
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        now = time.time()
        for entry in entries:
            name = entry.name
            if name.endswith(".json") and name[: -len(".json")] not in self.used:
                _unlink_quietly(Path(entry.path))
            elif name.endswith(".tmp") and _older_than(entry, now - _STALE_TEMP_SECONDS):
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
