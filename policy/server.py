"""An OpenAI-compatible server for a local Hugging Face causal LM, in the format agl's tracer records.

`/v1/chat/completions` renders the tokenizer's chat template, samples with the request's `temperature`,
`top_p`, `max_tokens`, `n` and `seed`, and answers like vLLM: `prompt_token_ids` at the top level and
`choices[i].token_ids` (the sampled ids, the end-of-turn token included when the reply stopped on it), plus
`choices[i].logprobs.content` when asked. agl's AgentOps patch copies `prompt_token_ids`,
`choices[0].token_ids` and `choices[0].logprobs.content` onto the `openai.chat.completion` span, so
`TracerTraceToTriplet` yields token-level triplets without vLLM (docs/policy_server.md).

Continuous batching: requests that arrive within a short window start decoding together (left padding), rows
of later requests join the running batch between two decode steps and finished rows leave it, so the batch
stays full while clients come and go. Each row keeps its own sampling parameters and its own seeded random
stream; the batch is sampled in one pass (`sample_next`). Logprobs are of the model's raw distribution
(temperature 1, no top-p), as vLLM reports by default. `load_weights` swaps new weights in once the rows in
flight are done. Binds 127.0.0.1 unless told otherwise.
"""

import asyncio
import logging
import queue
import random
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import torch
import typer
import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import Cache, DynamicLayer

from common.cli import OneLineErrorsCommand
from policy.loading import PolicyLoadError, load_model, load_tokenizer
from policy.lora import adapters_unfolded, fold_adapters

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256


# ----------------------------------------------------------------------------------------------------------
# The engine: continuous batching with per-row sampling parameters


@dataclass(frozen=True)
class SamplingRow:
    """One completion to sample: a prompt's token ids and the parameters of the request it came from."""

    prompt_ids: list[int]
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    top_logprobs: int = 0  # alternatives per token to report with the sampled token's logprob


@dataclass
class Sample:
    token_ids: list[int]
    logprobs: list[float]  # of each sampled token under the model's raw distribution
    top_logprobs: list[list[tuple[int, float]]]
    finish_reason: Literal["stop", "length"]


