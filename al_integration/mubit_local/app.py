"""The HTTP face of the engine: the hosted Mubit control-plane routes the SDK and adapter call.

Every success is HTTP 200 with a JSON object shaped like the proto response (snake_case). Errors are
JSON too: 400 for a malformed request, 401 for a missing or wrong Bearer key, 404 for an unknown
ingest job, 501 for a route this engine does not implement.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from al_integration.mubit_local.storage import Entry, MemoryStore, RankedEntry

logger = logging.getLogger(__name__)
ENGINE_NAME = "mubit-local"


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")


class IngestItem(_Request):
    item_id: str = ""
    content_type: str = "text/plain"
    text: str = ""
    metadata_json: str = ""
    intent: str = ""
    lesson_type: str = ""
    lesson_scope: str = ""
    lesson_importance: str = ""
    importance: str = ""
    upsert_key: str = ""
    source: str = ""


class IngestRequest(_Request):
    run_id: str
    agent_id: str = ""
    idempotency_key: str = ""
    items: list[IngestItem] = Field(default_factory=list)


class QueryRequest(_Request):
    run_id: str
    query: str = ""
    limit: int = Field(default=10, ge=0, le=1000)
    entry_types: list[str] = Field(default_factory=list)
    explain: bool = False


class ContextRequest(QueryRequest):
    limit: int = Field(default=5, ge=0, le=1000)


class OutcomeRequest(_Request):
    run_id: str
    reference_id: str = "global"
    outcome: str
    signal: float = 0.0
    rationale: str = ""
    agent_id: str = ""
    verified_in_production: bool = False
    entry_ids: list[str] = Field(default_factory=list)
    idempotency_key: str = ""


class StepOutcomeRequest(_Request):
    run_id: str
    step_id: str
    step_name: str = ""
    outcome: str
    signal: float = 0.0
    rationale: str = ""
    directive_hint: str = ""
    agent_id: str = ""
    metadata_json: str = ""


class LessonsRequest(_Request):
    run_id: str
    scope: str = ""
    importance: str = ""
    limit: int = Field(default=50, ge=0, le=10000)


class DereferenceRequest(_Request):
    run_id: str
    reference_id: str


class RunRequest(_Request):
    run_id: str


class DeleteLessonRequest(_Request):
    lesson_id: str


def evidence(ranked: RankedEntry, explain: bool, weights: dict[str, float]) -> dict[str, Any]:
    """One `QueryEvidence`; `explain_info` carries the score parts when asked for."""
    entry, parts = ranked.entry, ranked.parts
    item: dict[str, Any] = {
        "id": entry.entry_id,
        "content": entry.text,
        "source": entry.source or ENGINE_NAME,
        "score": parts.score,
        "run_id": entry.run_id,
        "entry_type": entry.entry_type,
        "metadata_json": entry.metadata_json,
        "retrieval_mode": "lexical" if parts.lexical_score > 0 else "credit",
        "reference_id": entry.entry_id,
        "referenceable": True,
        "origin_entry_type": entry.entry_type,
        "is_stale": False,
        "superseded_by": "",
        "knowledge_confidence": parts.credit_confidence,
    }
    if explain:
        item["explain_info"] = {
            "semantic_score": 0.0,
            "lexical_score": parts.lexical_score,
            "recency_score": 0.0,
            "temporal_decay_factor": 1.0,
            "stale_penalty_applied": False,
            "fusion_weights_used": weights,
            "temporal_intent_detected": False,
            "rank_by_mode": "relevance_x_credit",
            # Beyond the proto: the credit history behind the score.
            "credit_confidence": parts.credit_confidence,
            "verified_boost": parts.verified_boost,
            "success_count": entry.success_count,
            "failure_count": entry.failure_count,
            "outcome_count": entry.outcome_count,
            "signal_sum": entry.signal_sum,
            "final_score": parts.score,
        }
    return item


def _lesson(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.entry_id,
        "content": entry.text,
        "lesson_type": entry.lesson_type,
        "scope": entry.lesson_scope or "session",
        "importance": entry.importance,
        "conditions": [],
        "rationale": "",
        "source_run_id": entry.run_id,
        "source": entry.source,
    }


def _ok(payload: dict[str, Any]) -> JSONResponse:
    # A ready response skips FastAPI's jsonable_encoder (~1 ms for a 10-item recall with explain).
    return JSONResponse(payload)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message, "code": status})


def create_app(store: MemoryStore, api_key: str = "") -> FastAPI:
    """Build the ASGI app over `store`. With a non-empty `api_key` every request needs that Bearer key."""
    app = FastAPI(title=ENGINE_NAME, docs_url=None, redoc_url=None, openapi_url=None)
    fusion_weights = {
        "lexical": store.weights.lexical,
        "credit": store.weights.credit,
        "verified_boost": store.weights.verified_boost,
    }

    @app.middleware("http")
    async def require_api_key(request: Request, call_next):
        if api_key:
            header = request.headers.get("authorization", "")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip(), api_key):
                reason = "missing Authorization header" if not header else "wrong API key"
                return _error(401, f"unauthorized: {reason} (send 'Authorization: Bearer <key>')")
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
        message = first.get("msg", str(exc))
        return _error(400, f"invalid request to {request.url.path}: {where or 'body'}: {message}")

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("mubit-local failed on %s", request.url.path)
        return _error(500, f"internal error on {request.url.path}: {type(exc).__name__}")

    @app.get("/v2/core/health")
    async def health() -> JSONResponse:
        entries = store.count_entries()
        return _ok({"status": "ok", "healthy": True, "service": ENGINE_NAME, "entries": entries})

    @app.post("/v2/control/ingest")
    async def ingest(req: IngestRequest) -> JSONResponse:
        items = [item.model_dump() for item in req.items]
        return _ok(store.ingest(req.run_id, req.agent_id, items, req.idempotency_key))

    @app.get("/v2/control/ingest/jobs/{job_id}")
    async def ingest_job(job_id: str, run_id: str = "") -> JSONResponse:
        job = store.ingest_job(job_id)
        if job is None:
            return _error(404, f"unknown ingest job {job_id!r}")
        return _ok(job)

    @app.post("/v2/control/query")
    async def query(req: QueryRequest) -> JSONResponse:
        ranked = store.search(req.run_id, req.query, req.limit, req.entry_types)
        items = [evidence(r, req.explain, fusion_weights) for r in ranked]
        return _ok({
            "final_answer": "",
            "evidence": items,
            "confidence": max((r.parts.score for r in ranked), default=0.0),
            "mode": "direct_bypass",
            "degraded": False,
            "consulted_runs": sorted({r.entry.run_id for r in ranked}),
            "routing_summary": f"{ENGINE_NAME}: bm25 shortlist re-ranked with learned credit",
            "signals": {},
            "citations": [],
        })

    @app.post("/v2/control/context")
    async def context(req: ContextRequest) -> JSONResponse:
        ranked = store.search(req.run_id, req.query, req.limit, req.entry_types)
        block = "\n".join(f"- [{r.entry.entry_type}] {r.entry.text}" for r in ranked)
        counts: dict[str, int] = {}
        for r in ranked:
            counts[r.entry.entry_type] = counts.get(r.entry.entry_type, 0) + 1
        return _ok({
            "context_block": block,
            "token_estimate": len(block) // 4,
            "sources": [evidence(r, False, fusion_weights) for r in ranked],
            "budget_used": len(block) // 4,
            "budget_remaining": 0,
            "section_summaries": [],
            "source_counts_by_entry_type": counts,
            "source_counts_by_retrieval_mode": {},
            "evidence_candidates_considered": len(ranked),
            "evidence_dropped_by_budget": 0,
            "exact_references_surfaced": 0,
            "empty_reason": "" if ranked else "no matching memory",
        })

    @app.post("/v2/control/outcome")
    async def outcome(req: OutcomeRequest) -> JSONResponse:
        return _ok(store.record_outcome(**req.model_dump()))

    @app.post("/v2/control/step_outcome")
    async def step_outcome(req: StepOutcomeRequest) -> JSONResponse:
        return _ok(store.record_step_outcome(req.model_dump()))

    @app.post("/v2/control/lessons")
    async def lessons(req: LessonsRequest) -> JSONResponse:
        found = store.list_lessons(req.run_id, req.limit, req.scope, req.importance)
        return _ok({"lessons": [_lesson(entry) for entry in found]})

    @app.post("/v2/control/dereference")
    async def dereference(req: DereferenceRequest) -> JSONResponse:
        entry = store.get_entry(req.reference_id, req.run_id)
        if entry is None:
            return _ok({"found": False})
        return _ok({"found": True, "evidence": evidence(store.unranked(entry), False, {})})

    @app.post("/v2/control/memory_health")
    async def memory_health(req: RunRequest) -> JSONResponse:
        return _ok({
            "entry_counts": store.entry_counts(req.run_id),
            "stale_entries": 0,
            "contradictions": [],
            "low_confidence_count": 0,
            "promotion_candidates": [],
            "section_health": [],
        })

    @app.post("/v2/control/delete_run")
    async def delete_run(req: RunRequest) -> JSONResponse:
        return _ok({"success": store.delete_run(req.run_id)})

    @app.post("/v2/control/lessons/delete")
    async def delete_lesson(req: DeleteLessonRequest) -> JSONResponse:
        return _ok({"success": store.delete_lesson(req.lesson_id)})

    @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def not_implemented(path: str, request: Request) -> JSONResponse:
        return _error(
            501,
            f"{request.method} /{path} is not implemented by the embedded {ENGINE_NAME} engine "
            "(it serves ingest, ingest/jobs, query, outcome, step_outcome, lessons, context, dereference, "
            "memory_health, delete_run, lessons/delete and core/health)",
        )

    return app
