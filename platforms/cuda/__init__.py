"""Platform: cuda."""
