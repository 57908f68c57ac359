"""The engine's memory: one SQLite file holding entries, their credit, outcomes and ingest jobs.

Entries are full-text indexed with FTS5 (BM25). Lessons are shared across runs; every other entry
type (traces, facts, ...) is visible only from the run that wrote it. Writes that carry an
`idempotency_key` are answered once and replayed from the `idempotency` table afterwards.
"""

from __future__ import annotations

import json
import math
import random
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from al_integration.mubit_local.ranking import (
    RankingWeights,
    ScoreParts,
    credit_confidence,
    fuse,
    sampled_confidence,
    soft_trial,
)

GLOBAL_REFERENCES = ("", "global")  # an outcome with these reference ids is run-level
SHARED_ENTRY_TYPES = ("lesson",)
_TOKEN = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TOKENS = 64
_MAX_MATCH_TERMS = 8  # the rarest (most informative) query words that go into the FTS match

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    rowid INTEGER PRIMARY KEY,
    entry_id TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    entry_type TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '',
    lesson_type TEXT NOT NULL DEFAULT '',
    lesson_scope TEXT NOT NULL DEFAULT '',
    importance TEXT NOT NULL DEFAULT '',
    upsert_key TEXT,
    source TEXT NOT NULL DEFAULT '',
    shared INTEGER NOT NULL,
    created_at REAL NOT NULL,
    outcome_count INTEGER NOT NULL DEFAULT 0,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    signal_sum REAL NOT NULL DEFAULT 0,
    alpha_mass REAL NOT NULL DEFAULT 0,
    beta_mass REAL NOT NULL DEFAULT 0,
    verified INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_by_run ON entries(run_id);
