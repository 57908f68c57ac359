"""A real agl training job on a SqliteLightningStore, shared by the store tests.

`agl.Trainer` with the client/server strategy and 4 runner processes: the store lives in this
(algorithm) process behind agl's LightningStoreServer; the runners reach it over HTTP. The agent emits
MESSAGES_PER_TASK messages and one reward per task. Run as a script it is the job the SIGKILL test kills:
`python tests/store_trainer_job.py STORE --tasks 40 --delay 0.15 --port 4800`.
"""

import al_integration  # noqa: F401  (offline defaults before agl)

# isort: split

import argparse
import asyncio
import socket
import time

import agentlightning as agl
from agentlightning.types import RolloutConfig

from al_integration.store import SqliteLightningStore

MESSAGES_PER_TASK = 3
SPANS_PER_TASK = MESSAGES_PER_TASK + 2  # + the reward annotation + AgentOps' session span
UNFINISHED = ["queuing", "requeuing", "preparing", "running"]


def make_tasks(n: int, delay_s: float = 0.0) -> list[dict]:
    return [{"task_id": i, "reward": round((i % 7) / 4 - 0.75, 2), "delay_s": delay_s} for i in range(n)]


def message_text(task_id: int, k: int) -> str:
    return f"task {task_id} message {k}"


@agl.rollout
def feedback_agent(task: dict, prompt_template: agl.PromptTemplate) -> None:
    for k in range(MESSAGES_PER_TASK):
        agl.emit_message(message_text(task["task_id"], k))
        time.sleep(task["delay_s"])
    agl.emit_reward(task["reward"])


class EnqueueAndWait(agl.Algorithm):
    """Enqueue every task once and wait for all; with no tasks, wait for the store's unfinished rollouts."""

    def __init__(self, rollout_timeout_s: float, wait_timeout_s: float):
        super().__init__()
        self.config = RolloutConfig(
            timeout_seconds=rollout_timeout_s, max_attempts=3, retry_condition=["timeout", "unresponsive"]
        )
        self.wait_timeout_s = wait_timeout_s

    async def run(self, train_dataset=None, val_dataset=None) -> None:
        store = self.get_store()
        if await store.get_latest_resources() is None:
            await store.add_resources(
                {"prompt_template": agl.PromptTemplate(template="{feedback}", engine="f-string")}
            )
        tasks = [train_dataset[i] for i in range(len(train_dataset or []))]
        if tasks:
            rollouts = [await store.enqueue_rollout(input=t, mode="train", config=self.config) for t in tasks]
            ids = [r.rollout_id for r in rollouts]
        else:
            ids = [r.rollout_id for r in await store.query_rollouts(status_in=UNFINISHED)]
        deadline = time.monotonic() + self.wait_timeout_s
        finished = []
        while len(finished) < len(ids) and time.monotonic() < deadline:
            finished = await store.wait_for_rollouts(rollout_ids=ids, timeout=1.0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_training(
    store_path,
    tasks: list[dict],
    *,
    port: int | None = None,
    n_runners: int = 4,
    rollout_timeout_s: float = 60.0,
    wait_timeout_s: float = 90.0,
) -> None:
    strategy = agl.ClientServerExecutionStrategy(
        n_runners=n_runners, server_host="127.0.0.1", server_port=port or free_port()
    )
    trainer = agl.Trainer(
        algorithm=EnqueueAndWait(rollout_timeout_s, wait_timeout_s),
        store=SqliteLightningStore(store_path),
        strategy=strategy,
        n_runners=n_runners,
        # agl's runners poll an empty queue every 5 s by default; poll faster so tests finish sooner.
        runner={"type": "agentlightning.LitAgentRunner", "poll_interval": 0.3},
    )
    trainer.fit(feedback_agent, train_dataset=tasks)
    asyncio.run(trainer.store.close())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--rollout-timeout", type=float, default=60.0)
    args = parser.parse_args()
    run_training(
        args.store, make_tasks(args.tasks, args.delay), port=args.port, rollout_timeout_s=args.rollout_timeout
    )
