"""The reader-judged set: hand-written feedback messages, each with replies a person has judged by kind.

`data/reader_set.jsonl` holds one message a line: the feedback as the reward sees it (already redacted, so
personal data appears as governance placeholders such as `<PERSON_1>`) and at least one reply of every kind.
Two kinds are genuine replies, the others (six, and `invented` on the newest parts) are replies a careful reader
rejects. How it was written: docs/reader_set.md. The `heldout` split is never used to tune the reward; `dev` is.
A held-out part that was read and tuned against is retired into `dev` with its ids, marked by `origin`
(`heldout_v1`: `h01`-`h24`, `heldout_v2`: `h3-01`-`h3-30`, `heldout_v3`: `h4-01`-`h4-30`, `heldout_v4`:
`h5-01`-`h5-30`, `heldout_v5`: `h6-01`-`h6-30`, `heldout_v6`: `h7-01`-`h7-30`, the first with `invented` replies,
`heldout_v7`: `h8-01`-`h8-30`, `heldout_v8`: `h9-01`-`h9-30`, `heldout_v9`: `h10-01`-`h10-30`, `heldout_v10`:
`h11-01`-`h11-30`, `heldout_v11`: `h12-01`-`h12-30`, `heldout_v12`: `h13-01`-`h13-30`, `heldout_v13`:
`h14-01`-`h14-30`, `heldout_v14`: `h15-01`-`h15-30`, `heldout_v15`: `h16-01`-`h16-30`,
`heldout_v16`: `h17-01`-`h17-30`, `heldout_v17`: `h18-01`-`h18-30`, `heldout_v18`: `h19-01`-`h19-30`,
`heldout_v19`: `h20-01`-`h20-30`, `heldout_v20`: `h21-01`-`h21-30`). The held-out part now is the twenty-first,
`h22-01`-`h22-30`, written blind and read once.

`pairwise_agreement` is the set's measure: per message, every genuine reply should score above every bad
one. It takes the totals, not a scorer, so that `data` stays below `rewards` in the layers.

The set is judged for the product's setting: the agent drafts its reply when the feedback arrives, before anyone
has looked into anything. A careful or plain reply marked `after_work` reports work as already done or found
("we've fixed the link", "we reproduced it: the parser applies the offset twice"): genuine from a team that has
looked, invented from the agent. A reader (who had not seen the reward) marked them; they are counted apart, not
as genuine replies. `invented`, a bad kind written from the sixth held-out part on, is that on purpose.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, model_validator

from data.loader import DATA_DIR, DatasetError, read_jsonl

READER_SET_PATH = DATA_DIR / "reader_set.jsonl"

Kind = Literal["careful", "plain", "salad", "off_target", "placeholder", "hedge", "oversold", "echo", "invented"]
Split = Literal["dev", "heldout"]
RetiredPart = Literal[
    "heldout_v1", "heldout_v2", "heldout_v3", "heldout_v4", "heldout_v5", "heldout_v6", "heldout_v7", "heldout_v8",
    "heldout_v9", "heldout_v10", "heldout_v11", "heldout_v12", "heldout_v13", "heldout_v14", "heldout_v15",
    "heldout_v16", "heldout_v17", "heldout_v18", "heldout_v19", "heldout_v20",
]
KINDS: tuple[str, ...] = get_args(Kind)
REQUIRED_KINDS = KINDS[:8]  # every message has these; `invented` came with the sixth held-out part (h7-*)
GENUINE_KINDS = ("careful", "plain")
BAD_KINDS = tuple(k for k in KINDS if k not in GENUINE_KINDS)
# Kinds a reader does not accept as a reply at all: the reward must score every one of them below zero.
UNACCEPTABLE_KINDS = ("salad", "off_target", "placeholder")


class ReaderReply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Kind
    text: StrictStr = Field(min_length=1)
    after_work: StrictBool = False  # a genuine reply that reports work done or found: invented when drafted on receipt

    @model_validator(mode="after")
    def _after_work_is_genuine(self) -> "ReaderReply":
        if self.after_work and self.kind not in GENUINE_KINDS:
            raise ValueError(f"after_work marks a genuine reply (careful, plain), not {self.kind!r}")
        return self


class ReaderMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: StrictStr = Field(min_length=1)
    split: Split
    origin: RetiredPart | None = None  # a dev message that was held out once (read, so no longer blind)
    style: StrictStr = Field(min_length=1)  # the register it was written in, e.g. "terse engineer, bug report"
    feedback: StrictStr = Field(min_length=1)
    replies: list[ReaderReply]

    @model_validator(mode="after")
    def _every_kind(self) -> "ReaderMessage":
        missing = [k for k in REQUIRED_KINDS if k not in {r.kind for r in self.replies}]
        if missing:
            raise ValueError(f"needs at least one reply of every kind; missing {', '.join(missing)}")
        if self.origin is not None and self.split != "dev":
            raise ValueError(f"a message of origin {self.origin!r} is retired: its split must be 'dev'")
        return self


def load_reader_set(split: Split | None = None, path: Path = READER_SET_PATH) -> list[ReaderMessage]:
    """All messages, or one split's. Raises `DatasetError("FILE:LINE: field ...")` on the first bad line."""
    messages: list[ReaderMessage] = read_jsonl(path, ReaderMessage)
    seen: set[str] = set()
    for message in messages:
        if message.id in seen:
            raise DatasetError(f"{path}: field 'id': {message.id!r} appears twice")
        seen.add(message.id)
    return [m for m in messages if split is None or m.split == split]


