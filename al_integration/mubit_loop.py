"""Assemble the credit loop for a training run: Mubit backend, seed lessons, hook, outage report.

By default the embedded engine runs in-process (free port on 127.0.0.1, SQLite file in the run
directory, a fresh API key per run). When the config names an endpoint and `MUBIT_API_KEY` is set,
that service is used instead. Start before `Trainer(...)`, pass `loop.hook` in `hooks=[...]`, call
`loop.close()` after `fit()`, then print `loop.report()`.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from al_integration.mubit_client import make_control_client
from al_integration.mubit_config import MubitConfig
from al_integration.mubit_credit import MubitCreditHook, QueryBuilder, fields_query
from al_integration.mubit_local import EmbeddedMubit
from al_integration.mubit_outages import OutageLog
from al_integration.mubit_seed import SeedLoadResult, load_seed_lessons, read_seed_lessons

logger = logging.getLogger(__name__)
OUTAGE_LOG_NAME = "mubit_outages.jsonl"


@dataclass(frozen=True)
class CreditReport:
    backend: str  # "embedded" or the hosted endpoint
    outages: dict[str, int]  # failed Mubit calls per operation, from every process of the run
    seeds_added: int
    seeds_deduplicated: int
    rollouts_without_memory: int = 0  # rollouts whose recall or credit failed

    @property
    def outage_total(self) -> int:
        return sum(self.outages.values())

    def unavailable_warning(self, rollouts: int) -> str | None:
        """One plain sentence when the memory was missing from part of a run of `rollouts` rollouts."""
        if not self.rollouts_without_memory and not self.outages.get("seed_lessons"):
            return None
        seeds = " and the seed lessons could not be loaded" if self.outages.get("seed_lessons") else ""
        return (f"Mubit memory was unavailable for {self.rollouts_without_memory} of {rollouts} rollouts{seeds}: "
                "the results are not comparable with a run that had its memory")

    def summary(self) -> str:
        per_op = ", ".join(f"{op}={n}" for op, n in sorted(self.outages.items())) or "none"
        return (
            f"Mubit ({self.backend}): {self.outage_total} outage(s) [{per_op}]; "
            f"seed lessons added={self.seeds_added} already-present={self.seeds_deduplicated}"
        )


class CreditLoop:
    """The running pieces of one run's credit loop."""

    def __init__(self, hook: MubitCreditHook, outages: OutageLog, seeds: SeedLoadResult,
                 backend: str, engine: EmbeddedMubit | None) -> None:
        self.hook = hook
        self.outages = outages
        self.seeds = seeds
        self.backend = backend
        self.engine = engine

    def report(self) -> CreditReport:
        return CreditReport(self.backend, self.outages.counts(), self.seeds.added, self.seeds.deduplicated,
                            len(self.outages.rollouts_without_memory()))

    def close(self) -> None:
        self.hook.deactivate()
        if self.engine is not None:
            self.engine.stop()
            self.engine = None

    def __enter__(self) -> CreditLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_credit_loop(
    config: MubitConfig,
    run_dir: str | Path,
    *,
    query_builder: QueryBuilder | None = None,
    credit_modes: Sequence[str] | None = None,
) -> CreditLoop:
    """Start (or connect to) Mubit, load the seed lessons and build the hook. Raises SeedLessonError."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    seed_lessons = read_seed_lessons(config.seed_lessons) if config.seed_lessons else []
    outages = OutageLog(run_dir / OUTAGE_LOG_NAME)
    outages.path.write_text("")  # this run's outages only

    hosted_key = os.environ.get("MUBIT_API_KEY", "")
    engine: EmbeddedMubit | None = None
    if config.endpoint and hosted_key:
        endpoint, api_key, backend = config.endpoint, hosted_key, config.endpoint
    else:
        if config.endpoint:
            logger.warning("configs: Mubit endpoint %s set but MUBIT_API_KEY is not: using the embedded "
                           "engine", config.endpoint)
        api_key = secrets.token_urlsafe(24)
        engine = EmbeddedMubit(run_dir / config.db_file, api_key=api_key, weights=config.ranking.weights())
        endpoint, backend = engine.start().endpoint, "embedded"

    seeds = SeedLoadResult(0, 0)
    if seed_lessons:
        client = make_control_client(endpoint, api_key, timeout_ms=config.timeout_ms)
        try:
            seeds = load_seed_lessons(client, seed_lessons, session_id=config.session_id,
                                      agent_id=config.agent_id)
        except Exception as exc:  # noqa: BLE001 - fail open: training runs without seed lessons
            outages.record("seed_lessons", exc)

    hook = MubitCreditHook(
        endpoint=endpoint,
        api_key=api_key,
        outages=outages,
        session_id=config.session_id,
        agent_id=config.agent_id,
        recall_limit=config.recall_limit,
        query_builder=query_builder or fields_query(config.query_fields),
        verified_in_production=config.verified_in_production or None,
        timeout_ms=config.timeout_ms,
        credit_modes=credit_modes,
    )
    return CreditLoop(hook, outages, seeds, backend, engine)
