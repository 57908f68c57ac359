"""Helpers every layer shares, below all of them: YAML config loading, the JSONL line reader, safe file writes
and the one sentiment labeller. Imports nothing of ours (DESIGN.md: shared helpers exist once, in the lowest
package that needs them)."""
