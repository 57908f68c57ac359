"""Who may use an agl LightningStoreServer: ASGI middlewares on its FastAPI app.

- `ReadOnlyGuard`: a store served for viewing (`python -m al_integration.store serve`) answers every
  request that would change it with 403 JSON, instead of agl's 500 with a traceback in the body.
- `TokenGuard`: a training run's store server serves its API only under `/<token>/...`, an address that
  only the run's own runners are given (in memory, never on a command line or in a file). Any other
  local process that finds the port gets 403. The token is part of the URL rather than a header so that
  both agl's HTTP client and the runners' OpenTelemetry exporter (`<root>/v1/traces`) carry it unchanged.
"""

from __future__ import annotations

import hmac

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

# agl's launcher probes this path (without any token) to know that the server is up; it reveals nothing.
HEALTH_PATH = "/v1/agl/health"
# POST routes of agl's server that only read: the paginated searches and the wait for rollouts.
_READING_POSTS = ("/v1/agl/waits/rollouts",)


def _refuse(detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail, "error_type": "Forbidden"}, status_code=403)


def is_write(method: str, path: str) -> bool:
    """Whether a request to agl's store server would change the store."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return False
    return not (method == "POST" and (path.endswith("/search") or path in _READING_POSTS))


class ReadOnlyGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_write(scope["method"], scope["path"]):
            where = f"{scope['method']} {scope['path']}"
            await _refuse(f"{where}: this store file is served read-only; nothing can be written")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class TokenGuard:
    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token or "/" in token:
            raise ValueError("the store token must be a non-empty string without '/'")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        first, _, rest = path.lstrip("/").partition("/")
        if hmac.compare_digest(first.encode(), self._token):
            inner = "/" + rest
            await self.app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)
            return
        if path == HEALTH_PATH and scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        await _refuse("this store server accepts requests only from its own run's runners")(scope, receive, send)


def token_root(host: str, port: int, token: str) -> str:
    """The server address to give a runner's `LightningStoreClient` (it appends `/v1/agl/...`)."""
    return f"http://{host}:{port}/{token}"
