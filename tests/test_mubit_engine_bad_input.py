"""The embedded Mubit engine against bad input: what a client (the real mubit-sdk, or curl) sees.

Repeated entry ids, non-finite numbers, unknown routes and wrong methods, oversized bodies, and what
the adapter's `cited_only=True` does against an engine that synthesizes no answer.
"""

import al_integration  # noqa: F401, I001  (offline defaults before agentlightning is imported)

import json
import math
import sqlite3

import pytest
import requests
from mubit import Client, ServerError, UnsupportedFeatureError
from mubit_agent_lightning import extract_entry_ids

from al_integration.mubit_local import EmbeddedMubit
from al_integration.mubit_local.app import MAX_BODY_BYTES

pytestmark = pytest.mark.filterwarnings("ignore:client\\..*is moving to client\\.advanced:DeprecationWarning")
KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


@pytest.fixture
def engine(tmp_path):
    with EmbeddedMubit(tmp_path / "mubit.sqlite3", api_key=KEY) as running:
        yield running


def sdk(engine) -> Client:
    return Client(endpoint=engine.endpoint, api_key=KEY, transport="http")


def lesson(client: Client, text: str, key: str) -> str:
    job = client.remember(session_id="seed", content=text, intent="lesson", lesson_type="success",
                          idempotency_key=key)
    return job["traces"][0]["writes"][0]["record_id"]


def credit_of(client: Client, query: str) -> dict[str, dict]:
    """explain_info of every recalled lesson, by entry id (the recall itself must succeed)."""
    answer = client.recall(session_id="r", query=query, limit=10, explain=True, entry_types=["lesson"])
    return {item["reference_id"]: item["explain_info"] for item in answer["evidence"]}


def test_a_repeated_entry_id_is_credited_once_per_outcome(engine):
    client = sdk(engine)
    a = lesson(client, "Give the sample size and what a larger sample would change.", "a")
    b = lesson(client, "Say which sample results are preliminary.", "b")
    answer = client.record_outcome(session_id="r", reference_id="global", outcome="success", signal=1.0,
                                   entry_ids=[a, b, a])
    assert answer["credited_entry_ids"] == [a, b] and answer["reinforcement_count"] == 2
    info = credit_of(client, "sample")
    assert (info[a]["outcome_count"], info[a]["success_count"], info[a]["signal_sum"]) == (1, 1, 1.0)
    assert info[a]["credit_confidence"] == pytest.approx(info[b]["credit_confidence"])

    client.record_outcome(session_id="r", reference_id=a, outcome="success", signal=0.5, entry_ids=[a])
    assert credit_of(client, "sample")[a]["outcome_count"] == 2  # the reference id and entry_ids: still once


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused_with_400_and_change_nothing(engine, number):
    client = sdk(engine)
    a = lesson(client, "Give the sample size and what a larger sample would change.", "a")
    for route, body in [
        ("outcome", f'{{"run_id": "r", "outcome": "success", "signal": {number}, "entry_ids": ["{a}"]}}'),
        ("step_outcome", f'{{"run_id": "r", "step_id": "s", "outcome": "success", "signal": {number}}}'),
    ]:
        answer = requests.post(f"{engine.endpoint}/v2/control/{route}", data=body, headers=AUTH, timeout=10)
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        assert "signal" in answer.json()["error"] and "finite" in answer.json()["error"]
    info = credit_of(client, "sample")[a]  # explain still answers: no infinite sum was stored
    assert (info["outcome_count"], info["signal_sum"]) == (0, 0.0)


def test_an_infinite_sum_left_by_an_older_engine_is_repaired_on_open(tmp_path):
    db = tmp_path / "mubit.sqlite3"
    with EmbeddedMubit(db, api_key=KEY) as first:
        client = sdk(first)
        a = lesson(client, "Give the sample size and what a larger sample would change.", "a")
        client.record_outcome(session_id="r", reference_id=a, outcome="success", signal=0.5)
    with sqlite3.connect(db) as conn:  # what `signal: Infinity` left behind before the fix
        conn.execute("UPDATE entries SET signal_sum = signal_sum + 9e999, outcome_count = outcome_count + 1")
        conn.execute("INSERT INTO outcomes(run_id, reference_id, outcome, signal, rationale, agent_id, credited_json,"
                     " verified, created_at) VALUES ('r', 'global', 'success', 9e999, '', '', ?, 0, 0)", (f'["{a}"]',))
    with EmbeddedMubit(db, api_key=KEY) as reopened:
        info = credit_of(sdk(reopened), "sample")[a]
    assert math.isfinite(info["signal_sum"]) and info["signal_sum"] == pytest.approx(0.5)


def test_unknown_routes_are_404_wrong_methods_405_and_hosted_only_routes_501(engine):
    for method, path, status in [
        ("get", "/v2/control/query", 405),
        ("post", "/v2/core/health", 405),
        ("post", "/v2/control/no_such_route", 404),
        ("get", "/index.html", 404),
        ("post", "/v2/control/handoff", 501),  # in the hosted contract, not served here
    ]:
        answer = requests.request(method, f"{engine.endpoint}{path}", json={}, headers=AUTH, timeout=10)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text)
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["code"] == status and path in answer.json()["error"]
    assert requests.get(f"{engine.endpoint}/v2/control/query", headers=AUTH, timeout=10).headers["allow"] == "POST"
    with pytest.raises(UnsupportedFeatureError):
        sdk(engine).reflect(session_id="r")
    unauthenticated = requests.post(f"{engine.endpoint}/v2/control/no_such_route", json={}, timeout=10)
    assert unauthenticated.status_code == 401  # the key is checked before anything else


def test_bodies_over_the_limit_are_refused_with_413_and_nothing_is_stored(engine):
    client = sdk(engine)
    huge = "word " * (MAX_BODY_BYTES // 5 + 10)
    body = json.dumps({"run_id": "r", "items": [{"intent": "lesson", "text": huge}]})
    declared = requests.post(f"{engine.endpoint}/v2/control/ingest", data=body, headers=AUTH, timeout=30)
    streamed = requests.post(f"{engine.endpoint}/v2/control/ingest", headers=AUTH, timeout=30,
                             data=(body[i:i + 65536].encode() for i in range(0, len(body), 65536)))  # chunked
    for answer in (declared, streamed):
        assert answer.status_code == 413, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        assert f"{MAX_BODY_BYTES} bytes" in answer.json()["error"]
    with pytest.raises(ServerError, match="413"):  # what the SDK raises (it maps 413 to ServerError)
        client.remember(session_id="r", content=huge, intent="lesson", idempotency_key="huge")
    assert client.auth.health()["entries"] == 0
    lesson(client, "A lesson of ordinary size is stored.", "small")
    assert client.auth.health()["entries"] == 1


def test_cited_only_credits_every_recalled_entry_because_the_engine_synthesizes_no_answer(engine):
    """docs/mubit.md: the engine answers no `final_answer`, so nothing is cited and the adapter's
    `cited_only=True` falls back to every evidence item. Our hook credits what the agent was shown."""
    client = sdk(engine)
    ids = {lesson(client, f"Lesson {i} about the sample size.", f"l{i}") for i in range(3)}
    answer = client.recall(session_id="r", query="sample size", limit=3, entry_types=["lesson"])
    assert answer["final_answer"] == "" and answer["citations"] == [] and answer["mode"] == "direct_bypass"
    assert set(extract_entry_ids(answer, cited_only=True)) == ids == set(extract_entry_ids(answer))
