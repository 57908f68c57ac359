"""Glue to Agent Lightning and Mubit: store, policy server, Mubit engine and hook.

Importing any of our packages applies the offline defaults first (see `offline.py`).
"""

from al_integration.offline import apply_offline_defaults

apply_offline_defaults()

# The variable that carries a training run's store-server token to runners on other hosts (execution.py); here,
# so that `runners` can check it before importing agl (seconds of litellm and OpenTelemetry).
STORE_TOKEN_ENV = "AGL_STORE_TOKEN"
