"""The Mubit control client the credit loop uses: the adapter's client over a patched SDK client.

`mubit-integration-base` 0.6.0 calls `sdk.record_step_outcome({...})` with a positional payload dict,
but `mubit.Client.record_step_outcome` (mubit-sdk 0.13.x) is keyword-only, so
`MubitRewardEmitter.emit_step_outcome` raises `TypeError` before anything is sent. The subclass below
accepts that dict and sends it unchanged through the SDK's raw-payload route
(`client.advanced.record_step_outcome`), which posts the same body to `/v2/control/step_outcome`.
"""

from __future__ import annotations

import warnings
from typing import Any

from mubit import Client
from mubit_agent_lightning import MubitControlClient

# mubit-integration-base 0.6.0 calls `client.query()` / `client.ingest()`, which mubit-sdk 0.13
# deprecates in favour of `client.advanced.*` with a warning on every call. Nothing to act on here.
warnings.filterwarnings(
    "ignore", message=r"client\.\w+\(\) is moving to client\.advanced", category=DeprecationWarning
)


class StepOutcomeCompatClient(Client):
    """`mubit.Client` whose `record_step_outcome` also takes the positional payload the adapter passes."""

    def record_step_outcome(self, payload: dict[str, Any] | None = None, /, **kwargs: Any) -> Any:
        if payload is not None:
            return self.advanced.record_step_outcome(payload)
        return super().record_step_outcome(**kwargs)


def make_sdk_client(endpoint: str, api_key: str, *, timeout_ms: int = 5000) -> StepOutcomeCompatClient:
    """The SDK client over HTTP (no gRPC attempt), with the workaround and a bounded timeout per call."""
    return StepOutcomeCompatClient(
        endpoint=endpoint.rstrip("/"), api_key=api_key, transport="http", timeout_ms=timeout_ms
    )


def make_control_client(
    endpoint: str, api_key: str, *, timeout_ms: int = 5000, sdk: Client | None = None
) -> MubitControlClient:
    """The adapter's `MubitControlClient` (Agent Lightning defaults) over the patched SDK client."""
    sdk = sdk or make_sdk_client(endpoint, api_key, timeout_ms=timeout_ms)
    return MubitControlClient(endpoint=endpoint, api_key=api_key, sdk_client=sdk)
