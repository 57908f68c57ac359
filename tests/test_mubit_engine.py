"""The embedded Mubit engine, driven by the real mubit-sdk client and the real Agent Lightning adapter."""

import al_integration  # noqa: F401, I001  (offline defaults before agentlightning is imported)

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from mubit import AuthError, Client, UnsupportedFeatureError
from mubit_agent_lightning import MubitControlClient, MubitRewardEmitter

from al_integration.mubit_client import make_control_client
from al_integration.mubit_local import EmbeddedMubit

# mubit-integration-base calls deprecated SDK aliases on every call (see docs/mubit.md).
pytestmark = pytest.mark.filterwarnings("ignore:client\\..*is moving to client\\.advanced:DeprecationWarning")
KEY = "test-key"
QUERY = "reviewer questions the sample size"
LESSON_A = "When a reviewer questions the sample size, give the number and what a larger sample would change."
LESSON_B = (
    "Sample size questions: thank the reviewer for the sample size question and say the sample size is fine."
)
FILLER = [
    "For a bug report, restate the reported behaviour and say you are reproducing it.",
    "Thank people for praise briefly and sincerely.",
    "Keep replies between about 60 and 120 words.",
    "Cite the source of any statistic you mention.",
    "When someone is confused, explain the one step they asked about in plain words.",
    "For a feature request, say whether it fits the project's scope.",
]


@pytest.fixture
def engine(tmp_path):
    with EmbeddedMubit(tmp_path / "mubit.sqlite3", api_key=KEY) as running:
        yield running


def sdk(engine, key=KEY) -> Client:
    return Client(endpoint=engine.endpoint, api_key=key, transport="http")


def remember_lesson(client: Client, text: str, key: str, run: str = "seed-run") -> str:
    job = client.remember(session_id=run, content=text, intent="lesson", lesson_type="success",
                          idempotency_key=key)
    return job["traces"][0]["writes"][0]["record_id"]


def ranking(client: Client, run: str = "any-run") -> list[dict]:
    answer = client.recall(session_id=run, query=QUERY, limit=4, explain=True, entry_types=["lesson"])
    return answer["evidence"]


def test_credit_flows_back_to_recalled_lessons_and_survives_restart(tmp_path):
    db = tmp_path / "mubit.sqlite3"
    with EmbeddedMubit(db, api_key=KEY) as engine:
        client = sdk(engine)
        id_a = remember_lesson(client, LESSON_A, "a")
        id_b = remember_lesson(client, LESSON_B, "b")
        for i, text in enumerate(FILLER):
            remember_lesson(client, text, f"filler-{i}")

        emitter = MubitRewardEmitter(endpoint=engine.endpoint, api_key=KEY, session_id="rollouts",
                                     mirror_to_agl=False)
        recalled = emitter.recall(QUERY, limit=2)
        refs = [item["reference_id"] for item in recalled["evidence"]]
        assert all(refs) and set(refs) == {id_a, id_b}
        assert refs == [id_b, id_a], "before any credit, the lexically stronger lesson B leads"

        for _ in range(3):
            emitter.emit_reward(1.0, entry_ids=[id_a])
            emitter.emit_reward(-1.0, entry_ids=[id_b])

        after = ranking(client)
        order = [item["reference_id"] for item in after]
        assert order.index(id_a) < order.index(id_b)
        parts = {item["reference_id"]: item["explain_info"] for item in after}
        assert parts[id_b]["lexical_score"] > parts[id_a]["lexical_score"]  # still more relevant...
        assert parts[id_a]["credit_confidence"] > 0.75 > 0.25 > parts[id_b]["credit_confidence"]  # but worse
        assert (parts[id_a]["success_count"], parts[id_a]["failure_count"]) == (3, 0)
        assert (parts[id_b]["success_count"], parts[id_b]["failure_count"]) == (0, 3)
        assert parts[id_a]["signal_sum"] == pytest.approx(3.0)
        assert parts[id_b]["signal_sum"] == pytest.approx(-3.0)
        assert set(parts[id_a]["fusion_weights_used"]) == {"lexical", "credit", "verified_boost"}

    with EmbeddedMubit(db, api_key=KEY) as restarted:
        again = ranking(sdk(restarted))
    def scored(items):
        return [(item["reference_id"], item["score"]) for item in items]

    assert scored(again) == scored(after)


def test_wrong_or_missing_key_gets_401_json(engine):
    with pytest.raises(AuthError):
        sdk(engine, key="wrong").recall(session_id="r", query=QUERY)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {KEY}"}):
        answer = requests.post(f"{engine.endpoint}/v2/control/query", json={"run_id": "r"}, headers=headers)
        assert answer.status_code == 401
        assert answer.headers["content-type"].startswith("application/json")
        assert "unauthorized" in answer.json()["error"]
    assert sdk(engine).auth.health()["status"] == "ok"


