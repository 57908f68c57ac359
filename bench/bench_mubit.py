"""Benchmark the embedded Mubit engine through the real mubit-sdk client over HTTP.

Measures recall latency (p50/p95) at each store size and ingest throughput (batched and one item per
request). Target: recall p95 <= 20 ms at 10k entries on a 2-core machine.

    python bench/bench_mubit.py [--sizes 1000,10000] [--queries 300]
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer
from mubit import Client
from rich.console import Console
from rich.table import Table

import al_integration  # noqa: F401  (offline defaults)

REPO = Path(__file__).resolve().parents[1]
KEY = "bench-key"
BATCH = 100
console = Console()


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    """Real words from the seed lessons first (most frequent), then synthetic ones: a Zipf-like corpus."""
    words: list[str] = []
    for line in (REPO / "data" / "lessons.jsonl").read_text().splitlines():
        for word in json.loads(line)["text"].lower().replace(",", " ").replace(".", " ").split():
            if word.isalpha() and word not in words:
                words.append(word)
    while len(words) < size:
        words.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9))))
    return words


class TextSampler:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]

    def text(self, low: int, high: int) -> str:
        return " ".join(self.rng.choices(self.words, self.weights, k=self.rng.randint(low, high)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_engine(db: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MUBIT_API_KEY": KEY}
    server = subprocess.Popen(
        [sys.executable, "-m", "al_integration.mubit_local", "serve", "--db", str(db), "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = Client(endpoint=f"http://127.0.0.1:{port}", api_key=KEY, transport="http")
    deadline = time.monotonic() + 30
    while True:
        try:
            client.auth.health()
            return server
        except Exception:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError("engine did not start") from None
            time.sleep(0.1)


def ingest(client: Client, sampler: TextSampler, count: int, start: int) -> float:
    """Batched ingest of `count` lessons; returns items/s."""
    began = time.perf_counter()
    for offset in range(0, count, BATCH):
        items = [
            {"item_id": f"l-{start + offset + i}", "content_type": "text/plain", "text": sampler.text(8, 24),
             "intent": "lesson", "lesson_type": "success", "metadata_json": "{}"}
            for i in range(min(BATCH, count - offset))
        ]
        client.advanced.ingest({"run_id": "bench", "agent_id": "bench", "parallel": False, "items": items,
                                "idempotency_key": f"batch-{start + offset}"})
    return count / (time.perf_counter() - began)


def ingest_single(client: Client, sampler: TextSampler, count: int) -> float:
    """One item per request, as the adapter's remember() sends them; returns items/s."""
    began = time.perf_counter()
    for i in range(count):
        client.advanced.ingest({"run_id": "bench-single", "agent_id": "bench", "items": [
            {"item_id": f"s-{i}", "text": sampler.text(8, 24), "intent": "trace"}]})
    return count / (time.perf_counter() - began)


def credit_some(client: Client, sampler: TextSampler, rounds: int) -> None:
    """Give the top hits of some queries a reward history, so ranking uses non-trivial credit."""
    for _ in range(rounds):
        evidence = client.recall(session_id="bench", query=sampler.text(4, 8), limit=3)["evidence"]
        ids = [item["reference_id"] for item in evidence]
        if ids:
            client.record_outcome(session_id="bench", reference_id="global", outcome="success",
                                  signal=sampler.rng.uniform(-1, 1), entry_ids=ids)


def recall_latency_ms(client: Client, sampler: TextSampler, queries: int, limit: int) -> list[float]:
    for _ in range(20):  # warm up
        client.recall(session_id="bench", query=sampler.text(4, 10), limit=limit)
    timings = []
    for _ in range(queries):
        query = sampler.text(4, 10)
        began = time.perf_counter()
        client.recall(session_id="bench", query=query, limit=limit, explain=True)
        timings.append((time.perf_counter() - began) * 1000)
    return timings


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc); None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main(
    sizes: Annotated[str, typer.Option(help="Comma-separated store sizes to measure at.")] = "1000,10000",
    queries: Annotated[int, typer.Option(min=10, help="Recall calls timed per size.")] = 300,
    limit: Annotated[int, typer.Option(min=1, help="Evidence items per recall.")] = 10,
) -> None:
    try:
        targets = sorted(int(size) for size in sizes.split(","))
    except ValueError:
        console.print(f"[red]error:[/] --sizes {sizes!r}: expected comma-separated integers")
        raise typer.Exit(2) from None
    sampler = TextSampler()
    rows, results = [], []
    with tempfile.TemporaryDirectory() as workdir:
        port = free_port()
        server = start_engine(Path(workdir) / "bench.sqlite3", port)
        try:
            client = Client(endpoint=f"http://127.0.0.1:{port}", api_key=KEY, transport="http")
            stored = 0
            for size in targets:
                console.log(f"ingesting up to {size} entries")
                rate = ingest(client, sampler, size - stored, stored)
                stored = size
                credit_some(client, sampler, 50)
                console.log(f"timing {queries} recalls at {size} entries")
                cpu_before = cpu_seconds(server.pid)
                timings = recall_latency_ms(client, sampler, queries, limit)
                cpu_after = cpu_seconds(server.pid)
                # Server CPU per recall barely moves with other load on the machine; latency does.
                cpu_ms = None if cpu_before is None else (cpu_after - cpu_before) * 1000 / (queries + 20)
                result = {"entries": size, "ingest_items_per_s": round(rate, 1),
                          "recall_p50_ms": round(statistics.median(timings), 2),
                          "recall_p95_ms": round(percentile(timings, 95), 2),
                          "server_cpu_ms_per_recall": None if cpu_ms is None else round(cpu_ms, 2)}
                results.append(result)
                rows.append(result)
            single = ingest_single(client, sampler, 200)
        finally:
            server.terminate()
            server.wait(timeout=15)
    table = Table(title=f"mubit-local via mubit-sdk over HTTP (limit={limit}, batch={BATCH})")
    for column in ("entries", "ingest items/s (batched)", "recall p50 ms", "recall p95 ms",
                   "server CPU ms/recall"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(str(row["entries"]), f"{row['ingest_items_per_s']:.0f}", f"{row['recall_p50_ms']:.2f}",
                      f"{row['recall_p95_ms']:.2f}", str(row["server_cpu_ms_per_recall"]))
    console.print(table)
    console.print(f"single-item ingest (one request per item): {single:.0f} items/s")
    verdict = "PASS" if results[-1]["recall_p95_ms"] <= 20 else "FAIL"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    console.print(f"target recall p95 <= 20 ms at {results[-1]['entries']} entries: {verdict} "
                  f"(1-min load average {load:.2f} on {os.cpu_count()} cores)")
    print(json.dumps({"results": results, "single_ingest_items_per_s": round(single, 1), "load_avg": load}))


if __name__ == "__main__":
    typer.run(main)
