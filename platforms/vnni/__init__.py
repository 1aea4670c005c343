"""Platform: vnni."""
