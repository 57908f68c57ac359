"""The HTTP face of the engine: the hosted Mubit control-plane routes the SDK and adapter call.

Every success is HTTP 200 with a JSON object shaped like the proto response (snake_case). Errors are
JSON objects `{"error": message, "code": status}` too: 400 for a malformed request (also a NaN or
infinite number), 401 for a missing or wrong Bearer key, 404 for an unknown route or ingest job, 405 for
a wrong method, 413 for a body over `MAX_BODY_BYTES`, 501 for a route of the hosted contract that this
engine does not serve.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from al_integration.mubit_local.storage import Entry, MemoryStore, RankedEntry

logger = logging.getLogger(__name__)
ENGINE_NAME = "mubit-local"
# Far above any real request (a seed lesson is ~200 bytes, a 100-item ingest batch ~20 KB), far below
# what would hurt the training process the engine shares.
MAX_BODY_BYTES = 1 << 20
# Routes of the hosted contract (mubit-sdk 0.13.2's route table) that this engine does not serve: 501,
# which the SDK raises as UnsupportedFeatureError. Any other unknown path is a plain 404.
HOSTED_ONLY_ROUTES = tuple(
    "/v2/control/" + name for name in (
        "agents agents/heartbeat agents/register archive batch_insert checkpoint circuit_break "
        "context/snapshot diagnose events/subscribe feedback handoff ingest/stats projects projects/agents "
        "projects/agents/delete projects/agents/get projects/agents/list projects/agents/update projects/delete "
        "projects/get projects/list projects/runs projects/runs/get projects/update prompt/activate prompt/diff "
        "prompt/get prompt/optimize prompt/set prompt/versions reflect runs/link runs/unlink sessions/close "
        "sessions/create sessions/get skills skills/activate skills/delete skills/diff skills/get skills/list "
        "skills/optimize skills/update skills/versions strategies"
    ).split()
) + tuple(
    "/v2/core/" + name for name in (
        "acl/check acl/grant acl/revoke auth/users batch_insert insert lookup memory/watch pubsub/list "
        "pubsub/subscribe pubsub/unsubscribe sdm/read sdm/write search session/create session/load "
        "storage/compact storage/stats"
    ).split()
)
SERVED = ("ingest, ingest/jobs, query, outcome, step_outcome, lessons, context, dereference, memory_health, "
          "delete_run, lessons/delete and core/health")


class _Request(BaseModel):
    # NaN or infinity (JSON NaN, Infinity, 1e400) would poison credit sums: 400 instead.
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


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


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": message, "code": status}, headers=headers)


class BodyLimit:
    """Refuse a request body over `max_bytes` with 413, whether declared (Content-Length) or streamed.

    The body is read (and, when too large, drained up to a bound) before answering, so that the client
    gets the 413 instead of a connection reset while it is still sending.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        too_large = declared.isdigit() and int(declared) > self.max_bytes
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= 16 * self.max_bytes:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if not too_large and size <= self.max_bytes:
                chunks.append(body)
            more = message.get("more_body", False)
        if too_large or size > self.max_bytes:
            path = scope.get("path", "")
            answer = _error(413, f"request body to {path} is over the engine's limit of {self.max_bytes} bytes")
            await answer(scope, receive, send)
            return
        await self.app(scope, _replay(b"".join(chunks), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    delivered = False

    async def replayed() -> Message:
        nonlocal delivered
        if delivered:
            return await receive()  # then only the disconnect is left
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def create_app(store: MemoryStore, api_key: str = "", max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    """Build the ASGI app over `store`. With a non-empty `api_key` every request needs that Bearer key."""
    app = FastAPI(title=ENGINE_NAME, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
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

    @app.exception_handler(HTTPException)
    async def no_such_route(request: Request, exc: HTTPException) -> JSONResponse:
        where = f"{request.method} {request.url.path}"
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            return _error(405, f"{where}: method not allowed (use {allowed})", {"Allow": allowed})
        if exc.status_code == 404:
            return _error(404, f"{where}: no such route (the {ENGINE_NAME} engine serves {SERVED})")
        return _error(exc.status_code, f"{where}: {exc.detail}")

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

    async def not_implemented(request: Request) -> JSONResponse:
        return _error(
            501,
            f"{request.method} {request.url.path} is part of the hosted Mubit contract but not implemented by the "
            f"embedded {ENGINE_NAME} engine (it serves {SERVED})",
        )

    for path in HOSTED_ONLY_ROUTES:
        app.add_api_route(path, not_implemented, methods=["GET", "POST"], include_in_schema=False)

    return app
