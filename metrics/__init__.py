"""Provides gpuscope's vocabulary and math: pure, no I/O beyond text rendering, no UI."""