def test_emit_step_outcome_works_through_the_workaround(engine):
    plain = MubitRewardEmitter(endpoint=engine.endpoint, api_key=KEY, session_id="s", mirror_to_agl=False)
    with pytest.raises(TypeError):  # the mubit-integration-base 0.6.0 bug this product works around
        plain.emit_step_outcome("step-1", 0.5)

    fixed = MubitRewardEmitter(session_id="s", mirror_to_agl=False,
                               mubit_client=make_control_client(engine.endpoint, KEY))
    answer = fixed.emit_step_outcome("step-1", 0.5, step_name="governance", entry_ids=["mem-x"],
                                     rationale="allowed")
    assert answer["accepted"] is True and answer["step_outcome_id"]


def test_same_outcome_twice_with_one_idempotency_key_counts_once(engine):
    client = sdk(engine)
    entry = remember_lesson(client, LESSON_A, "a")
    first = client.record_outcome(session_id="r", reference_id=entry, outcome="success", signal=1.0,
                                  idempotency_key="outcome-1")
    second = client.record_outcome(session_id="r", reference_id=entry, outcome="success", signal=1.0,
                                   idempotency_key="outcome-1")
    assert first["deduplicated"] is False and second["deduplicated"] is True
    assert first["credited_entry_ids"] == [entry]
    info = ranking(client)[0]["explain_info"]
    assert (info["outcome_count"], info["success_count"]) == (1, 1)


def test_ingest_deduplicates_on_idempotency_key_not_item_id(engine):
    control = MubitControlClient(endpoint=engine.endpoint, api_key=KEY)
    first = control.remember(session_id="r", text="called tool", intent="trace", idempotency_key="evt-1")
    again = control.remember(session_id="r", text="called tool", intent="trace", idempotency_key="evt-1")
    other = control.remember(session_id="r", text="called tool 2", intent="trace")  # same item_id "al-memory"
    assert (first["deduplicated"], again["deduplicated"], other["deduplicated"]) == (False, True, False)
    assert again["job_id"] == first["job_id"]
    job = sdk(engine).advanced.get_ingest_job({"run_id": "r", "job_id": first["job_id"]})
    assert job["done"] is True and job["traces"][0]["selected_types"] == ["trace"]
    health = sdk(engine).memory_health(session_id="r")
    assert health["entry_counts"] == {"trace": 2}


def test_lessons_cross_runs_but_traces_stay_in_their_run(engine):
    client = sdk(engine)
    lesson = remember_lesson(client, "Cite the source of any statistic you mention.", "l", run="run-1")
    client.remember(session_id="run-1", content="run one cited a statistic source", intent="trace",
                    idempotency_key="t")
    from_other = client.recall(session_id="run-2", query="statistic source")["evidence"]
    from_own = client.recall(session_id="run-1", query="statistic source")["evidence"]
    assert [e["reference_id"] for e in from_other] == [lesson]
    assert {e["entry_type"] for e in from_own} == {"lesson", "trace"}
    assert client.dereference(session_id="run-2", reference_id=lesson)["found"] is True
    trace_id = next(e["reference_id"] for e in from_own if e["entry_type"] == "trace")
    assert client.dereference(session_id="run-2", reference_id=trace_id)["found"] is False
    context = client.get_context(session_id="run-2", query="statistic")
    assert "Cite the source" in context["context_block"]
    assert [item["id"] for item in client.advanced.lessons({"run_id": "run-2"})["lessons"]] == [lesson]

    client.forget(session_id="run-1")  # delete_run
    assert client.recall(session_id="run-1", query="statistic source")["evidence"] == []
    lesson2 = remember_lesson(client, "Another lesson about statistics.", "l2")
    assert client.forget(lesson_id=lesson2)["success"] is True
    assert client.forget(lesson_id=lesson2)["success"] is False


def test_outcome_skips_unknown_ids_and_global_reference_credits_entry_ids(engine):
    client = sdk(engine)
    entry = remember_lesson(client, LESSON_A, "a")
    answer = client.record_outcome(session_id="r", reference_id="global", outcome="failure", signal=-0.5,
                                   entry_ids=[entry, "mem-unknown"], verified_in_production=True)
    assert answer["credited_entry_ids"] == [entry] and answer["reinforcement_count"] == 1
    info = ranking(client)[0]["explain_info"]
    assert info["verified_boost"] > 0 and info["failure_count"] == 1