CREATE UNIQUE INDEX IF NOT EXISTS entries_by_upsert
    ON entries(run_id, upsert_key) WHERE upsert_key IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
    text, content='entries', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS entries_au AFTER UPDATE OF text ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO entries_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TABLE IF NOT EXISTS ingest_jobs (
    job_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    traces_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    response_json TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS outcomes (
    outcome_id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    reference_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    signal REAL NOT NULL,
    rationale TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    credited_json TEXT NOT NULL,
    verified INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS step_outcomes (
    step_outcome_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    step_name TEXT NOT NULL,
    outcome TEXT NOT NULL,
    signal REAL NOT NULL,
    rationale TEXT NOT NULL,
    directive_hint TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    metadata_json TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Entry:
    entry_id: str
    run_id: str
    entry_type: str
    text: str
    metadata_json: str
    lesson_type: str
    lesson_scope: str
    importance: str
    source: str
    created_at: float
    outcome_count: int
    success_count: int
    failure_count: int
    signal_sum: float
    alpha_mass: float
    beta_mass: float
    verified: bool


@dataclass(frozen=True)
class RankedEntry:
    entry: Entry
    parts: ScoreParts


_ENTRY_COLUMNS = (
    "entry_id, run_id, entry_type, text, metadata_json, lesson_type, lesson_scope, importance, source, "
    "created_at, outcome_count, success_count, failure_count, signal_sum, alpha_mass, beta_mass, verified"
)


def _entry(row: Sequence[Any]) -> Entry:
    return Entry(*row[:16], verified=bool(row[16]))


def _entry_type(intent: str) -> str:
    intent = (intent or "").strip().lower()
    return intent or "fact"


def _metadata_flag(metadata_json: str, key: str) -> bool:
    try:
        metadata = json.loads(metadata_json) if metadata_json else {}
    except json.JSONDecodeError:
        return False
    return isinstance(metadata, dict) and metadata.get(key) is True


def _require_finite(signal: float) -> None:
    if not math.isfinite(float(signal)):
        raise ValueError(f"signal must be a finite number, got {signal!r}")


def query_words(text: str) -> list[str]:
    """The distinct words of a query, in order."""
    return list(dict.fromkeys(_TOKEN.findall(text.lower())))[:_MAX_QUERY_TOKENS]


def fts_query(words: Sequence[str]) -> str:
    """An FTS5 OR-query over `words` (each quoted, so user text is never FTS syntax)."""
    return " OR ".join(f'"{word}"' for word in words)


class MemoryStore:
    """Thread-safe access to the engine's SQLite file (one connection, one lock)."""

    def __init__(
        self, db_path: str | Path, weights: RankingWeights | None = None, seed: int | None = None
    ) -> None:
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.weights = weights or RankingWeights()
        self._rng = random.Random(seed)  # only used when weights.sample_credit
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._repair_infinite_sums()
        # Corpus statistics for query pruning, dropped on every write that adds or removes text.
        self._doc_freq: dict[str, int] = {}
        self._entry_total: int | None = None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _repair_infinite_sums(self) -> None:
        """Recompute signal sums made infinite by an engine that accepted `signal: Infinity` (before 400s),
        from the finite outcomes that credited the entry: an infinite sum breaks every `explain` recall."""
        with self._db:
            self._db.execute(
                "UPDATE entries SET signal_sum = (SELECT COALESCE(SUM(o.signal), 0) FROM outcomes o, "
                "json_each(o.credited_json) c WHERE c.value = entries.entry_id AND abs(o.signal) <= 1e308) "
                "WHERE abs(signal_sum) > 1e308"
            )

    def _forget_corpus_stats(self) -> None:
        self._doc_freq.clear()
        self._entry_total = None

    # ---- idempotency -------------------------------------------------------------------------

    def _replay(self, scope: str, key: str) -> dict[str, Any] | None:
        if not key:
            return None
        row = self._db.execute(
            "SELECT response_json FROM idempotency WHERE scope = ? AND key = ?", (scope, key)
        ).fetchone()
        if row is None:
            return None
        return {**json.loads(row[0]), "deduplicated": True}

    def _remember_response(self, scope: str, key: str, response: dict[str, Any]) -> None:
        if key:
            self._db.execute(
                "INSERT INTO idempotency(scope, key, response_json) VALUES (?, ?, ?)",
                (scope, key, json.dumps(response)),
            )

    # ---- writes ------------------------------------------------------------------------------

    def ingest(
        self, run_id: str, agent_id: str, items: Iterable[dict[str, Any]], idempotency_key: str = ""
    ) -> dict[str, Any]:
        """Store items as entries; answer like `IngestAccepted` (the job is already done)."""
        with self._lock, self._db:
            replay = self._replay("ingest", idempotency_key)
            if replay is not None:
                return replay
            self._forget_corpus_stats()
            now = time.time()
            traces = [self._write_item(run_id, agent_id, item, now) for item in items]
            job_id = f"job-{uuid.uuid4().hex[:16]}"
            self._db.execute(
                "INSERT INTO ingest_jobs(job_id, run_id, created_at, traces_json) VALUES (?, ?, ?, ?)",
                (job_id, run_id, now, json.dumps(traces)),
            )
            response = {"accepted": True, "job_id": job_id, "deduplicated": False, "status": "done"}
            self._remember_response("ingest", idempotency_key, response)
            return response

    def _write_item(self, run_id: str, agent_id: str, item: dict[str, Any], now: float) -> dict[str, Any]:
        entry_type = _entry_type(item.get("intent", ""))
        lesson_scope = item.get("lesson_scope") or ""
        shared = int(entry_type in SHARED_ENTRY_TYPES and lesson_scope != "run")
        metadata_json = item.get("metadata_json") or ""
        verified = int(_metadata_flag(metadata_json, "verified_in_production"))
        upsert_key = item.get("upsert_key") or None
        existing = None
        if upsert_key is not None:
            existing = self._db.execute(
                "SELECT entry_id FROM entries WHERE run_id = ? AND upsert_key = ?", (run_id, upsert_key)
            ).fetchone()
        fields = (
            entry_type,
            item.get("text") or "",
            metadata_json,
            item.get("lesson_type") or "",
            lesson_scope,
            item.get("lesson_importance") or item.get("importance") or "",
            item.get("source") or "",
            shared,
        )
        if existing is not None:
            entry_id = existing[0]
            self._db.execute(
                "UPDATE entries SET entry_type = ?, text = ?, metadata_json = ?, lesson_type = ?, "
                "lesson_scope = ?, importance = ?, source = ?, shared = ?, verified = MAX(verified, ?) "
                "WHERE entry_id = ?",
                (*fields, verified, entry_id),
            )
        else:
            entry_id = f"mem-{uuid.uuid4().hex}"
            self._db.execute(
                "INSERT INTO entries(entry_id, run_id, agent_id, entry_type, text, metadata_json, "
                "lesson_type, lesson_scope, importance, source, shared, upsert_key, created_at, verified) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry_id, run_id, agent_id, *fields, upsert_key, now, verified),
            )
        return {
            "item_id": item.get("item_id") or "",
            "content_type": item.get("content_type") or "text/plain",
            "selected_types": [entry_type],
            "reasoning": "updated by upsert_key" if existing is not None else "stored",
            "enriched_metadata_json": "",
            "writes": [{"memory_type": entry_type, "record_id": entry_id, "success": True, "error": ""}],
            "confidence": 1.0,
        }

    def record_outcome(
        self,
        *,
        run_id: str,
        reference_id: str,
        outcome: str,
        signal: float,
        rationale: str = "",
        agent_id: str = "",
        entry_ids: Sequence[str] = (),
        verified_in_production: bool = False,
        idempotency_key: str = "",
    ) -> dict[str, Any]:
        """Credit the referenced entries, each once (unknown ids are skipped); answer like `RecordOutcomeResponse`."""
        _require_finite(signal)
        named = ([] if reference_id in GLOBAL_REFERENCES else [reference_id]) + list(entry_ids)
        targets = list(dict.fromkeys(entry_id for entry_id in named if entry_id))
        success_mass, failure_mass = soft_trial(signal)
        label = (outcome or "").strip().lower()
        with self._lock, self._db:
            replay = self._replay("outcome", idempotency_key)
            if replay is not None:
                return replay
            credited: list[str] = []
            for entry_id in targets:
                cursor = self._db.execute(
                    "UPDATE entries SET outcome_count = outcome_count + 1, "
                    "success_count = success_count + ?, failure_count = failure_count + ?, "
                    "signal_sum = signal_sum + ?, alpha_mass = alpha_mass + ?, beta_mass = beta_mass + ?, "
                    "verified = MAX(verified, ?) WHERE entry_id = ?",
                    (
                        int(label == "success"),
                        int(label == "failure"),
                        float(signal),
                        success_mass,
                        failure_mass,
                        int(verified_in_production),
                        entry_id,
                    ),
                )
                if cursor.rowcount:
                    credited.append(entry_id)
            self._db.execute(
                "INSERT INTO outcomes(run_id, reference_id, outcome, signal, rationale, agent_id, "
                "credited_json, verified, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, reference_id, label, float(signal), rationale, agent_id, json.dumps(credited),
                 int(verified_in_production), time.time()),
            )
            confidences = [self._confidence(entry_id) for entry_id in credited]
            response = {
                "success": True,
                "reinforcement_count": len(credited),
                "updated_confidence": sum(confidences) / len(confidences) if confidences else 0.0,
                "credited_entry_ids": credited,
                "deduplicated": False,
            }
            self._remember_response("outcome", idempotency_key, response)
            return response

    def _confidence(self, entry_id: str) -> float:
        alpha, beta = self._db.execute(
            "SELECT alpha_mass, beta_mass FROM entries WHERE entry_id = ?", (entry_id,)
        ).fetchone()
        return credit_confidence(alpha, beta, self.weights)

    def record_step_outcome(self, payload: dict[str, Any]) -> dict[str, Any]:
        _require_finite(payload.get("signal") or 0.0)
        step_outcome_id = f"step-{uuid.uuid4().hex[:16]}"
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO step_outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    step_outcome_id,
                    payload.get("run_id") or "",
                    payload.get("step_id") or "",
                    payload.get("step_name") or payload.get("step_id") or "",
                    payload.get("outcome") or "",
                    float(payload.get("signal") or 0.0),
                    payload.get("rationale") or "",
                    payload.get("directive_hint") or "",
                    payload.get("agent_id") or "",
                    payload.get("metadata_json") or "",
                    time.time(),
                ),
            )
        return {"step_outcome_id": step_outcome_id, "accepted": True}

    def delete_run(self, run_id: str) -> bool:
        with self._lock, self._db:
            self._forget_corpus_stats()
            for table in ("entries", "ingest_jobs", "outcomes", "step_outcomes"):
                self._db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        return True

    def delete_lesson(self, lesson_id: str) -> bool:
        with self._lock, self._db:
            self._forget_corpus_stats()
            cursor = self._db.execute(
                "DELETE FROM entries WHERE entry_id = ? AND entry_type = 'lesson'", (lesson_id,)
            )
        return cursor.rowcount > 0

    # ---- reads -------------------------------------------------------------------------------

    def ingest_job(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT run_id, created_at, traces_json FROM ingest_jobs WHERE job_id = ?", (job_id,)
            ).fetchone()
        if row is None:
            return None
        run_id, created_at, traces_json = row
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created_at))
        return {
            "job_id": job_id,
            "run_id": run_id,
            "status": "done",
            "done": True,
            "error": "",
            "created_at": stamp,
            "started_at": stamp,
            "finished_at": stamp,
            "traces": json.loads(traces_json),
            "ordered": True,
            "deduplicated": False,
        }

    def get_entry(self, entry_id: str, run_id: str | None = None) -> Entry | None:
        """The entry, if it exists and (when `run_id` is given) is visible from that run."""
        sql = f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE entry_id = ?"
        params: list[Any] = [entry_id]
        if run_id is not None:
            sql += " AND (shared = 1 OR run_id = ?)"
            params.append(run_id)
        with self._lock:
            row = self._db.execute(sql, params).fetchone()
        return _entry(row) if row else None

    def list_lessons(self, run_id: str, limit: int, scope: str = "", importance: str = "") -> list[Entry]:
        sql = (
            f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE entry_type = 'lesson' AND (shared = 1 OR run_id = ?)"
        )
        params: list[Any] = [run_id]
        if scope:
            sql += " AND lesson_scope = ?"
            params.append(scope)
        if importance:
            sql += " AND importance = ?"
            params.append(importance)
        sql += " ORDER BY rowid LIMIT ?"
        params.append(limit)
        with self._lock:
            return [_entry(row) for row in self._db.execute(sql, params)]

    def entry_counts(self, run_id: str) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT entry_type, COUNT(*) FROM entries WHERE shared = 1 OR run_id = ? GROUP BY entry_type",
                (run_id,),
            ).fetchall()
        return dict(rows)

    def count_entries(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def search(
        self, run_id: str, query: str, limit: int, entry_types: Sequence[str] = ()
    ) -> list[RankedEntry]:
        """Rank the entries visible from `run_id`: a BM25 shortlist re-ranked with learned credit.

        When fewer than `limit` entries match the words of the query, the rest are filled with the
        best-credited visible entries (relevance 0), so a lesson that earned reward can still be tried.
        """
        limit = max(0, int(limit))
        if limit == 0:
            return []
        visible = "(e.shared = 1 OR e.run_id = ?)"
        params: list[Any] = [run_id]
        if entry_types:
            visible += f" AND e.entry_type IN ({', '.join('?' * len(entry_types))})"
            params += list(entry_types)
        shortlist = max(limit * 10, 50)
        with self._lock:
            match = fts_query(self._informative_words(query_words(query)))
            hits = self._bm25_shortlist(match, visible, params, shortlist) if match else []
            if len(hits) < limit:
                hits += self._best_credited(visible, params, {row[0] for row, _ in hits}, limit - len(hits))
            best = max((relevance for _, relevance in hits), default=0.0)
            ranked = [
                RankedEntry(entry, fuse(relevance / best if best > 0 else 0.0, self._confidence_of(entry),
                                        entry.verified, self.weights))
                for entry, relevance in ((_entry(row), relevance) for row, relevance in hits)
            ]
        ranked.sort(key=lambda r: r.parts.score, reverse=True)  # stable: BM25 order breaks ties
        return ranked[:limit]

    def _bm25_shortlist(
        self, match: str, visible: str, params: list[Any], shortlist: int
    ) -> list[tuple[Sequence[Any], float]]:
        """The best BM25 hits visible from the run, as (row, relevance >= 0).

        Fast path: take the top hits from the FTS index alone, then drop invisible ones (entries of
        other runs). Only when that leaves the shortlist short while more hits exist is the slower
        join, which checks visibility for every hit, needed.
        """
        columns = ", ".join("e." + column.strip() for column in _ENTRY_COLUMNS.split(","))
        rows = self._db.execute(
            f"SELECT {columns}, f.score FROM (SELECT rowid, bm25(entries_fts) AS score FROM entries_fts "
            "WHERE entries_fts MATCH ? ORDER BY score LIMIT ?) f JOIN entries e ON e.rowid = f.rowid "
            f"WHERE {visible} ORDER BY f.score",
            [match, shortlist, *params],
        ).fetchall()
        if len(rows) < shortlist and self._db.execute(
            "SELECT COUNT(*) > ? FROM entries_fts WHERE entries_fts MATCH ?", (len(rows), match)
        ).fetchone()[0]:
            rows = self._db.execute(
                f"SELECT {columns}, bm25(entries_fts) FROM entries_fts "
                "JOIN entries e ON e.rowid = entries_fts.rowid "
                f"WHERE entries_fts MATCH ? AND {visible} ORDER BY bm25(entries_fts) LIMIT ?",
                [match, *params, shortlist],
            ).fetchall()
        return [(row[:-1], -float(row[-1])) for row in rows]

    def _informative_words(self, words: list[str]) -> list[str]:
        """Drop words too common to rank by, keep the rarest few: same BM25 order, far fewer postings.

        FTS5 clamps the IDF of a word found in more than half of the entries to ~1e-6, so such words
        change no ranking but make BM25 score nearly every entry. They are kept only when nothing
        else is left. Of the rest, the `_MAX_MATCH_TERMS` rarest go into the match.
        """
        if len(words) <= 1:
            return words
        if self._entry_total is None:
            self._entry_total = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        total = self._entry_total
        for word in words:
            if word not in self._doc_freq:
                self._doc_freq[word] = self._db.execute(
                    "SELECT COUNT(*) FROM entries_fts WHERE entries_fts MATCH ?", (fts_query([word]),)
                ).fetchone()[0]
        ranked = sorted((word for word in words if self._doc_freq[word] > 0), key=self._doc_freq.__getitem__)
        informative = [word for word in ranked if self._doc_freq[word] < total / 2] or ranked
        return informative[:_MAX_MATCH_TERMS]

    def _confidence_of(self, entry: Entry) -> float:
        if self.weights.sample_credit:
            return sampled_confidence(entry.alpha_mass, entry.beta_mass, self.weights, self._rng)
        return credit_confidence(entry.alpha_mass, entry.beta_mass, self.weights)

    def unranked(self, entry: Entry) -> RankedEntry:
        """The entry scored on its credit alone (no query), e.g. for dereference."""
        confidence = credit_confidence(entry.alpha_mass, entry.beta_mass, self.weights)
        return RankedEntry(entry, fuse(0.0, confidence, entry.verified, self.weights))

    def _best_credited(
        self, visible: str, params: list[Any], exclude: set[str], count: int
    ) -> list[tuple[Sequence[Any], float]]:
        a, b = self.weights.prior_alpha, self.weights.prior_beta
        rows = self._db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM entries e WHERE {visible} "
            f"ORDER BY ({a} + alpha_mass) / ({a + b} + alpha_mass + beta_mass) DESC, rowid LIMIT ?",
            [*params, count + len(exclude)],
        ).fetchall()
        return [(row, 0.0) for row in rows if row[0] not in exclude][:count]
