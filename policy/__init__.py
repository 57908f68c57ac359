"""The policy model: the tiny scratch build (`policy.tiny`), its warm-start data (`policy.tiny_data`) and the
OpenAI-compatible policy server (`policy.server`), an inference engine that training, eval and the CLI share."""
