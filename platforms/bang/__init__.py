"""Platform: bang."""
