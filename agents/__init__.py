"""The governance stage and the @agl.rollout feedback agent."""

import al_integration  # noqa: F401  (applies the offline defaults before anything else is imported)
