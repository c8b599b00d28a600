"""Small bundled datasets and their loaders."""
