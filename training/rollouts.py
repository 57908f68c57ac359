"""Enqueue rollouts and read finished ones back from the LightningStore.

What a finished rollout holds for us, read from its spans: the governance decision (a message span),
the redacted prompt and the reply (message spans), the reward with its components (agl's
multi-dimensional reward span, `total` first) and, when the agent called the LLM, one
(prompt ids, response ids, behaviour logprobs) triplet from agl's adapter and the completion's finish reason
(`stop`, or `length` when it ran into max_tokens) from the LLM call's span.
"""

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import agentlightning as agl
from agentlightning.emitter.message import get_message_value
from agentlightning.emitter.reward import get_rewards_from_span
from agentlightning.semconv import AGL_MESSAGE

from training.grpo import Sample

logger = logging.getLogger(__name__)
LLM_CALL_SPAN = "openai.chat.completion"  # recorded by agl's AgentOps instrumentation of the openai client
FINISH_REASON = "gen_ai.completion.0.finish_reason"


@dataclass
class RolloutResult:
    rollout_id: str
    task_id: str
    mode: str
    status: str
    decision: str | None = None
    reward: float | None = None
    components: dict[str, float] = field(default_factory=dict)
    prompt_messages: list[dict] | None = None  # redacted
    reply: str | None = None
    sample: Sample | None = None  # None when the agent made no LLM call (governance said no) or it failed
    finish_reason: str | None = None  # of the LLM call: "stop" (end token) or "length" (cut at max_tokens)

    @property
    def answered(self) -> bool:
        return self.decision == "answer" and self.reply is not None


async def enqueue(store: agl.LightningStore, tasks: list[dict], *, mode: str, resources_ids: list[str], copies: int,
                  config: agl.RolloutConfig, step: int) -> list[str]:
    """`copies` rollouts of each task (a GRPO group); returns their ids in task order. Rollout i runs against
    `resources_ids[i % len(resources_ids)]`: one per policy replica, so requests spread over the replicas."""
    ids = []
    for task in tasks:
        for k in range(copies):
            rollout = await store.enqueue_rollout(
                input=task, mode=mode, resources_id=resources_ids[len(ids) % len(resources_ids)], config=config,
                metadata={"task_id": task["id"], "step": step, "copy": k},
            )
            ids.append(rollout.rollout_id)
    return ids


async def wait_all(store: agl.LightningStore, rollout_ids: list[str], deadline_s: float,
                   on_progress=None) -> list[agl.Rollout]:
    """Poll until every rollout is terminal or the deadline passes (short waits keep the loop responsive)."""
    pending = set(rollout_ids)
    done: dict[str, agl.Rollout] = {}
    end = time.monotonic() + deadline_s
    while pending and time.monotonic() < end:
        for rollout in await store.wait_for_rollouts(rollout_ids=sorted(pending), timeout=1.0):
            if rollout.rollout_id in pending:
                pending.discard(rollout.rollout_id)
                done[rollout.rollout_id] = rollout
        if on_progress is not None:
            on_progress(len(done), len(rollout_ids))
        await asyncio.sleep(0)
    if pending:
        logger.warning("%d rollouts did not finish within %.0f s; they are left out", len(pending), deadline_s)
    return [done[r] for r in rollout_ids if r in done]


def _message_spans(spans: list[agl.Span]) -> list[tuple[str, dict[str, Any]]]:
    return [(get_message_value(s) or "", dict(s.attributes or {})) for s in spans if s.name == AGL_MESSAGE]


async def read_result(store: agl.LightningStore, adapter: agl.TraceAdapter, rollout: agl.Rollout) -> RolloutResult:
    meta = rollout.metadata or {}
    result = RolloutResult(rollout.rollout_id, str(meta.get("task_id", "")), str(rollout.mode), str(rollout.status))
    spans = await store.query_spans(rollout.rollout_id, "latest")
    for body, attributes in _message_spans(spans):
        if "governance.decision" in attributes:
            result.decision = str(attributes["governance.decision"])
        elif attributes.get("role") == "prompt":
            result.prompt_messages = json.loads(body)
        elif attributes.get("role") == "reply":
            result.reply = body
    for span in reversed(spans):
        dims = get_rewards_from_span(span)
        if dims:
            result.reward = dims[0].value
            result.components = {d.name: d.value for d in dims[1:]}
            break
    for span in reversed(spans):
        if span.name == LLM_CALL_SPAN:
            result.finish_reason = (span.attributes or {}).get(FINISH_REASON)
            break
    if rollout.status != "succeeded" or not result.answered:
        return result
    try:
        triplets = adapter.adapt(spans)
    except ValueError:  # no LLM call span at all
        triplets = []
    usable = [t for t in triplets if t.prompt.get("token_ids") and t.response.get("token_ids")]
    if usable and result.reward is not None:
        t = usable[-1]
        logprobs = t.response.get("logprobs")
        behaviour = [float(x["logprob"]) for x in logprobs] if isinstance(logprobs, list) else None
        result.sample = Sample(group_id=result.task_id, prompt_ids=list(t.prompt["token_ids"]),
                               response_ids=list(t.response["token_ids"]), reward=result.reward,
                               behaviour_logprobs=behaviour)
    return result
