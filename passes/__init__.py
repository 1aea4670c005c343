"""Transformation passes: each a pure ``Program -> Program`` unit with a legality check
separate from the rewrite and a docstring stating what it requires and guarantees."""
