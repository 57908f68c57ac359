"""The OpenAI-compatible policy server, against a real (tiny, randomly initialised) GPT-2 and the real
`openai` client: token ids in vLLM's format, micro-batching, seeded sampling, weight reload, bad requests."""

import json
import threading
import time

import httpx
import openai
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from typer.testing import CliRunner

from policy.server import PolicyEngine, PolicyLoadError, PolicyServer, SamplingRow, cli, sample_next
from policy.tiny import TokenizerConfig, train_tokenizer

MESSAGES = [
    {"role": "system", "content": "Write the research team's reply to this feedback.\nSentiment: neutral"},
    {"role": "user", "content": "The survey sample is small; how was it drawn?"},
]
CORPUS = [m["content"] for m in MESSAGES] + [
    "Thank you for the question about the sample. We will verify the sampling method and report back.",
    "The results are preliminary and the evidence is not yet conclusive.",
] * 3


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny GPT-2 with our tokenizer and chat template, saved in Hugging Face format."""
    torch.manual_seed(0)
    tokenizer = train_tokenizer(CORPUS, TokenizerConfig(vocab_size=300, min_frequency=1))
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=32, n_layer=1, n_head=2,
                        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    path = tmp_path_factory.mktemp("tiny-policy")
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def engine(model_dir):
    return PolicyEngine.from_pretrained(model_dir, model_name="tiny", batch_window_s=0.005)


@pytest.fixture
def server(engine):
    with PolicyServer(engine) as running:
        yield running


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.endpoint, api_key="local", max_retries=0) as c:
        yield c


def test_openai_client_receives_vllm_token_ids_and_logprobs(client, engine):
    response = client.chat.completions.create(
        model="tiny", messages=MESSAGES, max_tokens=12, temperature=1.0, seed=3, logprobs=True, top_logprobs=2
    )
    expected_prompt = list(engine.tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True,
                                                                return_dict=True)["input_ids"])
    # Where agl's AgentOps patch reads them: the response's top-level attribute and choices[0].token_ids.
    assert response.prompt_token_ids == expected_prompt
    assert response.model_extra["prompt_token_ids"] == expected_prompt
    choice = response.choices[0]
    token_ids = choice.token_ids
    assert 1 <= len(token_ids) <= 12
    assert choice.message.content == engine.tokenizer.decode(
        [t for t in token_ids if t != engine.tokenizer.eos_token_id], skip_special_tokens=True
    )
    assert response.usage.prompt_tokens == len(expected_prompt)
    assert response.usage.completion_tokens == len(token_ids)
    content = choice.logprobs.content
    assert [engine.tokenizer.decode([t]) for t in token_ids] == [c.token for c in content]
    assert all(c.logprob <= 0 for c in content)
    assert all(len(c.top_logprobs) == 2 and c.top_logprobs[0].logprob >= c.top_logprobs[1].logprob for c in content)
    # The reported logprob is the raw model's (temperature 1) log-probability of the sampled token.
    with torch.no_grad():
        logits = engine.model(torch.tensor([expected_prompt + token_ids])).logits[0]
    raw = torch.log_softmax(logits[len(expected_prompt) - 1 : -1], dim=-1)
    recomputed = raw.gather(1, torch.tensor(token_ids)[:, None]).squeeze(1)
    assert torch.allclose(recomputed, torch.tensor([c.logprob for c in content]), atol=1e-4)


def test_models_endpoint(client):
    models = client.models.list()
    assert [m.id for m in models.data] == ["tiny"]


def test_concurrent_requests_are_decoded_together(model_dir):
    # A long window that closes as soon as the batch is full: the four requests must start together.
    engine = PolicyEngine.from_pretrained(model_dir, model_name="tiny", max_batch_size=4, batch_window_s=5.0)
    with PolicyServer(engine) as server:
        results: dict[int, dict] = {}

        def ask(i: int) -> None:
            body = {"model": "tiny", "messages": MESSAGES, "max_tokens": 4 + i, "seed": i}
            results[i] = httpx.post(f"{server.endpoint}/chat/completions", json=body, timeout=30).json()

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert engine.decode_runs == 1 and engine.admitted == [4]
    # Each row kept its own max_tokens inside the shared call.
    for i, body in results.items():
        assert len(body["choices"][0]["token_ids"]) <= 4 + i


def test_per_row_max_tokens_and_finish_reason(engine):
    prompt = engine.prompt_ids(MESSAGES)
    rows = [SamplingRow(prompt, max_tokens=2, seed=1), SamplingRow(prompt[3:], max_tokens=9, seed=2)]
    short, long = engine.generate(rows)
    assert engine.decode_runs == 1
    for sample, limit in ((short, 2), (long, 9)):
        assert len(sample.token_ids) <= limit and len(sample.logprobs) == len(sample.token_ids)
        ended = sample.token_ids[-1] in engine.stop_ids
        assert sample.finish_reason == ("stop" if ended else "length")
        assert ended or len(sample.token_ids) == limit


def _raw_logprobs(engine: PolicyEngine, prompt: list[int], token_ids: list[int]) -> torch.Tensor:
    """The sampled tokens' logprobs from one unpadded forward over prompt + reply: what a row must report
    whatever batch it was decoded in."""
    with torch.no_grad():
        logits = engine.model(torch.tensor([prompt + token_ids])).logits[0]
    raw = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
    return raw.gather(1, torch.tensor(token_ids)[:, None]).squeeze(1)


def test_rows_join_a_running_batch_and_leave_it_when_done(model_dir):
    """Continuous batching: a request that arrives while others decode joins their batch between two steps;
    rows that finish leave it. Every row's logprobs still match an unpadded forward of its own sequence, so the
    merged, compacted KV cache and the positions are right."""
    engine = PolicyEngine.from_pretrained(model_dir, model_name="tiny", batch_window_s=0.0)
    prompt = engine.prompt_ids(MESSAGES)
    engine.start()
    try:
        first = [engine.submit([SamplingRow(prompt[i:], max_tokens=m, seed=i)]) for i, m in enumerate((2, 3, 40, 40))]
        deadline = time.monotonic() + 30
        while engine.decode_steps < 5 and time.monotonic() < deadline:
            time.sleep(0.001)
        late = engine.submit([SamplingRow(prompt[5:], max_tokens=20, seed=9), SamplingRow(prompt, max_tokens=20,
                                                                                        seed=10)])
        results = [f.result(timeout=60)[0] for f in first] + late.result(timeout=60)
    finally:
        engine.close()
    assert engine.decode_runs == 1 and engine.admitted[0] == 4 and sum(engine.admitted) == 6
    for sample, (p, limit) in zip(results, [(prompt, 2), (prompt[1:], 3), (prompt[2:], 40), (prompt[3:], 40),
                                            (prompt[5:], 20), (prompt, 20)], strict=True):
        assert 1 <= len(sample.token_ids) <= limit
        assert torch.allclose(_raw_logprobs(engine, p, sample.token_ids), torch.tensor(sample.logprobs), atol=1e-4)


def test_a_weight_swap_waits_for_the_rows_in_flight_and_no_row_joins_meanwhile(model_dir):
    engine = PolicyEngine.from_pretrained(model_dir, model_name="tiny", batch_window_s=0.0)
    prompt = engine.prompt_ids(MESSAGES)
    old = {k: v.clone() for k, v in engine.model.state_dict().items()}
    new = {k: v + 0.5 * torch.randn_like(v) if v.is_floating_point() else v for k, v in old.items()}
    engine.start()
    try:
        running = engine.submit([SamplingRow(prompt, temperature=0, max_tokens=30)])
        while engine.decode_steps < 2:
            time.sleep(0.001)
        swap = threading.Thread(target=engine.load_weights, args=(new,))
        swap.start()
        while not engine._swaps_waiting and swap.is_alive():
            time.sleep(0.001)
        after = engine.submit([SamplingRow(prompt, temperature=0, max_tokens=30)])  # arrives while the swap waits
        swap.join(60)
        before_ids, after_ids = running.result(60)[0].token_ids, after.result(60)[0].token_ids
    finally:
        engine.close()
    assert engine.decode_runs == 2 and engine.weights_version == 1  # the late request did not join the old rows
    engine.model.load_state_dict(old)
    assert _raw_logprobs(engine, prompt, before_ids).tolist() == pytest.approx(running.result()[0].logprobs, abs=1e-4)
    engine.model.load_state_dict(new)
    assert _raw_logprobs(engine, prompt, after_ids).tolist() == pytest.approx(after.result()[0].logprobs, abs=1e-4)


def test_batched_sampling_follows_each_rows_distribution():
    """Inverse-CDF sampling over the batch: each row draws from softmax(logits / its temperature), restricted to
    its top-p nucleus; temperature 0 is greedy."""
    from policy.server import _Pending, _Row

    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]] * 3))
    specs = [SamplingRow([0], temperature=1.0), SamplingRow([0], temperature=1.0, top_p=0.7),
             SamplingRow([0], temperature=0)]
    pending = _Pending(specs)
    rows = [_Row(spec, pending, i, __import__("random").Random(i)) for i, spec in enumerate(specs)]
    counts = torch.zeros(3, 4)
    for _ in range(4000):
        chosen, logprobs, _ = sample_next(logits, rows)
        counts[torch.arange(3), chosen] += 1
    assert torch.allclose(counts[0] / 4000, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.03)
    assert counts[1, 2:].sum() == 0  # outside the 0.7 nucleus ({0.5, 0.3} reaches it)
    assert torch.allclose(counts[1, :2] / 4000, torch.tensor([0.5, 0.3]) / 0.8, atol=0.03)
    assert counts[2].tolist() == [4000, 0, 0, 0]
    assert torch.allclose(logprobs, logits.gather(1, chosen[:, None]).squeeze(1))  # raw logprobs


def test_seeded_sampling_is_deterministic(client):
    def sample(seed: int, n: int = 1) -> list[list[int]]:
        r = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=16, seed=seed, n=n)
        return [c.token_ids for c in r.choices]

    first = sample(11)
    assert sample(11) == first
    assert sample(12) != first
    pair = sample(11, n=2)
    assert pair[0] == first[0] and pair[1] != pair[0]


def test_load_weights_changes_outputs_and_can_restore(client, engine, model_dir, tmp_path):
    def greedy() -> tuple[list[int], str]:
        r = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=10, temperature=0)
        return r.choices[0].token_ids, r.system_fingerprint

    before, fingerprint = greedy()
    original = {k: v.clone() for k, v in engine.model.state_dict().items()}
    torch.manual_seed(1)
    perturbed = {k: v + 0.5 * torch.randn_like(v) if v.is_floating_point() else v for k, v in original.items()}
    assert engine.load_weights(perturbed) == 1
    after, new_fingerprint = greedy()
    assert after != before and new_fingerprint != fingerprint
    assert engine.load_weights(model_dir) == 2  # from a saved model directory
    assert greedy()[0] == before
    torch.save(perturbed, tmp_path / "step.pt")
    engine.load_weights(tmp_path / "step.pt")  # from a weights file
    assert greedy()[0] == after


def test_load_weights_waits_for_generation_in_flight(engine):
    swapped = threading.Event()
    with engine._lock:  # what a generate call holds while it runs
        threading.Thread(target=lambda: (engine.load_weights(engine.model.state_dict()), swapped.set())).start()
        time.sleep(0.2)
        assert not swapped.is_set()
    assert swapped.wait(10) and engine.weights_version == 1


def test_load_weights_rejects_a_different_architecture(engine, tmp_path):
    with pytest.raises(PolicyLoadError, match="do not fit"):
        engine.load_weights({"transformer.wte.weight": torch.zeros(3, 3)})
    with pytest.raises(PolicyLoadError, match="no such weights file"):
        engine.load_weights(tmp_path / "missing.pt")


@pytest.mark.parametrize(
    ("body", "status", "param", "code"),
    [
        ({"model": "gpt-4o", "messages": MESSAGES}, 404, "model", "model_not_found"),
        ({"model": "tiny"}, 400, "messages", None),
        ({"model": "tiny", "messages": []}, 400, "messages", None),
        ({"model": "tiny", "messages": [{"role": "wizard", "content": "hi"}]}, 400, "messages.0.role", None),
        ({"model": "tiny", "messages": MESSAGES, "temperature": 5}, 400, "temperature", None),
        ({"model": "tiny", "messages": MESSAGES, "top_p": 0}, 400, "top_p", None),
        ({"model": "tiny", "messages": MESSAGES, "n": 0}, 400, "n", None),
        ({"model": "tiny", "messages": MESSAGES, "max_tokens": "many"}, 400, "max_tokens", None),
        ({"model": "tiny", "messages": MESSAGES, "top_logprobs": 2}, 400, "top_logprobs", None),
        ({"model": "tiny", "messages": MESSAGES, "max_tokens": 5000}, 400, "messages", "context_length_exceeded"),
        ({"model": "tiny", "messages": MESSAGES, "stream": True}, 422, "stream", "unsupported_parameter"),
    ],
)
def test_bad_requests_get_openai_style_errors(server, body, status, param, code):
    response = httpx.post(f"{server.endpoint}/chat/completions", json=body, timeout=30)
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["param"] == param and error["code"] == code and error["message"]


def test_malformed_json_and_unknown_routes(server, client):
    response = httpx.post(f"{server.endpoint}/chat/completions", content=b"{not json", timeout=30,
                          headers={"content-type": "application/json"})
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]["message"]
    response = httpx.get(f"{server.endpoint}/completions-that-do-not-exist", timeout=30)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="other", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="tiny", messages=MESSAGES, temperature=3)


def test_server_binds_localhost_and_releases_its_port(engine):
    server = PolicyServer(engine).start()
    port = server.port
    assert server.endpoint == f"http://127.0.0.1:{port}/v1"
    assert httpx.get(f"{server.endpoint}/models", timeout=30).status_code == 200
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.endpoint}/models", timeout=2)
    assert not any(t.name in ("policy-server", "policy-batcher") for t in threading.enumerate())


def test_cli_rejects_a_path_that_is_not_a_model(tmp_path):
    result = CliRunner().invoke(cli, ["--model", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a local Hugging Face model directory" in result.output and "Traceback" not in result.output


def test_agl_tracer_records_the_token_ids_and_logprobs(client, engine):
    """agl's AgentOps patch (what the default tracer records on the `openai.chat.completion` span) reads the
    ids and logprobs from our response unchanged."""
    import agentlightning  # noqa: F401  (after al_integration: offline defaults first)
    import agentops.instrumentation.providers.openai.wrappers.chat as agentops_chat
    from agentlightning.instrumentation import agentops as agl_agentops

    patched_here = agl_agentops._original_handle_chat_attributes is None  # leave another user's patch in place
    assert agl_agentops.instrument_agentops()
    try:
        response = client.chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=6, logprobs=True)
        attributes = agentops_chat.handle_chat_attributes(kwargs={"model": "tiny", "messages": MESSAGES},
                                                          return_value=response)
    finally:
        if patched_here:
            agl_agentops.uninstrument_agentops()
    assert attributes["prompt_token_ids"] == engine.prompt_ids(MESSAGES)
    assert attributes["response_token_ids"] == response.choices[0].token_ids
    recorded = json.loads(attributes["logprobs.content"])
    assert [r["logprob"] for r in recorded] == [c.logprob for c in response.choices[0].logprobs.content]
