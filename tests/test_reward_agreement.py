"""The reward against the reader: pairwise agreement on the hand-written reader set (issue #12).

Dev is what the reward was tuned on (the first two held-out parts, h01-h24 and h3-*, are dev now: they were read
and tuned against); held-out was never looked at while tuning, so its floors are what was measured at its first
reading, and the targets it misses are a strict xfail (docs/reward.md has both figures and every held-out
disagreement).
"""

import pytest

from data.reader_set import GENUINE_KINDS, load_reader_set, pairwise_agreement
from rewards import default_scorer


def scored(split: str):
    messages = load_reader_set(split)
    results = iter(default_scorer().score_many([(r.text, m.feedback) for m in messages for r in m.replies]))
    return messages, [[next(results) for _ in m.replies] for m in messages]


def agreement(split: str):
    messages, results = scored(split)
    return pairwise_agreement(messages, [[r.total for r in rs] for rs in results])


@pytest.fixture(scope="module")
def dev():
    return agreement("dev")


def test_dev_agreement_and_signs(dev):
    assert dev.overall >= 0.95  # 0.994
    assert dev.rate("salad", "careful") == 1.0  # the careful reply above keyword salad on every message
    assert dev.share_below_zero("salad") == dev.share_below_zero("placeholder") == 1.0
    assert dev.share_below_zero("off_target") >= 0.95  # 102 of 106
    assert min(dev.rate(k) for k in dev.pairs) >= 0.95


def test_every_genuine_dev_reply_is_acceptable_unless_it_leaves_a_placeholder_nobody_can_fill():
    """The second held-out part's writer (h3-*, dev now) signs two genuine replies with a staff placeholder
    (<PERSON_2>) and gives the team's phone as <PHONE_1>. A reply can only have the feedback's placeholders
    filled back, so those stay literal in what is sent, and the role gate fails them (docs/reward.md): that is
    the one reason a genuine dev reply may fail."""
    messages, results = scored("dev")
    failures = [(m.id, r.kind, res.components["role"].explanation) for m, rs in zip(messages, results, strict=True)
                for r, res in zip(m.replies, rs, strict=True) if r.kind in GENUINE_KINDS and res.total < 0]
    assert len(failures) <= 3, failures
    assert all("is not in the feedback" in why for _, _, why in failures), failures