class GrowingLayer(DynamicLayer):
    """One layer's KV cache that appends into spare room. HF's `DynamicLayer` re-allocates and copies the whole
    cache for every new token, which on a CPU is a large share of a decode step; this one doubles its buffer when
    it is full and hands out views. The row operations are what the decode loop needs."""

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        super().lazy_initialization(key_states, value_states)
        self.buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        length, end = self.get_seq_length(), self.get_seq_length() + key_states.shape[-2]
        if self.buffers is None or end > self.buffers[0].shape[-2]:
            room = max(2 * end, 64)
            self.buffers = tuple(self._moved(old, new, length, room)
                                 for old, new in ((self.keys, key_states), (self.values, value_states)))
        keys, values = self.buffers
        keys[..., length:end, :] = key_states
        values[..., length:end, :] = value_states
        self.keys, self.values = keys[..., :end, :], values[..., :end, :]
        return self.keys, self.values

    @staticmethod
    def _moved(old: torch.Tensor, new: torch.Tensor, length: int, room: int) -> torch.Tensor:
        buffer = new.new_empty((*new.shape[:-2], room, new.shape[-1]))
        if length:
            buffer[..., :length, :] = old
        return buffer

    def set(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.keys, self.values, self.buffers = keys, values, None

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        if self.get_seq_length() > 0:
            self.set(self.keys[indices], self.values[indices])


def _padded_left(t: torch.Tensor, width: int, dim: int) -> torch.Tensor:
    missing = width - t.shape[dim]
    if missing == 0:
        return t
    shape = list(t.shape)
    shape[dim] = missing
    return torch.cat([t.new_zeros(shape), t], dim=dim)


@dataclass
class _Row:
    """One row being sampled: its request, its random stream and what it has produced so far."""

    spec: SamplingRow
    pending: "_Pending"
    index: int  # its place among the request's rows
    stream: random.Random
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    top: list[list[tuple[int, float]]] = field(default_factory=list)
    finish: Literal["stop", "length"] | None = None

    def sample(self) -> Sample:
        return Sample(self.token_ids, self.logprobs, self.top, self.finish or "length")


@dataclass
class _Pending:
    rows: list[SamplingRow]
    future: Future = field(default_factory=Future)
    samples: list[Sample | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.samples = [None] * len(self.rows)

    def done(self, row: _Row) -> None:
        self.samples[row.index] = row.sample()
        if all(s is not None for s in self.samples) and not self.future.done():
            self.future.set_result(self.samples)


def sample_next(logits: torch.Tensor, rows: list[_Row]) -> tuple[torch.Tensor, torch.Tensor, Any]:
    """The next token of every row, with that row's temperature, top-p and random stream; the raw (temperature 1)
    logprob of each chosen token; the top alternatives when some row asks for them.

    Batched inverse-CDF sampling: one uniform draw per row from its own stream, then one `searchsorted` over the
    batch; the vocabulary is sorted only when some row samples with top-p < 1."""
    scores = logits.float().cpu()  # sampling runs on the CPU, where the rows' random streams live
    logprobs = torch.log_softmax(scores, dim=-1)
    greedy = torch.tensor([r.spec.temperature == 0 for r in rows])
    temperature = torch.tensor([r.spec.temperature or 1.0 for r in rows])[:, None]
    probs = torch.softmax(scores / temperature, dim=-1)
    order = None
    if any(r.spec.top_p < 1 and r.spec.temperature > 0 for r in rows):
        top_p = torch.tensor([r.spec.top_p for r in rows])[:, None]
        probs, order = probs.sort(dim=-1, descending=True)  # keep the most likely tokens up to top_p (at least one)
        probs = probs.masked_fill(probs.cumsum(-1) - probs > top_p, 0.0)
    cdf = probs.cumsum(-1)
    draws = torch.tensor([r.stream.random() for r in rows])[:, None] * cdf[:, -1:]
    picked = torch.searchsorted(cdf, draws, right=True).clamp_max(cdf.shape[-1] - 1)
    chosen = (picked if order is None else order.gather(1, picked)).squeeze(1)
    chosen = torch.where(greedy, scores.argmax(dim=-1), chosen)
    k = max(r.spec.top_logprobs for r in rows)
    return chosen, logprobs.gather(1, chosen[:, None]).squeeze(1), logprobs.topk(k, dim=-1) if k else None


class _Batch:
    """Rows decoding together: one left-padded KV cache, its attention mask, and each row's last sampled token
    (fed at the next step). Rows join (`merge`) and finished rows leave (`compact`) between two steps."""

    def __init__(self, engine: "PolicyEngine", rows: list[_Row]):
        self.engine, self.rows = engine, rows
        width = max(len(r.spec.prompt_ids) for r in rows)
        ids = torch.full((len(rows), width), engine.pad_id, dtype=torch.long)
        self.mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, width - len(row.spec.prompt_ids) :] = torch.tensor(row.spec.prompt_ids)
            self.mask[i, width - len(row.spec.prompt_ids) :] = 1
        positions = (self.mask.cumsum(-1) - 1).clamp_min(0)
        self.cache = Cache(layer_class_to_replicate=GrowingLayer)
        self._forward(ids, positions, logits_to_keep=1)

    @property
    def finished(self) -> bool:
        return all(r.finish for r in self.rows)

    def step(self) -> None:
        positions = self.mask.sum(-1, keepdim=True)  # real tokens before the one fed now
        self.mask = torch.cat([self.mask, self.mask.new_ones((len(self.rows), 1))], dim=1)
        self._forward(self.next_ids[:, None], positions)

    def _forward(self, ids: torch.Tensor, positions: torch.Tensor, **kwargs: Any) -> None:
        device = self.engine.model.device
        out = self.engine.model(input_ids=ids.to(device), attention_mask=self.mask.to(device),
                                position_ids=positions.to(device), cache=self.cache, use_cache=True, **kwargs)
        chosen, logprobs, top = sample_next(out.logits[:, -1], self.rows)
        self.next_ids = chosen
        stop_ids = self.engine.stop_ids
        for i, (row, token, logprob) in enumerate(zip(self.rows, chosen.tolist(), logprobs.tolist(), strict=True)):
            if row.finish:
                continue
            row.token_ids.append(token)
            row.logprobs.append(logprob)
            if row.spec.top_logprobs:
                values, indices = top
                k = row.spec.top_logprobs
                row.top.append(list(zip(indices[i, :k].tolist(), values[i, :k].tolist(), strict=True)))
            if token in stop_ids:
                row.finish = "stop"  # the end token is part of the reply, as vLLM reports it
            elif len(row.token_ids) >= row.spec.max_tokens:
                row.finish = "length"
            if row.finish:
                row.pending.done(row)

    def merge(self, other: "_Batch") -> None:
        width = max(self.mask.shape[1], other.mask.shape[1])
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=True):
            if mine.is_initialized and theirs.is_initialized:
                mine.set(*(torch.cat([_padded_left(a, width, -2), _padded_left(b, width, -2)])
                           for a, b in ((mine.keys, theirs.keys), (mine.values, theirs.values))))
        self.mask = torch.cat([_padded_left(self.mask, width, 1), _padded_left(other.mask, width, 1)])
        self.next_ids = torch.cat([self.next_ids, other.next_ids])
        self.rows += other.rows

    def compact(self) -> None:
        """Drop finished rows once they are a quarter of the batch (each drop copies the cache), and the padding
        columns no row needs any more."""
        done = sum(1 for r in self.rows if r.finish)
        if done == 0 or done < len(self.rows) // 4:
            return
        keep = torch.tensor([i for i, r in enumerate(self.rows) if not r.finish], dtype=torch.long)
        self.rows = [self.rows[i] for i in keep.tolist()]
        self.mask, self.next_ids = self.mask[keep], self.next_ids[keep]
        start = int(self.mask.any(dim=0).long().argmax())
        for layer in self.cache.layers:
            if layer.is_initialized:
                layer.set(layer.keys[keep, ..., start:, :], layer.values[keep, ..., start:, :])
        self.mask = self.mask[:, start:]


