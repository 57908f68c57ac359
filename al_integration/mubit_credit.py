"""The Mubit credit loop inside Agent Lightning: recall at rollout start, credit at rollout end.

`MubitCreditHook` is the adapter's `MubitHook`, subclassed where 0.6.0 falls short under agl 0.3.0:

* agl awaits every hook method; the adapter's are plain functions, so each call ran and then logged a
  `TypeError` traceback. Here they are coroutines and the blocking HTTP calls run in a worker thread.
* The adapter keeps the recalled ids to itself. Here the recalled lessons go into a per-process
  registry keyed by rollout id, which the agent (running in the same runner process) reads with
  `recalled_lessons(rollout_id)`. Exactly the lessons handed to the agent are credited at the end.
* The adapter swallows Mubit failures silently. Here every failure is counted in an `OutageLog`
  (a file, so counts from runner processes reach the algorithm process) and the rollout goes on.
* The adapter builds the recall query from the task (falling back to `str(task)`), which would send
  raw feedback, PII included, to Mubit before governance ran. Here the query comes from chosen task
  fields (or a caller-supplied function).
* A reward returned as a float is added to the store after the spans the hook receives; the hook
  then reads the attempt's spans from the store.
* The outcome carries an idempotency key per rollout attempt, so the SDK retries it on a transient
  failure and the engine counts it once (the adapter's client drops that key).

`record_step_outcome(rollout_id, step, signal, ...)` lets the agent send per-step signals
(governance decision, reply produced, reward components) through the adapter's client, with the
`record_step_outcome` workaround of `al_integration/mubit_client.py`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import agentlightning as agl
from mubit_agent_lightning import MubitHook

from al_integration.mubit_client import make_control_client, make_sdk_client
from al_integration.mubit_outages import OutageLog

logger = logging.getLogger(__name__)

QueryBuilder = Callable[[Any], str]


@dataclass(frozen=True)
class RecalledLesson:
    """A lesson recalled for a rollout: `entry_id` is what gets credited, `text` goes into the prompt."""

    entry_id: str
    text: str
    score: float


@dataclass
class _RolloutMemory:
    lessons: list[RecalledLesson]
    shown: list[str] = field(default_factory=list)


_registry: dict[str, _RolloutMemory] = {}
_registry_lock = threading.Lock()
_active_hook: MubitCreditHook | None = None  # set at construction; forked runner processes inherit it


def recalled_lessons(rollout_id: str, limit: int | None = None) -> list[RecalledLesson]:
    """The lessons recalled for this rollout, best first (at most `limit`).

    Call it from the agent, in the rollout, and put every returned lesson in the prompt: the lessons
    returned here, and only these, are credited with the rollout's reward. Empty when Mubit was
    unreachable or no hook is registered.
    """
    with _registry_lock:
        memory = _registry.get(rollout_id)
        if memory is None:
            return []
        lessons = memory.lessons[:limit] if limit is not None else list(memory.lessons)
        memory.shown += [lesson.entry_id for lesson in lessons if lesson.entry_id not in memory.shown]
        return lessons


def record_step_outcome(
    rollout_id: str,
    step: str,
    signal: float,
    *,
    outcome: str | None = None,
    rationale: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> bool:
    """Send one per-step signal (e.g. step="governance", "reply", "reward.length") for this rollout.

    `signal` in [-1, 1]; `outcome` defaults to success for signal >= 0, else failure. `rationale` and
    `metadata` must not contain raw PII. Fails open: returns False (and counts an outage) when Mubit is
    unreachable, or when no credit hook is registered in this process.
    """
    hook = _active_hook
    if hook is None:
        return False
    return hook.send_step_outcome(rollout_id, step, signal, outcome=outcome, rationale=rationale,
                                  metadata=metadata)


def fields_query(fields: Sequence[str]) -> QueryBuilder:
    """A recall query made of the named task fields (underscores become spaces, so `bug_report` matches)."""

    def build(rollout: Any) -> str:
        task = getattr(rollout, "input", None)
        if not isinstance(task, Mapping):
            return ""
        words = [str(task[name]).replace("_", " ") for name in fields if task.get(name) not in (None, "")]
        return " ".join(words)

    return build


class MubitCreditHook(MubitHook):
    """`MubitHook` with async methods, lessons handed to the agent, and counted outages (see module doc)."""

    def __init__(
        self,
        *,
        endpoint: str,
        api_key: str,
        outages: OutageLog,
        session_id: str = "feedback-agent",
        agent_id: str = "feedback-agent",
        recall_limit: int = 3,
        query_builder: QueryBuilder | None = None,
        entry_types: Sequence[str] = ("lesson",),
        verified_in_production: bool | None = None,
        timeout_ms: int = 5000,
        credit_modes: Sequence[str] | None = None,
    ) -> None:
        sdk = make_sdk_client(endpoint, api_key, timeout_ms=timeout_ms)
        super().__init__(
            endpoint=endpoint,
            api_key=api_key,
            session_id=session_id,
            agent_id=agent_id,
            recall_limit=recall_limit,
            verified_in_production=verified_in_production,
            mubit_client=make_control_client(endpoint, api_key, sdk=sdk),
        )
        self._sdk = sdk
        self.outages = outages
        self.entry_types = list(entry_types)
        self.query_builder = query_builder or fields_query(("category", "topic"))
        # Rollout modes whose reward is credited (None: all). Training credits only "train", so that
        # validation rollouts use the memory without feeding held-out rewards back into it.
        self.credit_modes = None if credit_modes is None else frozenset(credit_modes)
        global _active_hook
        _active_hook = self

    def deactivate(self) -> None:
        """Stop serving `record_step_outcome` in this process (the run is over)."""
        global _active_hook
        if _active_hook is self:
            _active_hook = None

    async def on_rollout_start(self, *, agent: Any, runner: Any, rollout: Any) -> None:
        rollout_id = getattr(rollout, "rollout_id", None)
        if not rollout_id:
            return
        lessons: list[RecalledLesson] = []
        query = self.query_builder(rollout)
        if query.strip() and self.recall_limit > 0:
            try:
                result = await asyncio.to_thread(
                    self._get_client().recall,
                    session_id=self.session_id,
                    query=query,
                    agent_id=self.agent_id,
                    limit=self.recall_limit,
                    entry_types=self.entry_types or None,
                )
                lessons = _lessons_from(result)
            except Exception as exc:  # noqa: BLE001 - fail open: memory must never break a rollout
                self.outages.record("recall", exc, rollout_id)
        with _registry_lock:
            _registry[rollout_id] = _RolloutMemory(lessons)

    async def on_rollout_end(self, *, agent: Any, runner: Any, rollout: Any, spans: Any) -> None:
        rollout_id = getattr(rollout, "rollout_id", None)
        with _registry_lock:
            memory = _registry.pop(rollout_id, None) if rollout_id else None
        if self.credit_modes is not None and getattr(rollout, "mode", None) not in self.credit_modes:
            return
        reward = await _final_reward(runner, rollout, spans)
        if reward is None:
            return
        entry_ids = list(memory.shown) if memory else []
        attempt_id = getattr(getattr(rollout, "attempt", None), "attempt_id", "")
        try:
            # The SDK call, not the adapter's: only it forwards `idempotency_key`, which makes the
            # outcome safe to retry (the SDK then retries it) and counted once by the engine.
            await asyncio.to_thread(
                self._sdk.record_outcome,
                session_id=self.session_id,
                reference_id="global",
                outcome="success" if reward >= 0 else "failure",
                signal=float(reward),
                rationale=f"agent_lightning_rollout reward={reward:.4f} mode={rollout.mode}",
                agent_id=self.agent_id,
                entry_ids=entry_ids or None,
                verified_in_production=bool(self.verified_in_production),
                idempotency_key=f"agl-outcome:{rollout_id}:{attempt_id}",
            )
        except Exception as exc:  # noqa: BLE001 - fail open
            self.outages.record("record_outcome", exc, rollout_id)

    def send_step_outcome(
        self,
        rollout_id: str,
        step: str,
        signal: float,
        *,
        outcome: str | None = None,
        rationale: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> bool:
        with _registry_lock:
            memory = _registry.get(rollout_id)
            shown = list(memory.shown) if memory else []
        step_metadata = {"source": "agent_lightning", **(metadata or {})}
        if shown:
            step_metadata["entry_ids"] = shown
        outcome = outcome or ("success" if signal >= 0 else "failure")
        try:
            # The adapter's client -> integration-base record_step_outcome -> the patched SDK client.
            self._get_client().record_step_outcome(
                session_id=self.session_id,
                step_id=f"{rollout_id}:{step}",
                step_name=step,
                outcome=outcome,
                signal=max(-1.0, min(1.0, float(signal))),
                rationale=rationale,
                agent_id=self.agent_id,
                metadata=step_metadata,
            )
        except Exception as exc:  # noqa: BLE001 - fail open
            self.outages.record("step_outcome", exc, rollout_id)
            return False
        return True


def _lessons_from(result: Any) -> list[RecalledLesson]:
    evidence = result.get("evidence") if isinstance(result, dict) else None
    lessons: list[RecalledLesson] = []
    for item in evidence or []:
        if not isinstance(item, dict):
            continue
        entry_id, text = item.get("reference_id") or item.get("id"), item.get("content")
        if entry_id and text:
            lessons.append(RecalledLesson(str(entry_id), str(text), float(item.get("score") or 0.0)))
    return lessons


async def _final_reward(runner: Any, rollout: Any, spans: Any) -> float | None:
    reward = agl.find_final_reward(spans) if spans else None
    if reward is not None:
        return reward
    # A reward returned as a float is stored after the spans the hook receives: read the attempt back.
    attempt_id = getattr(getattr(rollout, "attempt", None), "attempt_id", None)
    try:
        stored = await runner.get_store().query_spans(rollout.rollout_id, attempt_id)
    except Exception:  # noqa: BLE001 - no store, no reward: nothing to credit
        logger.debug("could not read spans of %s", getattr(rollout, "rollout_id", None), exc_info=True)
        return None
    return agl.find_final_reward(list(stored))
