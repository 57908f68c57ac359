"""Throughput of the reward vs bare VADER `polarity_scores` on the same replies, in one run.

    python bench/bench_reward.py [--repeats 7]

The replies are every reference reply of the dataset (five per feedback, as in a GRPO group the
feedback repeats, so its analysis is cached after the first reply). Target: ratio >= 0.5.
"""

import argparse
import json
import time

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from data import DATA_DIR, SPLITS
from rewards import RewardScorer, load_config


def pairs() -> list[tuple[str, str]]:
    rows = [json.loads(line) for s in SPLITS for line in (DATA_DIR / f"feedback_{s}.jsonl").read_text().splitlines()]
    return [(r["feedback"], ref["text"]) for r in rows for ref in r["references"]]


def best_rates(fns: dict, items, repeats: int) -> dict[str, float]:
    """Best-of-`repeats` rate per function in CPU seconds of this process, passes interleaved, so that load from
    other processes on a small machine distorts the ratio as little as possible."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.process_time()
            fn(items)
            best[name] = min(best[name], time.process_time() - start)
    return {name: len(items) / seconds for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    data = pairs()
    vader = SentimentIntensityAnalyzer()
    scorer = RewardScorer(load_config())

    def run_vader(items):
        for _, reply in items:
            vader.polarity_scores(reply)

    def run_reward(items):
        scorer.analyze_feedback.cache_clear()  # every pass pays for each feedback once
        for feedback, reply in items:
            scorer(reply, feedback)

    def run_reward_warm(items):  # training's steady state: the same feedbacks come back every epoch
        for feedback, reply in items:
            scorer(reply, feedback)

    rates = best_rates({"vader": run_vader, "reward": run_reward, "warm": run_reward_warm}, data, args.repeats)
    vader_rate = rates["vader"]
    print(f"replies: {len(data)}, {len(data) // 5} distinct feedbacks (best of {args.repeats} passes, CPU time)")
    print(f"bare VADER polarity_scores:            {vader_rate:8.0f} replies/s")
    print(f"reward, each feedback analysed once:   {rates['reward']:8.0f} replies/s"
          f"  ratio {rates['reward'] / vader_rate:.2f}  (target >= 0.5)")
    print(f"reward, feedback analysis cached:      {rates['warm']:8.0f} replies/s"
          f"  ratio {rates['warm'] / vader_rate:.2f}")


if __name__ == "__main__":
    main()