class PolicyEngine:
    """Owns a causal LM and its tokenizer; samples rows with continuous batching; swaps weights between rows.
    It owns the model: a float32 LoRA model is served with its adapters folded into the base weights, in place,
    so give it its own copy (training gives it a replica) rather than the learner's."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        model_name: str = "policy",
        max_batch_size: int = 64,
        batch_window_s: float = 0.02,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ):
        if tokenizer.chat_template is None:
            raise PolicyLoadError(f"model '{model_name}': its tokenizer has no chat template")
        self.model = model.to(device).eval()
        fold_adapters(self.model)  # a LoRA model is served with its adapters folded in (policy/lora.py)
        self.tokenizer = tokenizer
        self.model_name = model_name
        self.max_batch_size = max_batch_size
        self.batch_window_s = batch_window_s
        eos = model.generation_config.eos_token_id if model.generation_config is not None else None
        eos = eos if isinstance(eos, list) else [eos]
        self.stop_ids = [i for i in dict.fromkeys([*eos, tokenizer.eos_token_id]) if i is not None]
        if not self.stop_ids:
            raise PolicyLoadError(f"model '{model_name}': neither the model nor the tokenizer names an end token")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_ids[0]
        self.max_context: int | None = getattr(model.config, "max_position_embeddings", None)
        self.weights_version = 0
        # For tests and benchmarks: decode runs (idle to idle), rows per admission, decode steps and the rows
        # they carried (row_steps / decode_steps is the mean batch).
        self.decode_runs = 0
        self.admitted: list[int] = []
        self.decode_steps = 0
        self.row_steps = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # held while any row is being decoded, and by a weight swap
        self._swaps_waiting = 0  # load_weights calls waiting for the rows in flight
        self._swaps_lock = threading.Lock()
        self._queue: queue.Queue[_Pending | None] = queue.Queue()
        self._worker: threading.Thread | None = None

    @classmethod
    def from_pretrained(cls, path: str | Path, *, model_name: str | None = None, dtype: torch.dtype | None = None,
                        **kwargs) -> "PolicyEngine":
        """Serve a model directory or a LoRA adapter directory (policy/loading.py)."""
        path = Path(path)
        model = load_model(path, dtype=dtype or torch.float32)
        return cls(model, load_tokenizer(path), model_name=model_name or path.name, **kwargs)

    # -- prompts -----------------------------------------------------------------------------------------

    def prompt_ids(self, messages: list[dict]) -> list[int]:
        """The chat template rendered and tokenized, ending with the assistant's turn marker."""
        encoded = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)
        return list(encoded["input_ids"])

    def decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode([t for t in token_ids if t not in self.stop_ids], skip_special_tokens=True)

    # -- sampling ----------------------------------------------------------------------------------------

    def _rows(self, pending: _Pending) -> list[_Row]:
        return [_Row(spec, pending, i, random.Random(spec.seed if spec.seed is not None else self._rng.getrandbits(63)))
                for i, spec in enumerate(pending.rows)]

    @torch.inference_mode()
    def generate(self, rows: list[SamplingRow]) -> list[Sample]:
        """Sample every row together, here and now (no queue). Thread-safe with `load_weights`."""
        pending = _Pending(rows)
        with self._lock:
            self.decode_runs += 1
            self._decode(_Batch(self, self._rows(pending)))
        return pending.future.result()

    def _decode(self, batch: _Batch, admit=None) -> None:
        """Step `batch` until its rows are done; `admit()` may return rows to join between two steps."""
        self.admitted.append(len(batch.rows))
        while not batch.finished:
            batch.step()
            self.decode_steps += 1
            self.row_steps += sum(1 for r in batch.rows if not r.finish)
            batch.compact()
            joining = admit(self.max_batch_size - sum(1 for r in batch.rows if not r.finish)) if admit else []
            if joining:
                batch.merge(_Batch(self, joining))
                self.admitted.append(len(joining))

    # -- the queue: continuous batching ------------------------------------------------------------------

    def submit(self, rows: list[SamplingRow]) -> Future:
        """Queue the rows of one request; the future resolves to their samples, in order."""
        if self._worker is None:
            raise RuntimeError("PolicyEngine.start() has not been called")
        pending = _Pending(rows)
        self._queue.put(pending)
        return pending.future

    def start(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._serve, name="policy-batcher", daemon=True)
            self._worker.start()

    def close(self) -> None:
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None

    def _serve(self) -> None:
        """Idle: wait for a request, then up to `batch_window_s` for more, and start decoding them together.
        Busy: between two decode steps, rows of newly arrived requests join (up to `max_batch_size` rows), so
        the batch stays full while rollouts come and go; rows that finish leave. No row joins while a weight
        swap waits, so every row is sampled by one version of the weights."""
        waiting: list[_Row] = []
        stopping = False

        def take(block: bool, timeout: float | None = None) -> None:
            nonlocal stopping
            while not stopping:
                try:
                    item = self._queue.get(block=block, timeout=timeout)
                except queue.Empty:
                    return
                if item is None:
                    stopping = True
                    return
                waiting.extend(self._rows(item))
                block = False

        def admit(room: int) -> list[_Row]:
            take(block=False)
            if self._swaps_waiting or room <= 0:
                return []
            joining, waiting[:] = waiting[:room], waiting[room:]
            taken.extend(joining)
            return joining

        while True:
            if not waiting:
                if stopping:
                    return
                take(block=True)
                deadline = time.monotonic() + self.batch_window_s
                while not stopping and len(waiting) < self.max_batch_size and time.monotonic() < deadline:
                    take(block=True, timeout=max(0.0, deadline - time.monotonic()))
                if not waiting:
                    continue
            while self._swaps_waiting:  # a swap asked first: let it in before the next rows start
                time.sleep(0.001)
            taken, waiting[:] = waiting[: self.max_batch_size], waiting[self.max_batch_size :]
            with self._lock, torch.inference_mode():
                self.decode_runs += 1
                try:
                    self._decode(_Batch(self, list(taken)), admit)
                except Exception as e:  # a failed batch fails its requests, never the worker
                    log.exception("decoding failed for %d rows", len(taken))
                    for pending in {id(r.pending): r.pending for r in taken}.values():
                        if not pending.future.done():
                            pending.future.set_exception(e)

    # -- weights -----------------------------------------------------------------------------------------

    def load_weights(self, source: Mapping[str, torch.Tensor] | str | Path, *, partial: bool = False) -> int:
        """Swap in new weights (a state dict, a model directory, or a .safetensors / .pt file) once the rows in
        flight are done (none joins meanwhile); returns the new weights version. The architecture must match.
        `partial`: the state holds only some of the model's tensors (a LoRA update sends only the adapters), each
        of which must exist in the served model."""
        state = source if isinstance(source, Mapping) else _read_state_dict(Path(source))
        with self._swaps_lock:
            self._swaps_waiting += 1
        try:
            with self._lock:
                try:
                    with adapters_unfolded(self.model):
                        result = self.model.load_state_dict(state, strict=not partial)
                except RuntimeError as e:
                    raise PolicyLoadError(f"weights do not fit the served model: {str(e).splitlines()[0]}") from None
                if result.unexpected_keys:
                    unexpected = result.unexpected_keys[0]
                    raise PolicyLoadError(f"weights do not fit the served model: unexpected {unexpected}")
                self.weights_version += 1
                return self.weights_version
        finally:
            with self._swaps_lock:
                self._swaps_waiting -= 1


