"""An OpenAI-compatible server for a local Hugging Face causal LM, in the format agl's tracer records.

`/v1/chat/completions` renders the tokenizer's chat template, samples with the request's `temperature`,
`top_p`, `max_tokens`, `n` and `seed`, and answers like vLLM: `prompt_token_ids` at the top level and
`choices[i].token_ids` (the sampled ids, the end-of-turn token included when the reply stopped on it), plus
`choices[i].logprobs.content` when asked. agl's AgentOps patch copies `prompt_token_ids`,
`choices[0].token_ids` and `choices[0].logprobs.content` onto the `openai.chat.completion` span, so
`TracerTraceToTriplet` yields token-level triplets without vLLM (docs/policy_server.md).

Requests that arrive within a short window are micro-batched into ONE `model.generate` call (left padding).
Each row keeps its own sampling parameters and its own seeded generator: a per-row logits processor does
the sampling and `generate` itself runs greedily over the one token the processor leaves. Logprobs are of
the model's raw distribution (temperature 1, no top-p), as vLLM reports by default. `load_weights` swaps
new weights in between two batches. Binds 127.0.0.1 unless told otherwise.
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
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from common.cli import OneLineErrorsCommand
from policy.loading import PolicyLoadError, load_model, load_tokenizer

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256


# ----------------------------------------------------------------------------------------------------------
# The engine: micro-batched sampling with per-row parameters


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


class RowSampler(LogitsProcessor):
    """Samples the next token of every row with that row's temperature, top-p and generator, records the
    raw logprobs, and returns scores that leave only the chosen token (so greedy `generate` picks it). A row
    past its own `max_tokens` is given the end token, which ends it inside the shared `generate` call."""

    def __init__(self, rows: list[SamplingRow], prompt_len: int, stop_id: int, engine_rng: random.Random):
        self.prompt_len = prompt_len
        self.stop_id = stop_id
        self.temperature = torch.tensor([r.temperature for r in rows], dtype=torch.float32)
        self.top_p = torch.tensor([r.top_p for r in rows], dtype=torch.float32)
        self.max_tokens = torch.tensor([r.max_tokens for r in rows])
        self.generators = [
            torch.Generator().manual_seed(r.seed if r.seed is not None else engine_rng.getrandbits(63)) for r in rows
        ]
        self.k = max(r.top_logprobs for r in rows)
        self.chosen: list[torch.Tensor] = []
        self.logprobs: list[torch.Tensor] = []
        self.top: list[tuple[torch.Tensor, torch.Tensor]] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_len
        device = scores.device  # sampling runs on the CPU: the rows' seeded generators live there
        scores = scores.float().cpu()
        logprobs = torch.log_softmax(scores, dim=-1)
        probs = torch.softmax(scores / self.temperature.clamp_min(1e-6)[:, None], dim=-1)
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        outside_top_p = sorted_probs.cumsum(-1) - sorted_probs > self.top_p[:, None]
        sorted_probs = sorted_probs.masked_fill(outside_top_p, 0.0)
        chosen = torch.empty(len(self.generators), dtype=torch.long)
        for i, generator in enumerate(self.generators):
            if self.temperature[i] == 0:
                chosen[i] = order[i, 0]
            else:
                chosen[i] = order[i, torch.multinomial(sorted_probs[i], 1, generator=generator)]
        chosen[step >= self.max_tokens] = self.stop_id
        self.chosen.append(chosen)
        self.logprobs.append(logprobs.gather(1, chosen[:, None]).squeeze(1))
        if self.k:
            self.top.append(logprobs.topk(self.k, dim=-1))
        only_chosen = torch.full_like(scores, float("-inf"))
        only_chosen[torch.arange(len(chosen)), chosen] = 0.0
        return only_chosen.to(device)


@dataclass
class _Pending:
    rows: list[SamplingRow]
    future: Future = field(default_factory=Future)


class PolicyEngine:
    """Owns a causal LM and its tokenizer; samples batches of rows; swaps weights between batches."""

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
        # Sampling is defined by each request, not by the checkpoint's generation defaults.
        model.generation_config = GenerationConfig(eos_token_id=self.stop_ids, pad_token_id=self.pad_id)
        self.max_context: int | None = getattr(model.config, "max_position_embeddings", None)
        self.weights_version = 0
        self.generate_calls = 0
        self.rows_generated = 0  # rows over all generate calls: rows_generated / generate_calls is the mean batch
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # held by a generate call and by a weight swap
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

    @torch.inference_mode()
    def generate(self, rows: list[SamplingRow]) -> list[Sample]:
        """Sample every row in ONE `generate` call (left padding). Thread-safe with `load_weights`."""
        width = max(len(r.prompt_ids) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, width - len(row.prompt_ids) :] = torch.tensor(row.prompt_ids)
            attention_mask[i, width - len(row.prompt_ids) :] = 1
        input_ids, attention_mask = input_ids.to(self.model.device), attention_mask.to(self.model.device)
        max_new = max(r.max_tokens for r in rows)
        with self._lock:
            sampler = RowSampler(rows, width, self.stop_ids[0], self._rng)
            self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=GenerationConfig(
                    do_sample=False, max_new_tokens=max_new, eos_token_id=self.stop_ids, pad_token_id=self.pad_id
                ),
                logits_processor=LogitsProcessorList([sampler]),
            )
            self.generate_calls += 1
            self.rows_generated += len(rows)
        return [self._sample_of_row(sampler, i, row) for i, row in enumerate(rows)]

    def _sample_of_row(self, sampler: RowSampler, i: int, row: SamplingRow) -> Sample:
        ids = [int(step[i]) for step in sampler.chosen]
        end = next((t for t, token in enumerate(ids) if token in self.stop_ids), len(ids))
        if end < row.max_tokens:  # the row sampled its end token: keep it, as vLLM does
            n, finish = end + 1, "stop"
        else:  # it ran out of tokens (a forced end token, if any, is not part of the reply)
            n, finish = row.max_tokens, "length"
        top = []
        if row.top_logprobs:
            top = [
                list(zip(idx[i, : row.top_logprobs].tolist(), val[i, : row.top_logprobs].tolist(), strict=True))
                for val, idx in sampler.top[:n]
            ]
        return Sample(ids[:n], [float(step[i]) for step in sampler.logprobs[:n]], top, finish)

    # -- micro-batching ----------------------------------------------------------------------------------

    def submit(self, rows: list[SamplingRow]) -> Future:
        """Queue the rows of one request; the future resolves to their samples, in order."""
        if self._worker is None:
            raise RuntimeError("PolicyEngine.start() has not been called")
        pending = _Pending(rows)
        self._queue.put(pending)
        return pending.future

    def start(self) -> None:
        if self._worker is None:
            self._worker = threading.Thread(target=self._serve_batches, name="policy-batcher", daemon=True)
            self._worker.start()

    def close(self) -> None:
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None

    def _serve_batches(self) -> None:
        while (first := self._queue.get()) is not None:
            batch, stop = [first], False
            deadline = time.monotonic() + self.batch_window_s
            while sum(len(p.rows) for p in batch) < self.max_batch_size:
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._run_batch(batch)
            if stop:
                break

    def _run_batch(self, batch: list[_Pending]) -> None:
        try:
            samples = self.generate([row for pending in batch for row in pending.rows])
        except Exception as e:  # a failed batch fails its requests, never the worker
            log.exception("generate failed for a batch of %d requests", len(batch))
            for pending in batch:
                pending.future.set_exception(e)
            return
        start = 0
        for pending in batch:
            pending.future.set_result(samples[start : start + len(pending.rows)])
            start += len(pending.rows)

    # -- weights -----------------------------------------------------------------------------------------

    def load_weights(self, source: Mapping[str, torch.Tensor] | str | Path, *, partial: bool = False) -> int:
        """Swap in new weights (a state dict, a model directory, or a .safetensors / .pt file) between two
        generate calls; returns the new weights version. The architecture must match. `partial`: the state
        holds only some of the model's tensors (a LoRA update sends only the adapters), each of which must
        exist in the served model."""
        state = source if isinstance(source, Mapping) else _read_state_dict(Path(source))
        with self._lock:
            try:
                result = self.model.load_state_dict(state, strict=not partial)
            except RuntimeError as e:
                raise PolicyLoadError(f"weights do not fit the served model: {str(e).splitlines()[0]}") from None
            if result.unexpected_keys:
                raise PolicyLoadError(f"weights do not fit the served model: unexpected {result.unexpected_keys[0]}")
            self.weights_version += 1
            return self.weights_version


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
