"""Load the seed lessons (`data/lessons.jsonl`) into Mubit, idempotently.

Only each lesson's `id` and `text` are sent. The file's `helpful` flag is ground truth for evaluation
and must never reach Mubit: it would hand the answer to credit assignment.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from common.jsonl import JsonlError, read_jsonl

if TYPE_CHECKING:  # reading a lessons file (a check before a run starts) needs no Mubit client
    from mubit_agent_lightning import MubitControlClient

SEED_SOURCE = "seed"


class SeedLessonError(ValueError):
    """A lessons file that cannot be used; the message is one line naming the file, line and field."""


@dataclass(frozen=True)
class SeedLesson:
    lesson_id: str
    text: str

    @property
    def idempotency_key(self) -> str:
        """Same id and text -> same key, so loading twice adds nothing; edited text is a new write."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]
        return f"seed-lesson:{self.lesson_id}:{digest}"


@dataclass(frozen=True)
class SeedLoadResult:
    added: int
    deduplicated: int


def read_seed_lessons(path: str | Path) -> list[SeedLesson]:
    path = Path(path)
    if not path.is_file():
        raise SeedLessonError(f"{path}: file not found")
    try:
        lines = read_jsonl(path)
    except JsonlError as exc:
        raise SeedLessonError(str(exc)) from None
    lessons: list[SeedLesson] = []
    seen: set[str] = set()
    for line in lines:
        number, record = line.number, line.value
        if line.error:
            raise SeedLessonError(f"{line.where(path)}: {line.error}")
        for field in ("id", "text"):
            if not isinstance(record.get(field), str) or not record[field].strip():
                raise SeedLessonError(f"{path}:{number}: field '{field}' must be a non-empty string")
        if record["id"] in seen:
            raise SeedLessonError(f"{path}:{number}: field 'id': duplicate lesson id {record['id']!r}")
        seen.add(record["id"])
        lessons.append(SeedLesson(record["id"], record["text"].strip()))
    return lessons


def load_seed_lessons(
    client: MubitControlClient, lessons: list[SeedLesson], *, session_id: str, agent_id: str
) -> SeedLoadResult:
    """Ingest each lesson once (keyed by id + text hash; `upsert_key` = lesson id)."""
    added = deduplicated = 0
    for lesson in lessons:
        answer = client.remember(
            session_id=session_id,
            agent_id=agent_id,
            text=lesson.text,
            intent="lesson",
            lesson_type="success",
            source=SEED_SOURCE,
            upsert_key=lesson.lesson_id,
            idempotency_key=lesson.idempotency_key,
            metadata={"seed_id": lesson.lesson_id, "source": SEED_SOURCE},
        )
        if isinstance(answer, dict) and answer.get("deduplicated"):
            deduplicated += 1
        else:
            added += 1
    return SeedLoadResult(added=added, deduplicated=deduplicated)