def _read_state_dict(path: Path) -> Mapping[str, torch.Tensor]:
    if path.is_dir():
        return load_model(path).state_dict()
    if not path.is_file():
        raise PolicyLoadError(f"{path}: no such weights file or model directory")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(path)
    return torch.load(path, map_location="cpu", weights_only=True)


# ----------------------------------------------------------------------------------------------------------
# The HTTP API (OpenAI chat completions, vLLM token ids)


class TextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content)
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    """The OpenAI fields this server honours; other fields OpenAI clients send are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    n: int | None = Field(None, ge=1, le=16)
    seed: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    stream: bool | None = None


class ApiError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


def _error(status: int, message: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    kind = {404: "not_found_error"}.get(status, "invalid_request_error")
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(status_code=status, content=body)


def create_app(engine: PolicyEngine) -> FastAPI:
    """The FastAPI app; `engine.start()` must have been called (PolicyServer does it)."""
    app = FastAPI(title="policy server", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(ApiError)
    async def api_error(_: Request, e: ApiError) -> JSONResponse:
        return _error(e.status, e.message, e.param, e.code)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, e: RequestValidationError) -> JSONResponse:
        first = e.errors()[0]
        loc = [str(p) for p in first.get("loc", ()) if p != "body"]
        if first.get("type") == "json_invalid":
            return _error(400, "the request body is not valid JSON")
        param = ".".join(loc) or None
        return _error(400, f"{param or 'body'}: {first.get('msg', 'invalid value')}", param)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        message = f"{request.method} {request.url.path}: {e.detail}"
        return _error(e.status_code, message, code="not_found" if e.status_code == 404 else None)

    @app.get("/v1/models")
    async def models() -> dict:
        card = {"id": engine.model_name, "object": "model", "created": 0, "owned_by": "local"}
        if engine.max_context:
            card["max_model_len"] = engine.max_context
        return {"object": "list", "data": [card]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: ChatCompletionRequest) -> dict:
        rows = _rows_of(request, engine)
        samples = await asyncio.wrap_future(engine.submit(rows))
        return _completion(request, engine, rows[0].prompt_ids, samples)

    return app


def _rows_of(request: ChatCompletionRequest, engine: PolicyEngine) -> list[SamplingRow]:
    if request.model != engine.model_name:
        raise ApiError(404, f"The model `{request.model}` does not exist.", "model", "model_not_found")
    if request.stream:
        raise ApiError(422, "stream: streaming is not supported by this server", "stream", "unsupported_parameter")
    if request.top_logprobs and not request.logprobs:
        raise ApiError(400, "top_logprobs: requires logprobs to be true", "top_logprobs")
    messages = [{"role": m.role if m.role != "developer" else "system", "content": m.text()} for m in request.messages]
    try:
        prompt_ids = engine.prompt_ids(messages)
    except Exception as e:  # the template rejects the conversation (e.g. an unsupported role order)
        raise ApiError(400, f"messages: the chat template cannot render them: {e}", "messages") from None
    room = (engine.max_context - len(prompt_ids)) if engine.max_context else DEFAULT_MAX_TOKENS
    max_tokens = request.max_completion_tokens or request.max_tokens or min(DEFAULT_MAX_TOKENS, room)
    if engine.max_context and (room < 1 or max_tokens > room):
        raise ApiError(
            400,
            f"This model's maximum context length is {engine.max_context} tokens. However, you requested "
            f"{len(prompt_ids) + max_tokens} tokens ({len(prompt_ids)} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion.",
            "messages",
            "context_length_exceeded",
        )
    top_logprobs = (request.top_logprobs or 0) if request.logprobs else 0
    n = request.n or 1
    return [
        SamplingRow(
            prompt_ids=prompt_ids,
            temperature=1.0 if request.temperature is None else request.temperature,
            top_p=1.0 if request.top_p is None else request.top_p,
            max_tokens=max_tokens,
            seed=None if request.seed is None else request.seed + i,
            top_logprobs=top_logprobs,
        )
        for i in range(n)
    ]


def _token_logprob(engine: PolicyEngine, token_id: int, logprob: float) -> dict:
    text = engine.tokenizer.decode([token_id])
    return {"token": text, "logprob": logprob, "bytes": list(text.encode("utf-8"))}


def _completion(request: ChatCompletionRequest, engine: PolicyEngine, prompt_ids: list[int], samples) -> dict:
    choices = []
    for index, sample in enumerate(samples):
        logprobs = None
        if request.logprobs:
            content = []
            for t, (token_id, logprob) in enumerate(zip(sample.token_ids, sample.logprobs, strict=True)):
                entry = _token_logprob(engine, token_id, logprob)
                alternatives = sample.top_logprobs[t] if sample.top_logprobs else []
                entry["top_logprobs"] = [_token_logprob(engine, i, lp) for i, lp in alternatives]
                content.append(entry)
            logprobs = {"content": content, "refusal": None}
        choices.append(
            {
                "index": index,
                "message": {"role": "assistant", "content": engine.decode(sample.token_ids)},
                "finish_reason": sample.finish_reason,
                "logprobs": logprobs,
                "token_ids": sample.token_ids,
            }
        )
    completion_tokens = sum(len(s.token_ids) for s in samples)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": engine.model_name,
        "system_fingerprint": f"weights-v{engine.weights_version}",
        "choices": choices,
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": completion_tokens,
            "total_tokens": len(prompt_ids) + completion_tokens,
        },
        "prompt_token_ids": prompt_ids,
    }


# ----------------------------------------------------------------------------------------------------------
# Running it: in-process (a background thread) or from the command line


class PolicyServer:
    """uvicorn in a background thread on 127.0.0.1 (a free port unless one is given); a context manager.

    with PolicyServer(PolicyEngine.from_pretrained(path)) as server:
        openai.OpenAI(base_url=server.endpoint, api_key="local")

    `host="0.0.0.0"` serves other machines too (runners on other hosts); the endpoint then names this host.
    """

    def __init__(self, engine: PolicyEngine, *, host: str = "127.0.0.1", port: int = 0,
                 startup_timeout_s: float = 30.0):
        self.engine = engine
        self.host = host
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def endpoint(self) -> str:
        """The OpenAI base URL (ends in /v1), what `agl.LLM(endpoint=...)` takes."""
        host = socket.getfqdn() if self.host == "0.0.0.0" else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> "PolicyServer":
        self.engine.start()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((self.host, self.port))
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(create_app(self.engine), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="policy-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the policy server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self.engine.close()

    def __enter__(self) -> "PolicyServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


cli = typer.Typer(add_completion=False, help=__doc__.split("\n\n")[0])


@cli.command(cls=OneLineErrorsCommand)
def serve(
    model: Annotated[Path, typer.Option(help="a local Hugging Face causal LM directory (with a chat template)")],
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port")] = 8000,
    host: Annotated[str, typer.Option(help="interface to bind; 0.0.0.0 serves other machines too")] = "127.0.0.1",
    served_model_name: Annotated[str | None, typer.Option(help="the model name clients send")] = None,
    max_batch_size: Annotated[int, typer.Option(min=1)] = 64,
    batch_window_ms: Annotated[float, typer.Option(min=0)] = 20.0,
) -> None:
    """Serve MODEL at http://HOST:PORT/v1 until interrupted."""
    try:
        engine = PolicyEngine.from_pretrained(
            model, model_name=served_model_name, max_batch_size=max_batch_size, batch_window_s=batch_window_ms / 1000
        )
    except PolicyLoadError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(code=2) from None
    engine.start()
    typer.echo(f"serving '{engine.model_name}' at http://{host}:{port}/v1")
    try:
        uvicorn.run(create_app(engine), host=host, port=port, log_level="warning", access_log=False)
    finally:
        engine.close()


if __name__ == "__main__":
    cli()
