"""Does the reward rank replies as a careful reader does? Pairwise agreement on the hand-written reader set.

    python bench/bench_reward_agreement.py [--split dev|heldout|both] [--disagreements]

Per message, every genuine reply (careful, plain) should score above every bad one (salad, off_target,
placeholder, hedge, oversold, echo, invented); a tie counts as a disagreement. Reported per bad kind, for dev and
held-out separately (held-out is never used to tune the reward), with the sign checks of issue #12:
every genuine reply >= 0, every salad, off-target and placeholder reply < 0. Targets: agreement >= 0.95,
careful above salad on every message. Genuine replies a reader marked `after_work` (work reported as done, which
the agent drafting on receipt would invent) are reported apart: how many score >= 0, and how often they score
below an on-receipt genuine reply of their message.
"""

import argparse
import time

from data.reader_set import GENUINE_KINDS, UNACCEPTABLE_KINDS, Agreement, load_reader_set, pairwise_agreement
from rewards import default_scorer


def score_split(split: str) -> tuple[Agreement, list, list[list[float]], float]:
    messages = load_reader_set(split)
    scorer = default_scorer()
    pairs = [(r.text, m.feedback) for m in messages for r in m.replies]
    start = time.perf_counter()
    flat = [result.total for result in scorer.score_many(pairs)]
    seconds = time.perf_counter() - start
    totals, at = [], 0
    for m in messages:
        totals.append(flat[at : at + len(m.replies)])
        at += len(m.replies)
    return pairwise_agreement(messages, totals), messages, totals, seconds


def report(split: str, agreement: Agreement, n_messages: int, n_replies: int, seconds: float) -> None:
    print(f"\n{split}: {n_messages} messages, {n_replies} replies (scored in {seconds:.2f} s)")
    print(f"  {'bad kind':<12} {'careful>':>9} {'plain>':>8} {'genuine>':>9} {'share<0':>8}")
    for kind in agreement.pairs:
        print(f"  {kind:<12} {agreement.rate(kind, 'careful'):>9.3f} {agreement.rate(kind, 'plain'):>8.3f} "
              f"{agreement.rate(kind):>9.3f} {agreement.share_below_zero(kind):>8.2f}")
    print(f"  pairwise agreement overall: {agreement.overall:.3f}  (target >= 0.95)")
    careful_salad = agreement.by_genuine["careful", "salad"]
    print(f"  careful above salad: {careful_salad[0]} of {careful_salad[1]} pairs  (target: all, on every message)")
    for kind in GENUINE_KINDS:
        below, n = agreement.below_zero[kind]
        print(f"  {kind} replies >= 0: {n - below} of {n}  (target: all)")
    for kind in UNACCEPTABLE_KINDS:
        below, n = agreement.below_zero[kind]
        print(f"  {kind} replies < 0: {below} of {n}  (target: all)")
    if "after_work" in agreement.below_zero:
        below, n = agreement.below_zero["after_work"]
        lower, pairs = agreement.after_work_below
        print(f"  after-work genuine replies (invented on receipt, counted apart): {n - below} of {n} >= 0; "
              f"below an on-receipt genuine reply in {lower} of {pairs} pairs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "heldout", "both"], default="both")
    parser.add_argument("--disagreements", action="store_true", help="list every pair ranked against the reader")
    args = parser.parse_args()
    for split in (["dev", "heldout"] if args.split == "both" else [args.split]):
        if not load_reader_set(split):  # between two held-out parts: the last retired, the next not added yet
            print(f"\n{split}: no rows (the last part read is retired into dev, the next not added yet)")
            continue
        agreement, messages, totals, seconds = score_split(split)
        report(split, agreement, len(messages), sum(len(t) for t in totals), seconds)
        if args.disagreements:
            for d in agreement.disagreements:
                print(f"    {d.message_id}: {d.genuine_kind} {d.genuine_total:+.3f} <= {d.bad_kind} {d.bad_total:+.3f}")


if __name__ == "__main__":
    main()
