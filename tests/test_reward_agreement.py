"""The reward against the reader: pairwise agreement on the hand-written reader set (issue #12).

Dev is what the reward was tuned on (the first held-out part, h01-h24, is dev now: it was read and tuned against);
held-out was never looked at while tuning, so its floors are what was measured at the end, and the targets it
misses are a strict xfail (docs/reward.md has both figures and every held-out disagreement).
"""

import pytest

from data.reader_set import GENUINE_KINDS, load_reader_set, pairwise_agreement
from rewards import default_scorer


def agreement(split: str):
    messages = load_reader_set(split)
    scored = iter(default_scorer().score_many([(r.text, m.feedback) for m in messages for r in m.replies]))
    return pairwise_agreement(messages, [[next(scored).total for _ in m.replies] for m in messages])


@pytest.fixture(scope="module")
def dev():
    return agreement("dev")


def test_dev_agreement_and_signs(dev):
    assert dev.overall >= 0.95
    assert dev.rate("salad", "careful") == 1.0  # the careful reply above keyword salad on every message
    assert all(dev.share_below_zero(k) == 0 for k in GENUINE_KINDS)  # every genuine reply acceptable
    assert dev.share_below_zero("salad") == dev.share_below_zero("placeholder") == 1.0
    assert dev.share_below_zero("off_target") >= 0.95
    assert min(dev.rate(k) for k in dev.pairs) >= 0.95


def test_heldout_agreement_and_signs():
    """The second held-out part (h3-*, written by a writer who had read neither the reward nor the first parts),
    read once, at the end of the round: floors at what was measured then (docs/reward.md)."""
    heldout = agreement("heldout")
    assert heldout.overall >= 0.95  # 0.981
    assert heldout.rate("salad", "careful") == 1.0 and heldout.share_below_zero("salad") == 1.0
    assert heldout.share_below_zero("placeholder") == 1.0 and heldout.rate("oversold") == 1.0
    assert heldout.share_below_zero("careful") <= 2 / 30 and heldout.share_below_zero("plain") <= 1 / 30
    assert heldout.share_below_zero("off_target") >= 28 / 30


@pytest.mark.xfail(strict=True, reason="issue #12 sign targets not met on the held-out part: careful h3-03 (a "
                                       "signature on the reply's last line read as a cut-off reply) and h3-07 "
                                       "(the team's own phone number as <PHONE_1>, read as invented), plain h3-07, "
                                       "off-target h3-08 and h3-19 >= 0")
def test_heldout_meets_every_sign_target():
    heldout = agreement("heldout")
    assert all(heldout.share_below_zero(k) == 0 for k in GENUINE_KINDS)
    assert heldout.share_below_zero("off_target") == 1.0
