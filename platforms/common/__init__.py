"""Shared C-family machinery for the platform front-ends, back-ends and emulators."""
