"""`SupervisedStrategy` on a real agl Trainer (client/server, runner processes, the SQLite store), with a
stand-in agent that takes a few seconds per rollout: a killed runner's rollout is retried at once, a killed
trainer leaves no runner behind, a runner gives up on a server that is gone, and no other local process can
use the run's store server."""

import al_integration  # noqa: F401, I001  (offline defaults before agentlightning is imported)

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import agentlightning as agl
import psutil
import requests

from al_integration.execution import RunnerStoreClient, SupervisedStrategy
from al_integration.store import SqliteLightningStore

REPO = Path(__file__).resolve().parent.parent
RETRY = agl.RolloutConfig(timeout_seconds=300, max_attempts=2, retry_condition=["timeout", "unresponsive"])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@agl.rollout
def slow_agent(task, llm, rollout):
    """Three seconds of "work" per rollout, then a reward."""
    time.sleep(3)
    agl.emit_reward(0.5)


class KillARunner(agl.Algorithm):
    """Enqueue 4 rollouts; once one runs, SIGKILL its runner; also try the store from outside the run."""

    def __init__(self, strategy: SupervisedStrategy, port: int):
        super().__init__()
        self.strategy, self.port = strategy, port

    async def run(self, train_dataset=None, val_dataset=None):
        store = self.get_store()
        resources = await store.add_resources({"llm": agl.LLM(endpoint="http://127.0.0.1:9/v1", model="stub")})
        ids = [(await store.enqueue_rollout(input={"i": i}, mode="train", resources_id=resources.resources_id,
                                            config=RETRY)).rollout_id for i in range(4)]
        self.outsider = await asyncio.to_thread(
            requests.post, f"http://127.0.0.1:{self.port}/v1/agl/queues/rollouts/enqueue", timeout=10,
            json={"rollouts": [{"input": {"i": "from curl"}}]})
        self.wrong_token = await self._dequeue_with_a_wrong_token()
        victim = await self._a_running_rollout(store)
        worker = int(victim.attempt.worker_id.rsplit("-", 1)[1])
        os.kill(self.strategy.runner_pids[worker], signal.SIGKILL)
        killed_at = time.monotonic()
        self.victim = victim.rollout_id
        await store.wait_for_rollouts(rollout_ids=[victim.rollout_id], timeout=120)
        self.retry_seconds = time.monotonic() - killed_at
        finished = await store.wait_for_rollouts(rollout_ids=ids, timeout=120)
        self.statuses = sorted(r.status for r in finished)
        self.attempts = [a.status for a in (await store.query_attempts(victim.rollout_id)).items]
        self.total = (await store.query_rollouts()).total

    async def _a_running_rollout(self, store):
        for _ in range(300):
            running = (await store.query_rollouts(status_in=["preparing", "running"])).items
            if running and running[0].attempt.worker_id:
                return running[0]
            await asyncio.sleep(0.1)
        raise AssertionError("no rollout started running")

    async def _dequeue_with_a_wrong_token(self) -> list[str]:
        reasons: list[str] = []
        client = RunnerStoreClient(f"http://127.0.0.1:{self.port}/not-the-token", shown_address="here",
                                   gone_after_s=60, on_gone=reasons.append)
        try:
            assert await client.dequeue_rollout(worker_id="outsider") is None
        finally:
            await client.close()
        return reasons


def test_a_killed_runner_is_retried_at_once_and_outsiders_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    port = free_port()
    strategy = SupervisedStrategy(role="both", n_runners=2, server_host="127.0.0.1", server_port=port)
    algorithm = KillARunner(strategy, port)
    trainer = agl.Trainer(algorithm=algorithm, n_runners=2, store=SqliteLightningStore(tmp_path / "store.db"),
                          strategy=strategy, tracer=agl.OtelTracer(),
                          runner={"type": "agentlightning.LitAgentRunner", "poll_interval": 0.2})
    trainer.fit(slow_agent, train_dataset=[{"i": 0}])  # returns: the dead runner's exit code is no error

    assert algorithm.statuses == ["succeeded"] * 4
    assert algorithm.attempts == ["unresponsive", "succeeded"]  # handed back, then run by the other runner
    assert algorithm.retry_seconds < 30  # a retry within a rollout's time, not after the 300 s timeout
    assert algorithm.outsider.status_code == 403 and "runners" in algorithm.outsider.json()["detail"]
    assert algorithm.total == 4  # the outsider's rollout never entered the queue
    assert len(algorithm.wrong_token) == 1 and "refused this runner (403)" in algorithm.wrong_token[0]


TRAINER_JOB = textwrap.dedent("""
    import al_integration, asyncio, json, sys, time
    import agentlightning as agl
    from al_integration.execution import SupervisedStrategy
    from al_integration.store import SqliteLightningStore

    @agl.rollout
    def stuck_agent(task, llm, rollout):
        time.sleep(600)

    class Wait(agl.Algorithm):
        async def run(self, train_dataset=None, val_dataset=None):
            store = self.get_store()
            resources = await store.add_resources({"llm": agl.LLM(endpoint="http://127.0.0.1:9/v1", model="x")})
            for i in range(2):
                await store.enqueue_rollout(input={"i": i}, resources_id=resources.resources_id)
            while len((await store.query_rollouts(status_in=["preparing", "running"])).items) < 2:
                await asyncio.sleep(0.1)
            print(json.dumps(strategy.runner_pids), flush=True)
            await asyncio.sleep(600)

    strategy = SupervisedStrategy(role="both", n_runners=2, server_host="127.0.0.1", server_port=int(sys.argv[1]))
    agl.Trainer(algorithm=Wait(), n_runners=2, store=SqliteLightningStore(sys.argv[2]), strategy=strategy,
                tracer=agl.OtelTracer(), runner={"type": "agentlightning.LitAgentRunner", "poll_interval": 0.2}
                ).fit(stuck_agent, train_dataset=[{"i": 0}])
""")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # dead, waiting for init to reap it
    except psutil.NoSuchProcess:
        return True


def test_runners_die_with_a_sigkilled_trainer(tmp_path):
    job = subprocess.Popen([sys.executable, "-c", TRAINER_JOB, str(free_port()), str(tmp_path / "store.db")],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        runners = json.loads(job.stdout.readline())
        assert len(runners) == 2 and not any(gone(pid) for pid in runners)
        job.kill()  # SIGKILL: no cleanup code of the trainer runs
        job.wait(timeout=30)
        deadline = time.monotonic() + 10
        while not all(gone(pid) for pid in runners) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(gone(pid) for pid in runners), [psutil.Process(p).cmdline() for p in runners if not gone(p)]
    finally:
        job.kill()
        for pid in runners if "runners" in locals() else []:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_runner_gives_up_on_a_store_server_that_is_gone():
    reasons: list[str] = []

    async def poll():
        client = RunnerStoreClient(f"http://127.0.0.1:{free_port()}/token", shown_address="http://the-host:1",
                                   gone_after_s=0.5, startup_factor=2, on_gone=reasons.append)
        try:
            started = time.monotonic()
            while not reasons and time.monotonic() - started < 30:
                assert await client.dequeue_rollout(worker_id="Worker-0") is None
                await asyncio.sleep(0.2)
            return time.monotonic() - started
        finally:
            await client.close()

    waited = asyncio.run(poll())
    assert 1.0 <= waited < 10
    assert reasons and "http://the-host:1 has not answered for" in reasons[0] and "token" not in reasons[0]
