"""Throughput of SqliteLightningStore against agl's InMemoryLightningStore, and bytes on disk.

One run measures, on the same synthetic spans (an LLM-call-like span: prompt, completion, token ids):
- `add_span` (one span per call, the path of agl's HTTP `add_span`) and `add_many_spans` (batches of
  one rollout's spans, the path of OTLP export) in spans/s, with the SQLite/in-memory ratio
  (target: >= 0.3x for `add_span`);
- `query_spans(rollout_id)` in queries/s and spans/s;
- bytes on disk per 10k spans (database file after a clean close).

    python bench/bench_store.py [--spans 5000] [--per-rollout 10] [--rounds 3] [--json]
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer
from agentlightning.store.base import LightningStore
from agentlightning.store.memory import InMemoryLightningStore
from agentlightning.types import Span
from rich.console import Console
from rich.table import Table

from al_integration.store import SqliteLightningStore

app = typer.Typer(add_completion=False)
AVERAGE_SPAN_JSON = "SELECT AVG(LENGTH(data)) FROM spans"


def llm_like_span(rollout_id: str, attempt_id: str, sequence_id: int) -> Span:
    return Span.from_attributes(
        attributes={
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Thank you for the review of our survey methodology. " * 6,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "We will extend the sample and report the limitations. " * 6,
            "prompt_token_ids": list(range(64)),
            "completion_token_ids": list(range(48)),
            "gen_ai.usage.total_tokens": 112,
        },
        rollout_id=rollout_id,
        attempt_id=attempt_id,
        sequence_id=sequence_id,
        name="openai.chat.completion",
        start_time=1.0e9 + sequence_id,
        end_time=1.0e9 + sequence_id + 0.5,
    )


async def make_spans(store: LightningStore, n_spans: int, per_rollout: int) -> list[list[Span]]:
    groups = []
    for _ in range(n_spans // per_rollout):
        rollout = await store.start_rollout(input="bench")
        rid, aid = rollout.rollout_id, rollout.attempt.attempt_id
        groups.append([llm_like_span(rid, aid, i + 1) for i in range(per_rollout)])
    return groups


async def measure(store: LightningStore, n_spans: int, per_rollout: int) -> dict[str, float]:
    single = await make_spans(store, n_spans, per_rollout)
    start = time.perf_counter()
    for group in single:
        for span in group:
            await store.add_span(span)
    add_span = n_spans / (time.perf_counter() - start)

    batched = await make_spans(store, n_spans, per_rollout)
    start = time.perf_counter()
    for group in batched:
        await store.add_many_spans(group)
    add_many = n_spans / (time.perf_counter() - start)

    rollout_ids = [group[0].rollout_id for group in single]
    start = time.perf_counter()
    returned = 0
    for rollout_id in rollout_ids:
        returned += len((await store.query_spans(rollout_id)).items)
    elapsed = time.perf_counter() - start
    assert returned == n_spans, (returned, n_spans)
    return {
        "add_span_per_s": add_span,
        "add_many_spans_per_s": add_many,
        "query_spans_per_s": len(rollout_ids) / elapsed,
        "query_spans_spans_per_s": returned / elapsed,
    }


async def bench(n_spans: int, per_rollout: int, rounds: int) -> dict:
    """Alternate in-memory and SQLite rounds and keep each one's best, so a busy machine skews both alike."""
    memory_rounds, sqlite_rounds = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            memory_rounds.append(await measure(InMemoryLightningStore(), n_spans, per_rollout))
            path = Path(tmp) / f"bench{r}.sqlite"
            store = SqliteLightningStore(path)
            sqlite_rounds.append(await measure(store, n_spans, per_rollout))
            db = store.db
            json_bytes = await db.run(False, lambda db=db: db.execute(AVERAGE_SPAN_JSON).fetchone()[0])
            await store.close()
            spans_on_disk = 2 * n_spans  # the add_span pass and the add_many_spans pass
            bytes_per_10k = path.stat().st_size / spans_on_disk * 10_000
    memory = {key: max(m[key] for m in memory_rounds) for key in memory_rounds[0]}
    sqlite = {key: max(m[key] for m in sqlite_rounds) for key in sqlite_rounds[0]}
    return {
        "spans": n_spans,
        "spans_per_rollout": per_rollout,
        "rounds": rounds,
        "memory": memory,
        "sqlite": sqlite,
        "ratio": {key: sqlite[key] / memory[key] for key in memory},
        "sqlite_bytes_per_10k_spans": bytes_per_10k,
        "span_json_bytes": json_bytes,
        "add_span_target_met": sqlite["add_span_per_s"] / memory["add_span_per_s"] >= 0.3,
    }


@app.command()
def main(
    spans: Annotated[int, typer.Option(help="spans per measured pass")] = 5_000,
    per_rollout: Annotated[int, typer.Option(help="spans per rollout")] = 10,
    rounds: Annotated[int, typer.Option(help="alternating rounds per store; the best is kept")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
):
    """Measure add_span / add_many_spans / query_spans throughput and bytes on disk."""
    result = asyncio.run(bench(spans, per_rollout, rounds))
    if as_json:
        typer.echo(json.dumps(result))
        return
    title = f"LightningStore throughput: {spans} spans, {per_rollout} per rollout, best of {rounds} rounds"
    table = Table(title=title)
    for column in ("measure", "in-memory", "sqlite", "sqlite / in-memory"):
        table.add_column(column, justify="right")
    for key in result["memory"]:
        table.add_row(
            key,
            f"{result['memory'][key]:,.0f}",
            f"{result['sqlite'][key]:,.0f}",
            f"{result['ratio'][key]:.2f}x",
        )
    Console().print(table)
    Console().print(
        f"sqlite bytes on disk per 10k spans: {result['sqlite_bytes_per_10k_spans'] / 1e6:.1f} MB "
        f"(span JSON: {result['span_json_bytes']:.0f} bytes each); "
        f"add_span target (>= 0.3x) met: {result['add_span_target_met']}"
    )


if __name__ == "__main__":
    app()
