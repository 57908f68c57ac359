"""Ranking and storage rules of the embedded engine, checked directly on the store (no HTTP)."""

import pytest

from al_integration.mubit_local import MemoryStore, RankingWeights
from al_integration.mubit_local.ranking import credit_confidence, soft_trial


@pytest.fixture
def store(tmp_path):
    memory = MemoryStore(tmp_path / "m.sqlite3")
    yield memory
    memory.close()


def add(store: MemoryStore, text: str, intent: str = "lesson", run: str = "seed", **extra) -> str:
    answer = store.ingest(run, "test", [{"text": text, "intent": intent, **extra}])
    return store.ingest_job(answer["job_id"])["traces"][0]["writes"][0]["record_id"]


def ids(store: MemoryStore, query: str, limit: int = 10, run: str = "r") -> list[str]:
    return [ranked.entry.entry_id for ranked in store.search(run, query, limit)]


def test_soft_trials_turn_signals_into_beta_evidence():
    assert soft_trial(1.0) == (1.0, 0.0) and soft_trial(-1.0) == (0.0, 1.0) and soft_trial(0.0) == (0.5, 0.5)
    assert soft_trial(7.0) == (1.0, 0.0)  # clamped to [-1, 1]
    assert credit_confidence(0, 0, RankingWeights()) == 0.5
    assert credit_confidence(3, 0, RankingWeights()) == pytest.approx(0.8)


def test_higher_rewards_in_zero_one_rank_higher_although_both_are_successes(store):
    good = add(store, "explain the sample size and what more data would change")
    weak = add(store, "explain the sample size and what more data would show")
    for _ in range(3):
        for entry, reward in ((good, 0.9), (weak, 0.2)):
            store.record_outcome(run_id="r", reference_id="global", outcome="success", signal=reward,
                                 entry_ids=[entry])
    ranked = store.search("r", "sample size", 2)
    assert [r.entry.entry_id for r in ranked] == [good, weak]
    assert ranked[0].entry.success_count == ranked[1].entry.success_count == 3


def test_words_in_most_entries_do_not_drown_the_informative_ones(store):
    for i in range(10):
        add(store, f"the reply should be short and the tone kind, variant {i}")
    target = add(store, "the sample size must be stated")
    assert ids(store, "the sample size", 1) == [target]


def test_no_matching_word_falls_back_to_best_credited_visible_lessons(store):
    liked = add(store, "acknowledge the point first")
    other = add(store, "keep replies short")
    add(store, "a trace from another run", intent="trace", run="elsewhere")
    store.record_outcome(run_id="r", reference_id=liked, outcome="success", signal=1.0)
    assert ids(store, "zzz unmatched words", 5) == [liked, other]
    assert ids(store, "", 5) == [liked, other]


def test_upsert_key_updates_the_entry_in_place_and_keeps_its_credit(store):
    first = add(store, "old wording", upsert_key="lesson-01")
    store.record_outcome(run_id="r", reference_id=first, outcome="success", signal=1.0)
    second = add(store, "new wording", upsert_key="lesson-01")
    assert second == first
    entry = store.get_entry(first)
    assert entry.text == "new wording" and entry.outcome_count == 1
    assert ids(store, "new wording") == [first] and ids(store, "old") == [first]  # "old": credit fill only


def test_run_scoped_lessons_stay_in_their_run(store):
    scoped = add(store, "only for this run", lesson_scope="run", run="run-1")
    assert ids(store, "only this run", run="run-1") == [scoped]
    assert ids(store, "only this run", run="run-2") == []


def test_store_is_durable_across_reopen(tmp_path):
    first = MemoryStore(tmp_path / "m.sqlite3")
    entry = add(first, "durable lesson")
    first.record_outcome(run_id="r", reference_id=entry, outcome="failure", signal=-1.0)
    first.close()
    reopened = MemoryStore(tmp_path / "m.sqlite3")
    try:
        assert reopened.get_entry(entry).failure_count == 1
    finally:
        reopened.close()


def test_entries_of_other_runs_never_crowd_out_visible_ones(store):
    store.ingest("other", "test", [{"text": "sample size sample size", "intent": "trace"} for _ in range(60)])
    lesson = add(store, "state the sample size")
    assert ids(store, "sample size", limit=1, run="mine") == [lesson]


def test_thompson_sampling_explores_but_favours_the_credited_lesson(tmp_path):
    store = MemoryStore(tmp_path / "m.sqlite3", RankingWeights(sample_credit=True), seed=0)
    try:
        good = add(store, "explain the sample size and what more data would change")
        bad = add(store, "explain the sample size and what more data would show")
        for entry, reward in ((good, 1.0), (bad, -1.0)):
            store.record_outcome(run_id="r", reference_id=entry, outcome="success", signal=reward)
        firsts = [ids(store, "sample size", 1)[0] for _ in range(200)]
    finally:
        store.close()
    assert 0.6 < firsts.count(good) / 200 < 0.95  # Beta(2,1) vs Beta(1,2): P(good first) = 5/6
