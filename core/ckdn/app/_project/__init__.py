"""The project's own files: the baseline, the config lock, where the config is."""