@dataclass(frozen=True)
class Disagreement:
    message_id: str
    genuine_kind: str
    bad_kind: str
    genuine_total: float
    bad_total: float


@dataclass(frozen=True)
class Agreement:
    """How often a reward ranks as the reader does, and where it does not."""

    pairs: dict[str, tuple[int, int]]  # bad kind -> (pairs ranked right, pairs), genuine above bad, per message
    by_genuine: dict[tuple[str, str], tuple[int, int]]  # (genuine kind, bad kind) -> (right, pairs)
    below_zero: dict[str, tuple[int, int]]  # kind (or "after_work") -> (replies < 0, replies)
    # pairs of an after-work reply and an on-receipt genuine reply of the same message: (after-work below, pairs)
    after_work_below: tuple[int, int] = (0, 0)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def overall(self) -> float:
        right = sum(r for r, _ in self.pairs.values())
        return right / max(1, sum(n for _, n in self.pairs.values()))

    def rate(self, bad_kind: str, genuine_kind: str | None = None) -> float:
        right, n = self.pairs[bad_kind] if genuine_kind is None else self.by_genuine[genuine_kind, bad_kind]
        return right / max(1, n)

    def share_below_zero(self, kind: str) -> float:
        below, n = self.below_zero[kind]
        return below / max(1, n)


def pairwise_agreement(messages: Sequence[ReaderMessage], totals: Sequence[Sequence[float]]) -> Agreement:
    """`totals[i][j]` is the reward of `messages[i].replies[j]`. A pair counts as right only if the genuine reply
    scores strictly above the bad one (a tie is a disagreement: the reward could not tell them apart). Only kinds
    the messages have are counted; after-work replies are counted apart (`below_zero["after_work"]`,
    `after_work_below`)."""
    pairs = {k: [0, 0] for k in BAD_KINDS}
    by_genuine = {(g, b): [0, 0] for g in GENUINE_KINDS for b in BAD_KINDS}
    below = {k: [0, 0] for k in (*KINDS, "after_work")}
    after_work = [0, 0]
    disagreements = []
    for message, message_totals in zip(messages, totals, strict=True):
        scored = list(zip(message.replies, message_totals, strict=True))
        for reply, total in scored:
            counts = below["after_work" if reply.after_work else reply.kind]
            counts[0] += total < 0
            counts[1] += 1
        genuine = [(r, t) for r, t in scored if r.kind in GENUINE_KINDS and not r.after_work]
        for good, good_total in genuine:
            for bad, bad_total in scored:
                if bad.kind in GENUINE_KINDS:
                    continue
                right = good_total > bad_total
                for counts in (pairs[bad.kind], by_genuine[good.kind, bad.kind]):
                    counts[0] += right
                    counts[1] += 1
                if not right:
                    disagreements.append(Disagreement(message.id, good.kind, bad.kind, good_total, bad_total))
            for done_total in (t for r, t in scored if r.after_work):
                after_work[0] += done_total < good_total
                after_work[1] += 1
    return Agreement({k: tuple(v) for k, v in pairs.items() if v[1]},
                     {k: tuple(v) for k, v in by_genuine.items() if v[1]},
                     {k: tuple(v) for k, v in below.items() if v[1]}, tuple(after_work), disagreements)
