"""Shared test fixtures. Importing `al_integration` first applies the product's offline defaults."""

import pytest  # noqa: E402
import torch  # noqa: E402

import al_integration  # noqa: F401


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run faster on one thread, and torch's OpenMP threads spin-wait: with another process on
    the second core a 2-thread step of a tiny model took 5-10x longer (docs/policy.md)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
