"""The credit loop: seed lessons, config, and the hook on a real agl Trainer (client/server, 2 runners)."""

import al_integration  # noqa: F401, I001  (offline defaults before agentlightning is imported)

import json
import socket
import sqlite3
from pathlib import Path

import agentlightning as agl
import pytest

from al_integration.mubit_config import ConfigError, MubitConfig, load_mubit_config
from al_integration.mubit_credit import record_step_outcome, recalled_lessons
from al_integration.mubit_local import EmbeddedMubit
from al_integration.mubit_loop import start_credit_loop
from al_integration.mubit_seed import SeedLessonError, read_seed_lessons

# mubit-integration-base calls deprecated SDK aliases on every call (see docs/mubit.md).
pytestmark = pytest.mark.filterwarnings("ignore:client\\..*is moving to client\\.advanced:DeprecationWarning")
REPO = Path(__file__).resolve().parents[1]
SEED_FILE = REPO / "data" / "lessons.jsonl"
TASKS = [
    {"id": "t1", "category": "research_critique", "topic": "sample size", "feedback": "raw text"},
    {"id": "t2", "category": "bug_report", "topic": "replication package", "feedback": "raw text"},
    {"id": "t3", "category": "praise", "topic": "data portal", "feedback": "raw text"},
    {"id": "t4", "category": "confusion", "topic": "consent form", "feedback": "raw text"},
]


def config(**overrides) -> MubitConfig:
    return MubitConfig(seed_lessons=SEED_FILE, **overrides)


