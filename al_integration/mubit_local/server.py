"""Run the engine: in-process on a background thread (training's default) or in the foreground (CLI)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import uvicorn

from al_integration.mubit_local.app import create_app
from al_integration.mubit_local.ranking import RankingWeights
from al_integration.mubit_local.storage import MemoryStore

logger = logging.getLogger(__name__)
DEFAULT_HOST = "127.0.0.1"


def _uvicorn_config(app, host: str, port: int) -> uvicorn.Config:
    # lifespan off: the app has no startup work; access log off: one line per request is noise.
    return uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="off")


class EmbeddedMubit:
    """The engine on a free port in a daemon thread of this process; `stop()` shuts it down cleanly.

    Use as a context manager, or `start()` / `stop()`. `endpoint` is the base URL to give the SDK.
    """

    def __init__(
        self,
        db_path: str | Path,
        *,
        api_key: str = "",
        host: str = DEFAULT_HOST,
        port: int = 0,
        weights: RankingWeights | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.api_key = api_key
        self.host = host
        self.port = port
        self.weights = weights or RankingWeights()
        self.store: MemoryStore | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10.0) -> EmbeddedMubit:
        if self.running:
            return self
        self.store = MemoryStore(self.db_path, self.weights)
        # Bind first (port 0 = a free port chosen by the OS), so there is no race for the port.
        self._socket = socket.create_server((self.host, self.port))
        self.port = self._socket.getsockname()[1]
        app = create_app(self.store, self.api_key)
        self._server = uvicorn.Server(_uvicorn_config(app, self.host, self.port))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="mubit-local", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mubit-local engine did not start on {self.endpoint}")
            time.sleep(0.01)
        logger.info("mubit-local engine serving %s from %s", self.endpoint, self.db_path)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self._socket is not None:
            self._socket.close()
        if self.store is not None:
            self.store.close()
        self._server = self._thread = self._socket = self.store = None

    def __enter__(self) -> EmbeddedMubit:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(
    db_path: str | Path, *, host: str = DEFAULT_HOST, port: int = 3000, api_key: str = "",
    weights: RankingWeights | None = None,
) -> None:
    """Serve in the foreground until interrupted (Ctrl-C / SIGTERM). Raises OSError if the port is taken."""
    store = MemoryStore(db_path, weights)
    try:
        with socket.create_server((host, port)) as listener:
            uvicorn.Server(_uvicorn_config(create_app(store, api_key), host, port)).run(sockets=[listener])
    finally:
        store.close()
