"""The hand-written reader-judged set: its contract (size, kinds, splits, styles), its loader, its measure."""

import collections
import importlib.util
import json
import re

import pytest

from data import DATA_DIR, DatasetError
from data.reader_set import (
    GENUINE_KINDS,
    KINDS,
    READER_SET_PATH,
    REQUIRED_KINDS,
    Disagreement,
    ReaderMessage,
    ReaderReply,
    load_reader_set,
    pairwise_agreement,
)
from rewards import load_config
from rewards.privacy import PiiPatterns

STOCK_WORDS = re.compile(r"\b(?:limitation|preliminary|verif\w*|evidence|caveat|uncertain\w*)", re.IGNORECASE)


@pytest.fixture(scope="module")
def messages():
    return load_reader_set()


def test_size_kinds_and_splits(messages):
    assert len(messages) >= 60
    assert len({m.id for m in messages}) == len(messages)
    assert len({m.feedback for m in messages}) == len(messages)
    for m in messages:
        assert len(m.replies) >= 8 and set(REQUIRED_KINDS) <= {r.kind for r in m.replies} <= set(KINDS), m.id
    splits = collections.Counter(m.split for m in messages)
    # the twenty-first held-out part (h22-*) now; between two parts (one retired, the next not added yet) there is none.
    # One part of 30 beside twenty retired ones is 4.4% of the set (30 of 675)
    assert splits["heldout"] == 0 or (splits["heldout"] >= 20 and 0.04 <= splits["heldout"] / len(messages) <= 0.45)
    assert all(m.id.startswith("h22-") for m in messages if m.split == "heldout")
    # the first twenty held-out parts (h01-h24, h3-01-h3-30, h4-01-h4-30, h5-01-h5-30, h6-01-h6-30, h7-01-h7-30,
    # h8-01-h8-30, h9-01-h9-30, h10-01-h10-30, h11-01-h11-30, h12-01-h12-30, h13-01-h13-30, h14-01-h14-30,
    # h15-01-h15-30, h16-01-h16-30, h17-01-h17-30, h18-01-h18-30, h19-01-h19-30, h20-01-h20-30, h21-01-h21-30) were
    # read and tuned against: retired into dev with their ids, marked
    for origin, ids in (("heldout_v1", [f"h{i:02d}" for i in range(1, 25)]),
                        ("heldout_v2", [f"h3-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v3", [f"h4-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v4", [f"h5-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v5", [f"h6-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v6", [f"h7-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v7", [f"h8-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v8", [f"h9-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v9", [f"h10-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v10", [f"h11-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v11", [f"h12-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v12", [f"h13-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v13", [f"h14-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v14", [f"h15-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v15", [f"h16-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v16", [f"h17-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v17", [f"h18-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v18", [f"h19-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v19", [f"h20-{i:02d}" for i in range(1, 31)]),
                        ("heldout_v20", [f"h21-{i:02d}" for i in range(1, 31)])):
        retired = [m for m in messages if m.origin == origin]
        assert [m.id for m in retired] == ids and {m.split for m in retired} == {"dev"}
    assert all(m.id.startswith("d") for m in messages if m.split == "dev" and m.origin is None)


def test_plain_replies_are_short_and_without_stock_integrity_words(messages):
    for m in messages:
        for r in m.replies:
            if r.kind == "plain":
                assert 40 <= len(r.text.split()) <= 70, m.id
                assert not STOCK_WORDS.search(r.text), (m.id, STOCK_WORDS.search(r.text).group())


def test_varied_lengths_and_registers(messages):
    words = [len(m.feedback.split()) for m in messages]
    assert min(words) <= 15 and max(words) >= 90  # one line to several paragraphs
    assert sum("\n" in m.feedback for m in messages) >= 5  # paragraphs and bullet lists
    assert len({m.style for m in messages}) == len(messages)  # each written in its own register
    assert sum(bool(re.search(r"<PERSON_\d+>|<EMAIL_\d+>|<LOCATION_\d+>", m.feedback)) for m in messages) >= 10


def test_feedback_is_redacted_and_not_the_generators(messages):
    """Written as the reward sees feedback (personal data already placeholders), and not from the dataset
    generator's topics or templates."""
    pii = PiiPatterns(load_config().privacy)
    spec = importlib.util.spec_from_file_location("generate", DATA_DIR / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    topics = [t.short.lower() for t in generate.TOPICS] + [t.subject.lower() for t in generate.TOPICS]
    # A blind writer never saw the generator; where one named the same kind of thing, the overlap is a coincidence,
    # kept as written (a committed held-out row is never edited) and listed here with the words it shares.
    coincidences = {"h11-08": {"data portal"}}  # "a national open-data portal", the harvester's own
    for m in messages:
        assert not pii.find(m.feedback), m.id
        shared = {topic for topic in topics if topic in m.feedback.lower()}
        assert shared <= coincidences.get(m.id, set()), (m.id, shared)


def write(tmp_path, rows) -> str:
    path = tmp_path / "set.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def row(**change):
    replies = [{"kind": k, "text": f"A {k} reply."} for k in KINDS]
    return {"id": "d1", "split": "dev", "style": "terse", "feedback": "The link is broken.", "replies": replies,
            **change}


@pytest.mark.parametrize("bad, where, what", [
    (row(split="test"), ":2:", "field 'split'"),
    (row(replies=[{"kind": "rude", "text": "x"}]), ":2:", "field 'replies.0.kind'"),
    (row(replies=[{"kind": "careful", "text": "fine"}]), ":2:", "missing plain"),
    (row(feedback=""), ":2:", "field 'feedback'"),
    (row(split="heldout", origin="heldout_v1"), ":2:", "is retired: its split must be 'dev'"),
    (row(origin="heldout_v21"), ":2:", "field 'origin'"),
    ('{"id": "d2", ', ":2:", "not valid JSON"),
])
def test_loader_names_file_line_and_field(tmp_path, bad, where, what):
    path = write(tmp_path, [row(id="d0"), bad])
    with pytest.raises(DatasetError) as e:
        load_reader_set(path=path)
    assert str(e.value).startswith(f"{path}{where}") and what in str(e.value)


def test_loader_rejects_duplicate_ids_and_filters_splits(tmp_path):
    with pytest.raises(DatasetError, match="'d1' appears twice"):
        load_reader_set(path=write(tmp_path, [row(), row()]))
    path = write(tmp_path, [row(), row(id="h1", split="heldout")])
    assert [m.id for m in load_reader_set("heldout", path=path)] == ["h1"]
    assert READER_SET_PATH.exists()


def test_pairwise_agreement_counts_genuine_above_bad_per_message():
    message = next(m for m in load_reader_set(path=READER_SET_PATH) if not any(r.after_work for r in m.replies))
    totals = [0.5 if r.kind in GENUINE_KINDS else -0.5 for r in message.replies]
    perfect = pairwise_agreement([message], [totals])
    assert perfect.overall == 1.0 and not perfect.disagreements
    assert set(perfect.pairs) == {r.kind for r in message.replies} - set(GENUINE_KINDS)
    assert all(perfect.share_below_zero(k) == 1.0 for k in perfect.pairs)
    salad = next(i for i, r in enumerate(message.replies) if r.kind == "salad")
    tied = list(totals)
    tied[salad] = 0.5  # a tie is a disagreement: the reward could not tell them apart
    result = pairwise_agreement([message], [tied])
    n_salad = sum(r.kind == "salad" for r in message.replies)
    n_genuine = sum(r.kind in GENUINE_KINDS for r in message.replies)
    assert result.pairs["salad"] == (n_genuine * (n_salad - 1), n_genuine * n_salad)
    assert Disagreement(message.id, "careful", "salad", 0.5, 0.5) in result.disagreements


def test_after_work_replies_are_counted_apart_from_genuine_ones():
    """A careful reply that reports a fix is genuine from a team that made it, invented from an agent drafting on
    receipt: it is neither ranked above the bad replies nor counted among the genuine ones."""
    replies = [{"kind": k, "text": f"A {k} reply."} for k in REQUIRED_KINDS]
    replies[0] = {"kind": "careful", "text": "We've fixed the link.", "after_work": True}
    message = ReaderMessage(id="x", split="dev", style="s", feedback="The link is broken.", replies=replies)
    totals = [-0.2 if r.after_work else 0.5 if r.kind in GENUINE_KINDS else -0.5 for r in message.replies]
    result = pairwise_agreement([message], [totals])
    assert result.below_zero["after_work"] == (1, 1) and "careful" not in result.below_zero
    assert result.pairs["salad"] == (1, 1)  # the plain reply above the salad; the after-work one is not paired
    assert result.after_work_below == (1, 1)  # below the plain reply of its message
    with pytest.raises(ValueError, match="after_work marks a genuine reply"):
        ReaderReply(kind="salad", text="x", after_work=True)
