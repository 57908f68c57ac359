"""Shared test fixtures. Importing `al_integration` first applies the product's offline defaults."""

import json
from pathlib import Path

import pytest  # noqa: E402
import torch  # noqa: E402

import al_integration  # noqa: F401
from data import DATA_DIR, SPLITS


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run faster on one thread, and torch's OpenMP threads spin-wait: with another process on
    the second core a 2-thread step of a tiny model took 5-10x longer (docs/policy.md)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _injected_values() -> set[str]:
    values = set()
    for split in SPLITS:
        for line in (DATA_DIR / f"feedback_{split}.jsonl").read_text().splitlines():
            values |= {p["value"] for p in json.loads(line)["pii"] if p["type"] != "LOCATION"}
    return values


@pytest.fixture
def assert_no_raw_pii():
    """Checks that a run directory holds none of the personal data injected into the dataset, in any file."""

    def check(run_dir: Path) -> None:
        values = [v.encode() for v in _injected_values()]
        files = [p for p in run_dir.rglob("*") if p.is_file()]
        assert files
        for path in files:
            data = path.read_bytes()
            leaked = [v.decode() for v in values if v in data]
            assert not leaked, f"{path} holds raw personal data: {leaked[:3]}"

    return check


@pytest.fixture
def make_unwritable():
    """A context manager that makes a directory unwritable for this test's processes: chmod for a normal user,
    `chattr +i` for root (whom permissions do not stop). Skips the test where neither works."""
    import contextlib
    import os
    import shutil
    import subprocess
    import tempfile

    @contextlib.contextmanager
    def unwritable(path: Path):
        root = os.geteuid() == 0
        if root and not shutil.which("chattr"):
            pytest.skip("root ignores permissions and chattr is missing")
        if root:
            locked = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        else:
            path.chmod(0o555)
            locked = True
        try:
            try:
                tempfile.NamedTemporaryFile(dir=path).close()
                writable = True
            except OSError:
                writable = False
            if not locked or writable:
                pytest.skip(f"cannot make {path} unwritable on this file system")
            yield path
        finally:
            if root:
                subprocess.run(["chattr", "-i", str(path)], capture_output=True)
            else:
                path.chmod(0o755)

    return unwritable
