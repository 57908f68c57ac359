"""Throughput of the policy server on the default policy: one client at a time vs concurrent clients.

    python bench/bench_policy_server.py [--requests 32] [--concurrency 16]

Builds the default policy first if it is not cached. Prints replies/s, generated tokens/s and the mean rows
per decode step (the continuous batching at work).
"""

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import openai

import al_integration  # noqa: F401  (offline defaults first)
from agents.prompt import build_messages
from data import load_feedback, load_lessons
from policy.server import PolicyEngine, PolicyServer
from policy.tiny import ensure_default_policy, load_policy_config
from policy.tiny_data import governed_feedback


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    sampling = load_policy_config().sampling
    lessons = [lesson.text for lesson in load_lessons()][:3]
    tasks = [t for t in load_feedback("val") if t["expected_action"] == "answer"]
    governed = governed_feedback(tasks)  # redacted text and sentiment label, as the agent sees them
    prompts = [build_messages(*governed[tasks[i % len(tasks)]["feedback"]], lessons) for i in range(args.requests)]

    engine = PolicyEngine.from_pretrained(ensure_default_policy(), model_name="policy")
    with PolicyServer(engine) as server, openai.OpenAI(base_url=server.endpoint, api_key="local") as client:

        def ask(i: int) -> int:
            response = client.chat.completions.create(
                model="policy", messages=prompts[i], temperature=sampling.temperature, top_p=sampling.top_p,
                max_tokens=sampling.max_tokens, seed=i,
            )
            return len(response.choices[0].token_ids)

        ask(0)  # warm-up
        for workers in (1, args.concurrency):
            steps_before, rows_before = engine.decode_steps, engine.row_steps
            started = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:
                tokens = sum(pool.map(ask, range(args.requests)))
            seconds = time.perf_counter() - started
            steps = engine.decode_steps - steps_before
            print(
                f"concurrency {workers:>2}: {args.requests / seconds:6.2f} replies/s, "
                f"{tokens / seconds:7.0f} tokens/s, "
                f"{steps} decode steps (mean {(engine.row_steps - rows_before) / steps:.1f} rows)"
            )


if __name__ == "__main__":
    main()
