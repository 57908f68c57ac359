"""Count Mubit outages across processes, so the algorithm process can report them after a run.

Under agl's client/server strategy the hook runs in forked runner processes, so an in-memory counter
would be lost. Each failed call appends one short JSON line to a file in the run directory (appends of
a few hundred bytes with O_APPEND do not interleave on Linux); the report reads the file back.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path

logger = logging.getLogger(__name__)


# The calls without which a rollout ran without memory: no lessons recalled, or its reward never credited.
MEMORY_OPERATIONS = ("recall", "record_outcome")


class OutageLog:
    """An append-only log of failed Mubit calls (operation, error type, rollout id; never request content)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()

    def record(self, operation: str, error: BaseException, rollout_id: str | None = None) -> None:
        line = json.dumps({"op": operation, "error": type(error).__name__, "rollout": rollout_id, "pid": os.getpid(),
                           "t": round(time.time(), 3)})
        try:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        except OSError:  # counting must never be what breaks a rollout
            logger.exception("could not record a Mubit outage in %s", self.path)
        logger.warning("Mubit %s failed (%s); continuing without it", operation, type(error).__name__)

    def _records(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def counts(self) -> dict[str, int]:
        """Outages per operation (recall, record_outcome, step_outcome, seed_lessons)."""
        return dict(Counter(record["op"] for record in self._records()))

    def rollouts_without_memory(self) -> set[str]:
        """The rollouts whose recall or credit failed: they ran without (or did not feed) the memory."""
        return {r["rollout"] for r in self._records() if r["op"] in MEMORY_OPERATIONS and r.get("rollout")}

    def total(self) -> int:
        return sum(self.counts().values())
