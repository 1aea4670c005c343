"""Platform: hip."""
