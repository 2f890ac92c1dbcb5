"""Helpers every layer above the core may use: the environment, locations and paths, devices, FLOPs, progress, JSON
Lines, optional packages, spaCy pipelines."""
