"""Extra runner hosts, played on one machine: `runners` (AGL_CURRENT_ROLE=runner) attaches to a training run's
store server at AGL_SERVER_HOST:AGL_SERVER_PORT and executes some of its rollouts, with a Mubit both reach
(our engine served on its own, as the hosted service would be)."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else "exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port} after {timeout} s")


def spans_by_service(db: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        for data, in conn.execute("SELECT data FROM spans"):
            service = json.loads(data)["resource"]["attributes"].get("service.name", "")
            counts[service] = counts.get(service, 0) + 1
    return counts


def test_runners_on_another_host_execute_rollouts_of_the_run(tmp_path):
    mubit_port, store_port, key = free_port(), free_port(), "test-key"
    mubit_config = tmp_path / "mubit.yaml"
    mubit_config.write_text((REPO / "configs" / "mubit.yaml").read_text()
                            .replace("endpoint: null", f"endpoint: http://127.0.0.1:{mubit_port}"))
    run_config = tmp_path / "oneclick.yaml"
    run_config.write_text((REPO / "configs" / "oneclick.yaml").read_text()
                          .replace("config: configs/mubit.yaml", f"config: {mubit_config}")
                          .replace("  n_runners: 2\n", "  n_runners: 1\n"))  # the smoke section's
    env = {**os.environ, "MUBIT_API_KEY": key, "AGL_SERVER_HOST": "127.0.0.1", "AGL_SERVER_PORT": str(store_port),
           "AGL_STORE_TOKEN": "the-runs-store-token"}  # the training run's store server admits only this token
    cli = [sys.executable, "-m", "training.train_feedback"]
    procs = []
    try:
        mubit = subprocess.Popen([sys.executable, "-m", "al_integration.mubit_local", "serve", "--db",
                                  str(tmp_path / "mubit.db"), "--port", str(mubit_port)], env=env,
                                 cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(mubit)
        wait_for_port(mubit_port, mubit)
        # The remote runner starts first and waits for the store server: a smoke run on the tiny policy is over
        # in seconds, before a runner started after it would have connected.
        remote = subprocess.Popen([*cli, "runners", "--n-runners", "1", "--config", str(run_config), "--log-dir",
                                   str(tmp_path / "remote")], cwd=REPO,
                                  env={**env, "AGL_CURRENT_ROLE": "runner", "OTEL_SERVICE_NAME": "remote-runner"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(remote)
        training = subprocess.Popen([*cli, "oneclick", "--smoke", "--steps", "8", "--config", str(run_config),
                                     "--output-dir", str(tmp_path / "run")], cwd=REPO, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(training)
        wait_for_port(store_port, training)
        out, err = training.communicate(timeout=600)
        assert training.returncode == 0, err[-3000:]
        assert json.loads(out.strip().splitlines()[-1])["steps"] == 8
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=60)
    services = spans_by_service(tmp_path / "run" / "store.db")
    assert services.get("remote-runner", 0) > 0, services  # rollouts ran on the "other host"
    assert services.get("unknown_service", 0) > 0, services  # and on the training host's own runner


def test_runners_need_the_agl_variables_and_a_shared_mubit():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGL_", "MUBIT_"))}
    proc = subprocess.run([sys.executable, "-m", "training.train_feedback", "runners"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "set AGL_CURRENT_ROLE=runner and AGL_SERVER_HOST" in proc.stderr
    env.update({"AGL_CURRENT_ROLE": "runner", "AGL_SERVER_HOST": "127.0.0.1", "AGL_SERVER_PORT": "4747"})
    proc = subprocess.run([sys.executable, "-m", "training.train_feedback", "runners"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "set AGL_STORE_TOKEN to the token the training run was started with" in proc.stderr
    env["AGL_STORE_TOKEN"] = "the-runs-store-token"
    proc = subprocess.run([sys.executable, "-m", "training.train_feedback", "runners"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "needs a Mubit every host reaches" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
