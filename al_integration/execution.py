"""The client/server execution of a training run, made safe against lost processes and other local users.

`SupervisedStrategy` is agl 0.3.0's `ClientServerExecutionStrategy` with:

* a store server only the run's own runners can use: its API is served under `/<token>/...` (`TokenGuard`),
  a per-run random token the forked runners receive in memory (runners on other hosts: `AGL_STORE_TOKEN`);
  any other local process gets 403, so nothing outside the run can enqueue a rollout or add a reward;
* rollouts left unfinished in the store by a run that died are cancelled before any runner starts, so a
  resumed run never executes them against the old run's dead policy endpoint;
* runners that exit when the process that forked them dies (Linux `PR_SET_PDEATHSIG`: a SIGKILL of the
  trainer leaves no orphans), and that stop once the store server has not answered for `server_gone_after_s`
  (a runner host whose training host went away; ten times longer before the server first answered);
* a runner that dies mid-run noticed within a second: its unfinished attempt is marked `unresponsive`, so
  agl retries the rollout at once (with `retry_condition` including "unresponsive") instead of after the
  rollout's `timeout_seconds`; if every runner is lost the run is interrupted as by Ctrl-C (checkpoint,
  outputs, exit 130) rather than waiting for rollouts nobody will run;
* runner exit codes reported as warnings, never raised after the algorithm finished, so a run that
  completed its steps still writes its outputs.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any

import agentlightning as agl
import aiohttp
from agentlightning.store.base import LightningStore
from agentlightning.store.client_server import LightningStoreClient, LightningStoreServer
from agentlightning.types import AttemptedRollout

from al_integration import STORE_TOKEN_ENV
from al_integration.store.guard import TokenGuard, token_root

logger = logging.getLogger(__name__)

UNFINISHED = ("queuing", "preparing", "running", "requeuing")
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have Linux SIGKILL this process when its parent dies; exit now if the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        logger.warning("prctl(PR_SET_PDEATHSIG) failed (errno %d): this runner may outlive its parent",
                       ctypes.get_errno())
    if os.getppid() != parent_pid:  # the parent died between fork and prctl
        os._exit(1)


async def cancel_unfinished_rollouts(store: LightningStore) -> int:
    """Cancel every rollout still queued or running: at the start of a run they belong to a run that died."""
    stale = await store.query_rollouts(status_in=list(UNFINISHED))
    for rollout in stale.items:
        await store.update_rollout(rollout.rollout_id, status="cancelled")
    return len(stale.items)


async def release_attempts_of(store: LightningStore, worker_id: str) -> int:
    """Mark the dead runner's unfinished attempts `unresponsive`: agl requeues their rollouts (retry policy)."""
    running = await store.query_rollouts(status_in=["preparing", "running"])
    released = 0
    for rollout in running.items:
        attempt = getattr(rollout, "attempt", None)
        if attempt is not None and attempt.worker_id == worker_id and attempt.status in ("preparing", "running"):
            await store.update_attempt(rollout.rollout_id, attempt.attempt_id, status="unresponsive")
            released += 1
    return released


class _StopWhenEither:
    """The runner's stop event: the run's shared one, or this runner's own (its store server is gone)."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared
        self.own = threading.Event()

    def set(self) -> None:
        self.own.set()

    def clear(self) -> None:
        self.own.clear()

    def is_set(self) -> bool:
        return self.own.is_set() or self.shared.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True


class RunnerStoreClient(LightningStoreClient):
    """agl's HTTP store client, for a runner: it calls `on_gone(reason)` (and the runner stops polling) when
    the server has refused it (403: not this run's token) or has not answered for `gone_after_s`. A server
    never reached yet gets `startup_factor` times longer: a runner host may be started before training is up."""

    def __init__(self, server_address: str, *, shown_address: str, gone_after_s: float,
                 on_gone: Callable[[str], None], startup_factor: float = 10.0, **kwargs: Any) -> None:
        super().__init__(server_address, **kwargs)
        self.shown_address = shown_address  # without the token, for messages
        self.gone_after_s = gone_after_s
        self.on_gone = on_gone
        self._patience = gone_after_s * startup_factor  # until the first answer
        self._last_answer = time.monotonic()

    async def _dequeue_batch(self, *, limit: int, worker_id: str | None) -> list[AttemptedRollout]:
        """agl's dequeue (a failure reads as an empty queue), plus the give-up rule."""
        if limit <= 0:
            return []
        session = await self._get_session()
        payload: dict[str, Any] = {"limit": limit, **({"worker_id": worker_id} if worker_id is not None else {})}
        try:
            async with session.post(f"{self.server_address}/queues/rollouts/dequeue", json=payload) as resp:
                if resp.status == 403:
                    self.on_gone(f"the store server {self.shown_address} refused this runner (403): give it the "
                                 f"training run's token in {STORE_TOKEN_ENV}")
                    return []
                resp.raise_for_status()
                data = await resp.json()
        except Exception as exc:  # noqa: BLE001 - agl's own dequeue swallows every failure too
            silent = time.monotonic() - self._last_answer
            if silent > self._patience:
                self.on_gone(f"the store server {self.shown_address} has not answered for {silent:.0f} s "
                             f"({type(exc).__name__})")
            return []
        self._last_answer = time.monotonic()
        self._patience = self.gone_after_s
        return [AttemptedRollout.model_validate(item) for item in data]


class RunnerMonitor:
    """A thread of the algorithm process that notices a runner process ending while the run goes on."""

    def __init__(self, processes: list[multiprocessing.Process], store: LightningStore,
                 loop: asyncio.AbstractEventLoop, poll_s: float = 0.5) -> None:
        self.processes, self.store, self.loop, self.poll_s = processes, store, loop, poll_s
        self.lost: list[tuple[int, int | None]] = []  # (worker id, exit code) of runners that died mid-run
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="runner-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Before the runners are asked to exit: from now on their exits are expected."""
        self._stopped.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        alive = dict(enumerate(self.processes))
        stopped_on_purpose = 0
        while alive and not self._stopped.is_set():
            ready = multiprocessing.connection.wait([p.sentinel for p in alive.values()], timeout=self.poll_s)
            for worker_id, process in list(alive.items()):
                if process.sentinel not in ready or self._stopped.is_set():
                    continue
                del alive[worker_id]
                if process.exitcode == 0:  # a cooperative stop or Ctrl-C: nothing was lost
                    stopped_on_purpose += 1
                    continue
                self.lost.append((worker_id, process.exitcode))
                released = self._release(f"Worker-{worker_id}")
                logger.warning("runner %d (pid %s) died with exit code %s; %d unfinished rollout(s) handed back to "
                               "the queue now; %d of %d runners left", worker_id, process.pid, process.exitcode,
                               released, len(alive), len(self.processes))
        if not alive and not stopped_on_purpose and not self._stopped.is_set():
            logger.error("every runner died: stopping the run as if interrupted (a checkpoint is saved; continue "
                         "with --resume)")
            os.kill(os.getpid(), signal.SIGINT)

    def _release(self, worker_id: str) -> int:
        future = asyncio.run_coroutine_threadsafe(release_attempts_of(self.store, worker_id), self.loop)
        try:
            return future.result(timeout=30)
        except Exception as exc:  # noqa: BLE001 - the rollout's own timeout still applies
            logger.warning("could not hand back the rollouts of %s (%s); they retry after their timeout", worker_id,
                           type(exc).__name__)
            return 0


async def wait_until_served(address: str, timeout_s: float) -> None:
    """Poll the store server's /health quietly until it answers, for at most `timeout_s`. agl forks the runners
    while the server is still starting: without this wait each runner's first heartbeat logs a traceback."""
    deadline = time.monotonic() + timeout_s
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(f"{address}/health") as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)


