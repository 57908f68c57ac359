"""Shared test fixtures. Importing `al_integration` first applies the product's offline defaults."""

import al_integration  # noqa: F401
