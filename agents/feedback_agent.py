"""The feedback-response agent: one `@agl.rollout` per feedback task.

    governance -> (answer) prompt from redacted text + sentiment + recalled lessons -> one chat completion
               -> rule-based reward -> emit messages, reward and Mubit step outcomes

Reward rule for messages the governance stage does not let through (`escalate` / `reject`): the agent
makes no LLM call, emits the decision and a neutral reward of 0.0, and shows no lessons. Such rollouts
carry nothing to learn for the policy (no LLM call, so agl's adapter yields no triplet and GRPO skips
them), and no lesson is credited (none was shown). A correct hand-off is the governance stage's job, not
the policy's, so rewarding it would only add noise to the policy's signal; eval reports decisions
separately and the reward mean over answered tasks.
"""

import json
import os
import zlib

import agentlightning as agl
from openai import OpenAI

from agents.governance import GovernanceResult, govern
from agents.prompt import build_messages
from al_integration.mubit_credit import recalled_lessons, record_step_outcome
from rewards import COMPONENTS, GATES, RewardResult, default_scorer

NOT_ANSWERED_REWARD = 0.0
# Per-process clients keyed by endpoint: a runner serves many rollouts against the same policy server.
_clients: dict[tuple[str, str], OpenAI] = {}


def _client(endpoint: str) -> OpenAI:
    api_key = os.environ.get("OPENAI_API_KEY") or "not-needed-for-a-local-policy"
    key = (endpoint, api_key)
    if key not in _clients:
        _clients[key] = OpenAI(base_url=endpoint, api_key=api_key, max_retries=2, timeout=600)
    return _clients[key]


def sampling_for(llm: agl.LLM, rollout: agl.Rollout) -> dict:
    """The resource's sampling parameters; a `seed` there becomes one seed per (task, step, copy), so that
    a run is reproducible while the G rollouts of a group still differ."""
    params = dict(llm.sampling_parameters or {})
    meta = rollout.metadata or {}
    if "seed" in params and "task_id" in meta:
        key = f"{meta['task_id']}:{meta.get('step', 0)}:{meta.get('copy', 0)}".encode()
        params["seed"] = (int(params["seed"]) * 1_000_003 + zlib.crc32(key)) % 2**31
    return params


def reward_dimensions(result: RewardResult) -> dict[str, float]:
    """The reward as agl's multi-dimensional reward: `total` first (the primary), then each component."""
    return {"total": result.total, **{name: result.components[name].score for name in (*COMPONENTS, *GATES)}}


def _emit_decision(governed: GovernanceResult) -> None:
    agl.emit_message(
        f"governance: {governed.decision}",
        attributes={"governance.decision": governed.decision, "governance.reasons": json.dumps(governed.reasons),
                    "governance.flags": json.dumps(governed.flags), "sentiment.label": governed.sentiment.label},
    )


def governed_task(task: dict) -> GovernanceResult:
    """The governance stage's result for this task. Training and eval govern every task once when they load it
    and enqueue the redacted text with that result (training/train_feedback.py), so the G rollouts of a group do
    not each run Presidio again (~10-30 ms of CPU apiece); a task enqueued without one is governed here."""
    if "governance" in task:
        return GovernanceResult.model_validate(task["governance"])
    return govern(task["feedback"])


@agl.rollout
def feedback_response_agent(task: dict, llm: agl.LLM, rollout: agl.Rollout) -> None:
    governed = governed_task(task)  # nothing below this line sees the raw feedback
    _emit_decision(governed)
    answered = governed.decision == "answer"
    record_step_outcome(rollout.rollout_id, "governance", 1.0 if answered else 0.0,
                        rationale=f"decision {governed.decision}; flags {','.join(governed.flags) or 'none'}")
    if not answered:
        agl.emit_reward(NOT_ANSWERED_REWARD)
        return None

    lessons = recalled_lessons(rollout.rollout_id)  # exactly these are credited at rollout end
    messages = build_messages(governed.redacted_text, governed.sentiment.label, [lesson.text for lesson in lessons])
    agl.emit_message(json.dumps(messages), attributes={"role": "prompt", "lessons": len(lessons)})
    try:
        completion = _client(llm.endpoint).chat.completions.create(
            model=llm.model, messages=messages, **sampling_for(llm, rollout))
        reply = completion.choices[0].message.content or ""
    except Exception as e:
        agl.emit_exception(e)
        record_step_outcome(rollout.rollout_id, "reply", -1.0, rationale=f"LLM call failed: {type(e).__name__}")
        raise
    agl.emit_message(reply, attributes={"role": "reply"})
    record_step_outcome(rollout.rollout_id, "reply", 1.0 if reply.strip() else -1.0,
                        rationale=f"{len(reply.split())} words")

    result = default_scorer()(reply, governed.redacted_text)
    dims = reward_dimensions(result)
    record_step_outcome(rollout.rollout_id, "reward", result.total, rationale="rule-based reward",
                        metadata={name: round(value, 4) for name, value in dims.items()})
    agl.emit_reward(dims, primary_key="total")
    return None
