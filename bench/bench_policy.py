"""Generation and learner throughput of the default policy (SmolLM2-135M-Instruct + LoRA) on this machine,
beside plain Hugging Face `generate` on the same prompts, in one run.

    python bench/bench_policy.py [--policy smollm2|tiny] [--prompts 16] [--max-tokens 128] [--rounds 2] [--json]

What is timed, on the same governed val prompts (the agent's prompt format, 2 helpful lessons each):
- `hf_generate`: the peer a user would pick: `model.generate(do_sample=True, temperature, top_p)` on the
  base model, all prompts in one left-padded batch;
- `engine`: our policy server's engine (`PolicyEngine.generate`, what the runners' requests end in) on the
  base model with fresh LoRA adapters (B = 0, so the same function), one batch with per-row seeds and
  raw logprobs;
- `learner`: one `GRPOLearner.step` with LoRA (forward + backward + AdamW on the adapters, and the reference
  forward with the adapters disabled) on the engine's completions, with made-up group rewards.
Generation rounds alternate hf / engine; each figure keeps its fastest round. Tokens/s count generated (or
trained) response tokens; ratios are ours / HF's.
"""

import al_integration  # noqa: F401  (offline defaults first)

# isort: split

import argparse
import copy
import json
import random
import time

import torch

from agents.prompt import build_messages
from data import load_feedback, load_lessons
from policy.loading import load_model, load_tokenizer, resolve_policy_dir
from policy.lora import add_lora, reference_mode
from policy.server import PolicyEngine, SamplingRow
from policy.tiny_data import governed_feedback
from training.config import REPO_ROOT, load_run_config
from training.grpo import GRPOLearner, Sample


def prompts(n: int) -> list[list[dict]]:
    tasks = [t for t in load_feedback("val") if t["expected_action"] == "answer"][:n]
    governed = governed_feedback(tasks)
    helpful = [lesson.text for lesson in load_lessons() if lesson.helpful]
    rng = random.Random(0)
    return [build_messages(*governed[t["feedback"]], rng.sample(helpful, 2)) for t in tasks]


def hf_generate(model, tokenizer, batch: list[list[int]], max_tokens: int, temperature: float, top_p: float) -> int:
    width = max(map(len, batch))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in batch])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
    out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=temperature, top_p=top_p,
                         max_new_tokens=max_tokens, pad_token_id=pad)
    counted = 0
    for row in out[:, width:].tolist():  # up to and including the end token, as our engine counts
        counted += row.index(tokenizer.eos_token_id) + 1 if tokenizer.eos_token_id in row else len(row)
    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    path = resolve_policy_dir(args.policy, None, tiny_config=REPO_ROOT / "configs/policy_tiny.yaml",
                              smollm2_config=REPO_ROOT / "configs/policy_smollm2.yaml")
    tokenizer = load_tokenizer(path)
    base = load_model(path).eval()
    torch.manual_seed(0)
    run = load_run_config()  # the run's own LoRA and learner settings (configs/oneclick.yaml)
    lora = run.lora
    policy = add_lora(load_model(path), lora)
    engine = PolicyEngine(copy.deepcopy(policy), tokenizer, model_name="policy")  # the engine folds its adapters in
    batch = [engine.prompt_ids(m) for m in prompts(args.prompts)]

    best = {"hf_generate": float("inf"), "engine": float("inf")}
    tokens = {"hf_generate": 0, "engine": 0}
    samples = []
    for r in range(args.rounds):
        torch.manual_seed(r)
        started = time.perf_counter()
        with torch.inference_mode():
            n = hf_generate(base, tokenizer, batch, args.max_tokens, args.temperature, args.top_p)
        seconds = time.perf_counter() - started
        if seconds < best["hf_generate"]:
            best["hf_generate"], tokens["hf_generate"] = seconds, n
        rows = [SamplingRow(p, temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                            seed=1000 * r + i) for i, p in enumerate(batch)]
        started = time.perf_counter()
        samples = engine.generate(rows)
        seconds = time.perf_counter() - started
        if seconds < best["engine"]:
            best["engine"], tokens["engine"] = seconds, sum(len(s.token_ids) for s in samples)

    learner = GRPOLearner(policy, None, run.grpo, pad_token_id=engine.pad_id,
                          reference_mode=lambda: reference_mode(policy), max_completion_length=run.sampling.max_tokens)
    rng = random.Random(0)
    batch_samples = [Sample(str(i // 4), p, s.token_ids, rng.uniform(-1, 1), s.logprobs)
                     for i, (p, s) in enumerate(zip(batch, samples, strict=True))]
    learn_best, learned = float("inf"), 0
    for _ in range(args.rounds):
        started = time.perf_counter()
        metrics = learner.step(batch_samples)
        learn_best = min(learn_best, time.perf_counter() - started)
        learned = metrics["response_tokens"]

    result = {
        "policy": args.policy, "model_dir": str(path), "prompts": len(batch), "max_tokens": args.max_tokens,
        "threads": torch.get_num_threads(), "lora": lora.model_dump(mode="json"),
        "trainable_parameters": sum(p.numel() for p in policy.parameters() if p.requires_grad),
        "hf_generate": {"seconds": best["hf_generate"], "tokens": tokens["hf_generate"],
                        "tokens_per_s": tokens["hf_generate"] / best["hf_generate"]},
        "engine": {"seconds": best["engine"], "tokens": tokens["engine"],
                   "tokens_per_s": tokens["engine"] / best["engine"]},
        "learner": {"seconds": learn_best, "response_tokens": learned, "tokens_per_s": learned / learn_best},
    }
    result["engine_vs_hf_tokens_per_s"] = result["engine"]["tokens_per_s"] / result["hf_generate"]["tokens_per_s"]
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.policy} ({result['trainable_parameters'] / 1e6:.2f}M trainable LoRA parameters), {len(batch)} "
          f"prompts x <= {args.max_tokens} new tokens, {result['threads']} torch threads, best of {args.rounds}")
    for name in ("hf_generate", "engine"):
        f = result[name]
        print(f"  {name:12s} {f['seconds']:6.1f} s  {f['tokens']:5d} tokens  {f['tokens_per_s']:6.1f} tokens/s")
    f = result["learner"]
    print(f"  {'learner':12s} {f['seconds']:6.1f} s  {f['response_tokens']:5d} tokens  {f['tokens_per_s']:6.1f} "
          "tokens/s (fwd + bwd + AdamW + reference fwd)")
    print(f"  engine / HF generate: {result['engine_vs_hf_tokens_per_s']:.2f}x tokens/s")


if __name__ == "__main__":
    main()