class SupervisedStrategy(agl.ClientServerExecutionStrategy):
    """agl's client/server strategy with a guarded store server and supervised runners (see module doc)."""

    def __init__(self, *, store_token: str | None = None, server_gone_after_s: float = 60.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        given = store_token or os.environ.get(STORE_TOKEN_ENV)
        self.store_token = given or secrets.token_urlsafe(24)
        if not given and self.role != "runner" and self.server_host not in ("127.0.0.1", "localhost", "::1"):
            logger.warning("the store server listens on %s with a random token: runners on other hosts will be "
                           "refused; export the same %s on every host", self.server_host, STORE_TOKEN_ENV)
        self.server_gone_after_s = server_gone_after_s
        self.monitor: RunnerMonitor | None = None
        self._runner_processes: list[multiprocessing.Process] = []
        self._spawner_pid = os.getpid()

    @property
    def runner_pids(self) -> list[int]:
        return [p.pid for p in self._runner_processes if p.pid is not None]

    async def _execute_algorithm(self, algorithm: Any, store: LightningStore, stop_evt: Any) -> None:
        # Before the server starts, so no runner can take one of them first.
        stale = await cancel_unfinished_rollouts(store)
        if stale:
            logger.info("cancelled %d rollout(s) left unfinished in the store by an earlier run", stale)
        server = LightningStoreServer(store, host=self.server_host, port=self.server_port)
        server.app.add_middleware(TokenGuard, token=self.store_token)
        await server.start()
        if self._runner_processes:
            self.monitor = RunnerMonitor(self._runner_processes, store, asyncio.get_running_loop())
        try:
            await algorithm(server, stop_evt)
        except BaseException:
            stop_evt.set()
            raise
        finally:
            if self.monitor is not None:
                self.monitor.stop()
            await server.stop()

    async def _execute_runner(self, runner: Any, worker_id: int, store: LightningStore, stop_evt: Any) -> None:
        if os.getpid() != self._spawner_pid:  # a forked runner process
            die_with_parent(self._spawner_pid)
        stop = _StopWhenEither(stop_evt)

        def gone(reason: str) -> None:
            if not stop.own.is_set():
                logger.error("runner %d stops: %s", worker_id, reason)
            stop.set()

        shown = f"http://{self.server_host}:{self.server_port}"
        client = RunnerStoreClient(token_root(self.server_host, self.server_port, self.store_token),
                                   shown_address=shown, gone_after_s=self.server_gone_after_s, on_gone=gone)
        try:
            await wait_until_served(client.server_address, self.server_gone_after_s)
            await runner(client, worker_id, stop)
        except BaseException:
            stop_evt.set()
            raise
        finally:
            await client.close()

    def _spawn_runners(self, runner: Any, store: LightningStore, stop_evt: Any, *,
                       ctx: BaseContext) -> list[multiprocessing.Process]:
        self._runner_processes = super()._spawn_runners(runner, store, stop_evt, ctx=ctx)
        return self._runner_processes

    def _check_process_exitcodes(self, processes: Any) -> None:
        for process in processes:
            if process.exitcode not in (*self.allowed_exit_codes, None):
                logger.warning("%s (pid %s) ended with exit code %s", process.name, process.pid, process.exitcode)
