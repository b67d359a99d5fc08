"""Provides a job's verdicts and report, and the one view of a job across its nodes."""
