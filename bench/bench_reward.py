"""Throughput of the reward beside bare VADER and bare spaCy `nlp.pipe` on the same replies, in one run.

    python bench/bench_reward.py [--repeats 5]

The replies are the ~100-word ones (80-130 words) of the hand-written reader set and of the dataset's
references, each with its feedback. The reward parses every reply with spaCy's tagger and parser (its
largest cost) and VADER-scores it; the bare rows do only that, on the same texts, with spaCy loaded as a
user loads it (`spacy.load` with the same pipes left out, so thinc's default blis matrix product, where the
reward's parser uses numpy's: rewards/sentences.py). Rates are CPU seconds of this process, best of
`--repeats` interleaved passes, so that load from other processes distorts the comparison as little as
possible. Target: the reward >= 100 replies/s on ~100-word replies (a 32-reply
GRPO step then spends < 0.4 s in it).

The last rows are what a training step sees: every rollout scores its own reply in its runner process, so the
reward runs on all the machine's cores at once. `--processes N` (default: every core) processes each score a
share of the replies one a call, and the rate is replies over wall-clock seconds, beside bare spaCy run the
same way.
"""

import argparse
import json
import multiprocessing as mp
import os
import time

import spacy

from data import DATA_DIR, SPLITS
from data.reader_set import load_reader_set
from rewards import RewardScorer, load_config
from rewards.sentences import PARSER_EXCLUDES

MIN_WORDS, MAX_WORDS = 80, 130


def pairs() -> list[tuple[str, str]]:
    """(feedback, reply) pairs whose reply has 80-130 words."""
    rows = [json.loads(line) for s in SPLITS for line in (DATA_DIR / f"feedback_{s}.jsonl").read_text().splitlines()]
    found = [(r["feedback"], ref["text"]) for r in rows for ref in r["references"]]
    found += [(m.feedback, reply.text) for m in load_reader_set() for reply in m.replies]
    return [(f, reply) for f, reply in found if MIN_WORDS <= len(reply.split()) <= MAX_WORDS]


def bare_spacy(model: str) -> spacy.Language:
    return spacy.load(model, exclude=PARSER_EXCLUDES)


def best_rates(fns: dict, items, repeats: int) -> dict[str, float]:
    """Best-of-`repeats` rate per function in CPU seconds of this process, passes interleaved."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.process_time()
            fn(items)
            best[name] = min(best[name], time.process_time() - start)
    return {name: len(items) / seconds for name, seconds in best.items()}


def _score_share(share, kind: str, ready, start, done) -> None:
    """One process of the parallel rows: load, warm up, wait for the others, then score its share one a call."""
    config = load_config()
    if kind == "reward":
        scorer = RewardScorer(config)
        scorer.score_many(share[:4])
        scorer.clear_feedback_cache()  # a rollout's runner has rarely seen its feedback before
    else:
        nlp = bare_spacy(config.coherence.spacy_model)
        list(nlp.pipe(reply for _, reply in share[:4]))
    ready.release()
    start.wait()
    for feedback, reply in share:
        if kind == "reward":
            scorer(reply, feedback)
        else:
            nlp(reply)
    done.release()


def parallel_rate(items, kind: str, processes: int) -> float:
    """Replies per wall-clock second with `processes` processes each scoring its share (spawned, loaded and
    warmed before the clock starts), as the runners of a training step do."""
    ctx = mp.get_context("spawn")
    ready, done, start = ctx.Semaphore(0), ctx.Semaphore(0), ctx.Event()
    workers = [ctx.Process(target=_score_share, args=(items[k::processes], kind, ready, start, done))
               for k in range(processes)]
    for w in workers:
        w.start()
    for _ in workers:
        ready.acquire()
    began = time.perf_counter()
    start.set()
    for _ in workers:
        done.acquire()
    seconds = time.perf_counter() - began
    for w in workers:
        w.join()
    return len(items) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="processes of the parallel rows (default: every core)")
    args = parser.parse_args()
    data = pairs()
    config = load_config()
    scorer = RewardScorer(config)
    nlp = bare_spacy(config.coherence.spacy_model)
    vader = scorer._sentiment.vader
    scorer.score_many(data[:8])  # load the parser and warm its caches before timing

    def run_vader(items):
        for _, reply in items:
            vader.polarity_scores(reply)

    def run_spacy(items):
        for _ in nlp.pipe((reply for _, reply in items), batch_size=32):
            pass

    def run_reward(items):  # a batch; the feedbacks are analysed already, as in training (G replies per feedback,
        scorer.score_many([(reply, feedback) for feedback, reply in items])  # the same feedbacks every epoch)

    def run_reward_cold(items):  # a batch in which every feedback is new: one more parse per reply here
        scorer.clear_feedback_cache()
        scorer.score_many([(reply, feedback) for feedback, reply in items])

    def run_reward_one_by_one(items):  # as a training rollout scores its one reply
        for feedback, reply in items:
            scorer(reply, feedback)

    rates = best_rates({"vader": run_vader, "spacy": run_spacy, "reward": run_reward, "cold": run_reward_cold,
                        "single": run_reward_one_by_one}, data, args.repeats)
    words = sum(len(reply.split()) for _, reply in data) / len(data)
    print(f"replies: {len(data)} of {MIN_WORDS}-{MAX_WORDS} words (mean {words:.0f}), "
          f"{len({f for f, _ in data})} distinct feedbacks (best of {args.repeats} passes, CPU time)")
    print(f"bare VADER polarity_scores:               {rates['vader']:8.0f} replies/s")
    print(f"bare spaCy nlp.pipe (tagger + parser):    {rates['spacy']:8.0f} replies/s")
    rows = [("reward", "reward, a batch, feedbacks analysed:"), ("cold", "reward, a batch, every feedback new:"),
            ("single", "reward, one reply a call (a rollout):")]
    for name, label in rows:
        print(f"{label:<42}{rates[name]:8.0f} replies/s  {rates[name] / rates['spacy']:.2f} x bare spaCy"
              + ("  (target >= 100 replies/s)" if name == "reward" else ""))
    best = {"spacy": 0.0, "reward": 0.0}
    for _ in range(args.repeats):  # interleaved, best of `--repeats`
        for kind in best:
            best[kind] = max(best[kind], parallel_rate(data, kind, args.processes))
    print(f"{args.processes} processes, one reply a call, wall clock (as a training step's runners score):")
    print(f"  bare spaCy nlp(reply):                  {best['spacy']:8.0f} replies/s")
    print(f"  reward, every feedback new:             {best['reward']:8.0f} replies/s  "
          f"{best['reward'] / best['spacy']:.2f} x bare spaCy  (target >= 100 replies/s)")


if __name__ == "__main__":
    main()
