"""A persistent response cache, so a re-run makes no model calls.

Keyed by what determines a response: endpoint, model, messages, sampling parameters and
the requested output schema (never the API key). Every reply the server gave is stored,
including one that did not parse (a re-run would get it again); transport failures are not.
SQLite: one file, safe to reopen after a killed run (every put is committed).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/kgsynth/llm-cache.sqlite`` (``~/.cache`` without it)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgsynth" / "llm-cache.sqlite"


def cache_key(request: dict) -> str:
    """The hash of a request description (canonical JSON: sorted keys, no whitespace)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> dict | None:
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, response: dict) -> None:
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, json.dumps(response, ensure_ascii=False)))
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
