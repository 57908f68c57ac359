"""The training CLI, the dataset loader, the GRPO algorithm, the policy model and distributed launch."""

import al_integration  # noqa: F401  (applies the offline defaults before anything else is imported)
