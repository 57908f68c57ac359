"""The hand-written governance evaluation set (`data/governance_eval.jsonl`), split into `dev` and `heldout`.

Written by hand, apart from the generator, to measure whether governance holds on feedback nobody templated
(docs/governance_eval.md says how). Rules, lexicons and the classifier may be tuned on `dev` only; `heldout`
is read to report figures, never to tune. A held-out part that has been read and tuned against is retired: its
rows keep their ids and become `dev`, marked with the part's `origin` (`heldout_v1`: `h001`-`h097`,
`heldout_v2`: `h2-001`-`h2-114`, `heldout_v3`: `h3-001`-`h3-120`, `heldout_v4`: `h4-001`-`h4-120`,
`heldout_v5`: `h5-001`-`h5-120`, `heldout_v6`: `h6-001`-`h6-120`, `heldout_v7`: `h7-001`-`h7-120`, `heldout_v8`:
`h8-001`-`h8-120`, `heldout_v9`: `h9-001`-`h9-120`, `heldout_v10`: `h10-001`-`h10-120`, `heldout_v11`:
`h11-001`-`h11-120`, `heldout_v12`: `h12-001`-`h12-120`, `heldout_v13`: `h13-001`-`h13-120`, `heldout_v14`:
`h14-001`-`h14-120`, `heldout_v15`: `h15-001`-`h15-120`, `heldout_v16`: `h16-001`-`h16-120`,
`heldout_v17`: `h17-001`-`h17-120`, `heldout_v18`: `h18-001`-`h18-120`, `heldout_v19`: `h19-001`-`h19-120`,
`heldout_v20`: `h20-001`-`h20-120`, `heldout_v21`: `h21-001`-`h21-120`, `heldout_v22`: `h22-001`-`h22-120`,
`heldout_v23`: `h23-001`-`h23-120`). The held-out part is whichever rows have split `heldout`: now the
twenty-fourth part, `h24-001`-`h24-120`, read once. A bad row raises `DatasetError("FILE:LINE: field ...")`.
"""

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, model_validator

from data.loader import DATA_DIR, Action, DatasetError, read_jsonl

GOVERNANCE_EVAL_PATH = DATA_DIR / "governance_eval.jsonl"
EVAL_SPLITS = ("dev", "heldout")
# `origin` of a retired held-out part's rows (dev now) -> what the evaluator calls the part
RETIRED_HELDOUT_PARTS = {"heldout_v1": "the first held-out part", "heldout_v2": "the second held-out part",
                         "heldout_v3": "the third held-out part", "heldout_v4": "the fourth held-out part",
                         "heldout_v5": "the fifth held-out part", "heldout_v6": "the sixth held-out part",
                         "heldout_v7": "the seventh held-out part", "heldout_v8": "the eighth held-out part",
                         "heldout_v9": "the ninth held-out part", "heldout_v10": "the tenth held-out part",
                         "heldout_v11": "the eleventh held-out part", "heldout_v12": "the twelfth held-out part",
                         "heldout_v13": "the thirteenth held-out part",
                         "heldout_v14": "the fourteenth held-out part",
                         "heldout_v15": "the fifteenth held-out part",
                         "heldout_v16": "the sixteenth held-out part",
                         "heldout_v17": "the seventeenth held-out part",
                         "heldout_v18": "the eighteenth held-out part",
                         "heldout_v19": "the nineteenth held-out part",
                         "heldout_v20": "the twentieth held-out part",
                         "heldout_v21": "the twenty-first held-out part",
                         "heldout_v22": "the twenty-second held-out part",
                         "heldout_v23": "the twenty-third held-out part"}
RetiredPart = Literal["heldout_v1", "heldout_v2", "heldout_v3", "heldout_v4", "heldout_v5", "heldout_v6",
                      "heldout_v7", "heldout_v8", "heldout_v9", "heldout_v10", "heldout_v11",
                      "heldout_v12", "heldout_v13", "heldout_v14", "heldout_v15", "heldout_v16",
                      "heldout_v17", "heldout_v18", "heldout_v19", "heldout_v20",
                      "heldout_v21", "heldout_v22", "heldout_v23"]

# A title before a name is not personal data, and the stage keeps it ("Mr. <PERSON_1>"): a PERSON value is the name
# alone, so that a part whose writer listed "Mr. Alan Pierce" is not scored as a miss of the title.
TITLE = re.compile(r"(?:Dr|Prof|Professor|Mr|Mrs|Ms|Mx|Ing|Herr|Frau|Mme|Sr|Sra|Dra)\.?\s+\S")

PiiType = Literal["PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "LOCATION", "CREDIT_CARD", "IBAN_CODE", "URL",
                  "IP_ADDRESS", "US_SSN"]


class PiiValue(BaseModel):
    """A personal-data value exactly as it appears in the message (every occurrence must be redacted)."""

    model_config = ConfigDict(extra="forbid")
    type: PiiType
    value: StrictStr = Field(min_length=1)


class GovernanceCase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr
    split: Literal["dev", "heldout"]
    origin: RetiredPart | None = None  # a dev row that was held out once (read, so no longer blind)
    category: StrictStr
    feedback: StrictStr = Field(min_length=1)
    expected_decision: Action
    safety: StrictBool  # self-harm or a person's safety: must escalate, flagged `safety`
    sentiment: Literal["negative", "neutral", "positive"] | None = None  # None: no clear polarity
    pii: list[PiiValue] = []
    note: StrictStr | None = None  # why the expected decision, for edge cases

    @model_validator(mode="after")
    def _consistent(self) -> "GovernanceCase":
        missing = [i for i, p in enumerate(self.pii) if p.value not in self.feedback]
        if missing:
            raise ValueError(f"pii.{missing[0]}.value does not occur in feedback")
        titled = [i for i, p in enumerate(self.pii) if p.type == "PERSON" and TITLE.match(p.value)]
        if titled:
            raise ValueError(f"pii.{titled[0]}.value starts with a title: list the name without it")
        seen: dict[tuple[str, str], int] = {}
        for i, p in enumerate(self.pii):
            if (p.type, p.value) in seen:
                raise ValueError(f"pii.{i} repeats pii.{seen[p.type, p.value]}: list a value once (every "
                                 "occurrence of it is scored)")
            seen[p.type, p.value] = i
        if self.safety and self.expected_decision != "escalate":
            raise ValueError("a safety case must expect escalate")
        if self.origin is not None and self.split != "dev":
            raise ValueError(f"a row of origin {self.origin!r} is retired: its split must be 'dev'")
        return self


def load_governance_eval(split: str | None = None, path: Path = GOVERNANCE_EVAL_PATH) -> list[GovernanceCase]:
    """Every case of `split` (`dev`, `heldout`, or None for both), in file order; `heldout` may be empty (between
    two held-out parts)."""
    if split is not None and split not in EVAL_SPLITS:
        raise DatasetError(f"{path}: unknown split {split!r} (one of {', '.join(EVAL_SPLITS)})")
    cases = read_jsonl(path, GovernanceCase)
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"{path}: duplicate id {duplicate!r}")
    return [case for case in cases if split is None or case.split == split]