def test_unimplemented_route_and_bad_request_answer_json_errors(engine):
    headers = {"Authorization": f"Bearer {KEY}"}
    answer = requests.post(f"{engine.endpoint}/v2/control/handoff", json={}, headers=headers)
    assert answer.status_code == 501 and "not implemented" in answer.json()["error"]
    with pytest.raises(UnsupportedFeatureError):
        sdk(engine).reflect(session_id="r")
    bad = requests.post(f"{engine.endpoint}/v2/control/outcome", json={"run_id": "r"}, headers=headers)
    assert bad.status_code == 400 and "outcome" in bad.json()["error"]
    garbage = requests.post(f"{engine.endpoint}/v2/control/query", data="{not json", headers=headers)
    assert garbage.status_code == 400 and garbage.headers["content-type"].startswith("application/json")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(*args: str, **env_vars: str) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key not in ("MUBIT_API_KEY", "MUBIT_LOCAL_API_KEY")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1]), **env_vars)
    return subprocess.Popen([sys.executable, "-m", "al_integration.mubit_local", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_healthy(client: Client, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            assert client.auth.health()["status"] == "ok"
            return
        except Exception:
            if time.monotonic() > deadline or server.poll() is not None:
                raise
            time.sleep(0.1)


def test_serve_cli_answers_over_http_and_stops_cleanly(tmp_path):
    port = _free_port()
    config = Path(__file__).resolve().parents[1] / "configs" / "mubit.yaml"
    server = _serve("--db", str(tmp_path / "m.sqlite3"), "--port", str(port), "--api-key", KEY,
                    "--config", str(config))
    try:
        client = Client(endpoint=f"http://127.0.0.1:{port}", api_key=KEY, transport="http")
        _wait_healthy(client, server)
        remember_lesson(client, LESSON_A, "a")
        assert len(client.recall(session_id="r", query=QUERY)["evidence"]) == 1
    finally:
        server.terminate()
        server.wait(timeout=15)
    assert (tmp_path / "m.sqlite3").exists()


@pytest.mark.parametrize("how", ["env", "file"])
def test_serve_cli_takes_the_key_from_the_environment_or_a_file_never_the_command_line(tmp_path, how):
    port, secret = _free_port(), "s3cret-key-not-for-ps"
    key_file = tmp_path / "mubit.key"
    key_file.write_text(secret + "\n")
    args = ["--db", str(tmp_path / "m.sqlite3"), "--port", str(port)]
    server = _serve(*args, MUBIT_API_KEY=secret) if how == "env" else _serve(*args, "--api-key-file", str(key_file))
    try:
        _wait_healthy(Client(endpoint=f"http://127.0.0.1:{port}", api_key=secret, transport="http"), server)
        assert secret not in Path(f"/proc/{server.pid}/cmdline").read_text()  # what `ps` shows
        with pytest.raises(AuthError):
            Client(endpoint=f"http://127.0.0.1:{port}", api_key="guess", transport="http").recall(
                session_id="r", query=QUERY)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=15)
    assert "not authenticated" not in err and "visible" not in err

    port = _free_port()
    visible = _serve("--db", str(tmp_path / "m.sqlite3"), "--port", str(port), "--api-key", KEY)
    try:
        _wait_healthy(Client(endpoint=f"http://127.0.0.1:{port}", api_key=KEY, transport="http"), visible)
    finally:
        visible.terminate()
        _, err = visible.communicate(timeout=15)
    assert "--api-key is visible to every user in `ps`" in err


def test_serve_cli_rejects_bad_input_with_one_line(tmp_path):
    result = _serve("--db", str(tmp_path), "--port", "3000")
    _, err = result.communicate(timeout=30)
    assert result.returncode == 2
    assert f"--db {tmp_path}: not a file" in err and "Traceback" not in err

    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("this is not a database, just some text that is long enough to be read\n" * 50)
    result = _serve("--db", str(not_sqlite), "--port", str(_free_port()))
    _, err = result.communicate(timeout=30)
    assert result.returncode == 2 and "not a usable SQLite file" in err and "Traceback" not in err

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = _serve("--db", str(tmp_path / "m.sqlite3"), "--port", str(port))
        _, err = result.communicate(timeout=30)
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: cannot listen")  # one line, last

    empty = tmp_path / "empty.key"
    empty.write_text("\n")
    for key_args, message in [(["--api-key-file", str(empty)], "the file is empty"),
                              (["--api-key-file", str(tmp_path / "missing.key")], "cannot read"),
                              (["--api-key-file", str(empty), "--api-key", "k"], "not both")]:
        result = _serve("--db", str(tmp_path / "m.sqlite3"), *key_args)
        _, err = result.communicate(timeout=30)
        assert result.returncode == 2 and message in err and "Traceback" not in err, err


def test_in_process_engine_stops_cleanly(tmp_path):
    engine = EmbeddedMubit(tmp_path / "m.sqlite3").start()
    endpoint = engine.endpoint
    assert requests.get(f"{endpoint}/v2/core/health").json()["status"] == "ok"  # no key: auth is off
    engine.stop()
    assert not engine.running
    assert not any(thread.name == "mubit-local" for thread in threading.enumerate())
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{endpoint}/v2/core/health", timeout=2)
