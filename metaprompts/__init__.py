"""Prompt templates (data files), one per pass, plus per-platform knowledge snippets."""