def entries(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT text, metadata_json FROM entries").fetchall()


def test_seed_lessons_load_once_and_never_carry_the_helpful_flag(tmp_path):
    with start_credit_loop(config(), tmp_path) as first:
        assert (first.report().seeds_added, first.report().seeds_deduplicated) == (24, 0)
        assert record_step_outcome("rollout-x", "reply", 0.5) is True
    assert record_step_outcome("rollout-x", "reply", 0.5) is False  # the loop is closed: no hook here
    with start_credit_loop(config(), tmp_path) as second:
        assert (second.report().seeds_added, second.report().seeds_deduplicated) == (0, 24)
    stored = entries(tmp_path / "mubit.sqlite3")
    assert len(stored) == 24
    assert {text for text, _ in stored} == {lesson.text for lesson in read_seed_lessons(SEED_FILE)}
    assert not any("helpful" in metadata for _, metadata in stored)


def test_bad_seed_file_and_config_give_one_line_errors(tmp_path):
    lessons = tmp_path / "lessons.jsonl"
    lessons.write_text('{"id": "l1", "text": "ok"}\n{"id": "l2", "text": ""}\n')
    with pytest.raises(SeedLessonError, match=r"lessons.jsonl:2: field 'text' must be a non-empty string"):
        read_seed_lessons(lessons)
    lessons.write_text('{"id": "l1", "text": "ok"}\n{"id": "l1", "text": "again"}\n')
    with pytest.raises(SeedLessonError, match=r"lessons.jsonl:2: field 'id': duplicate"):
        read_seed_lessons(lessons)

    assert load_mubit_config(REPO / "configs" / "mubit.yaml").recall_limit == 3
    bad = tmp_path / "mubit.yaml"
    bad.write_text("recall_limit: lots\n")
    with pytest.raises(ConfigError, match=r"mubit.yaml: field 'recall_limit'"):
        load_mubit_config(bad)
    bad.write_text("ranking:\n  lexcal: 1\n")
    with pytest.raises(ConfigError, match=r"field 'ranking.lexcal'"):
        load_mubit_config(bad)


class EnqueueAndWait(agl.Algorithm):
    """Publish a (never called) LLM resource, enqueue every task once, wait for all of them."""

    async def run(self, train_dataset=None, val_dataset=None):
        store = self.get_store()
        llm = agl.LLM(endpoint="http://127.0.0.1:9/v1", model="stub")
        resources = await store.add_resources({"llm": llm})
        ids = []
        for task in train_dataset:
            rollout = await store.enqueue_rollout(
                input=task, mode="train", resources_id=resources.resources_id,
                config=agl.RolloutConfig(timeout_seconds=60),
            )
            ids.append(rollout.rollout_id)
        finished = await store.wait_for_rollouts(rollout_ids=ids, timeout=120)
        self.statuses = sorted(rollout.status for rollout in finished)


def make_agent(log_dir: Path, show: int, return_reward: bool = False):
    """A stand-in for the feedback agent: takes `show` recalled lessons, sends a step outcome, rewards."""

    @agl.rollout
    def agent(task, llm, rollout):
        lessons = recalled_lessons(rollout.rollout_id, limit=show)
        record_step_outcome(rollout.rollout_id, "governance", 1.0, metadata={"decision": "answer"})
        shown = [lesson.entry_id for lesson in lessons]
        (log_dir / f"{rollout.rollout_id}.json").write_text(json.dumps(shown))
        reward = 0.5 if lessons else 0.25
        if return_reward:  # agl stores it after the spans the hook is given: the hook reads the store
            return reward
        agl.emit_reward(reward)

    return agent


def train(hook, tmp_path: Path, agent) -> EnqueueAndWait:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    algorithm = EnqueueAndWait()
    trainer = agl.Trainer(
        algorithm=algorithm,
        n_runners=2,
        store=agl.InMemoryLightningStore(),
        strategy=agl.ClientServerExecutionStrategy(n_runners=2, server_host="127.0.0.1", server_port=port),
        tracer=agl.OtelTracer(),
        hooks=[hook],
    )
    trainer.fit(agent, train_dataset=TASKS)
    return algorithm


def test_hook_credits_exactly_the_lessons_the_agent_was_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shown_dir = tmp_path / "shown"
    shown_dir.mkdir()
    with start_credit_loop(config(recall_limit=3), tmp_path / "run") as loop:
        algorithm = train(loop.hook, tmp_path, make_agent(shown_dir, show=2))
        report = loop.report()
    assert algorithm.statuses == ["succeeded"] * len(TASKS)
    assert report.outage_total == 0

    shown = sorted(sorted(json.loads(path.read_text())) for path in shown_dir.glob("*.json"))
    assert len(shown) == len(TASKS) and all(len(ids) == 2 for ids in shown)
    with sqlite3.connect(tmp_path / "run" / "mubit.sqlite3") as conn:
        rows = conn.execute("SELECT credited_json FROM outcomes").fetchall()
        credited = sorted(sorted(json.loads(row[0])) for row in rows)
        signals = [row[0] for row in conn.execute("SELECT signal FROM outcomes")]
        steps = conn.execute("SELECT step_name, metadata_json FROM step_outcomes").fetchall()
        keys = conn.execute("SELECT key FROM idempotency WHERE scope = 'outcome'").fetchall()
    assert credited == shown
    assert signals == [0.5] * len(TASKS)
    assert len(keys) == len(TASKS) and all(key.startswith("agl-outcome:") for (key,) in keys)
    assert [name for name, _ in steps] == ["governance"] * len(TASKS)
    assert all(json.loads(metadata)["decision"] == "answer" for _, metadata in steps)


def test_rollouts_succeed_and_outages_are_counted_while_mubit_is_down(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MUBIT_RETRY_BASE_MS", "10")  # the SDK retries reads; keep the test quick
    shown_dir = tmp_path / "shown"
    shown_dir.mkdir()
    with start_credit_loop(config(), tmp_path / "run") as loop:
        loop.engine.stop()  # Mubit goes away after the seed lessons were loaded
        algorithm = train(loop.hook, tmp_path, make_agent(shown_dir, show=3, return_reward=True))
        report = loop.report()
    assert algorithm.statuses == ["succeeded"] * len(TASKS)
    assert report.outages == {"recall": 4, "record_outcome": 4, "step_outcome": 4}
    assert "12 outage(s)" in report.summary()
    assert all(json.loads(path.read_text()) == [] for path in shown_dir.glob("*.json"))


def test_named_endpoint_is_used_only_when_mubit_api_key_is_set(tmp_path, monkeypatch):
    with EmbeddedMubit(tmp_path / "remote.sqlite3", api_key="remote-key") as remote:  # stands in for hosted
        monkeypatch.setenv("MUBIT_API_KEY", "remote-key")
        with start_credit_loop(config(endpoint=remote.endpoint), tmp_path / "run") as loop:
            assert loop.engine is None and loop.report().backend == remote.endpoint
            assert loop.report().seeds_added == 24
        monkeypatch.delenv("MUBIT_API_KEY")
        with start_credit_loop(config(endpoint=remote.endpoint), tmp_path / "run2") as loop:
            assert loop.engine is not None and loop.report().backend == "embedded"
    assert len(entries(tmp_path / "remote.sqlite3")) == 24
