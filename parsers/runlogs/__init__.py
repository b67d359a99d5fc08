"""Provides the run-log readers: one row per run from the logs jobs wrote (seed, MLPerf, ReFrame, sacct, tables)."""
