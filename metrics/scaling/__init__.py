"""Provides the scaling analysis: series, speedup and efficiency, fits and the checks that keep a point honest."""
