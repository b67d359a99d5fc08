"""Provides live sources: host, processes, GPUs and job scope (later issues)."""
