"""Provides readers that turn finished-run files into tidy tables plus findings.

A parser never raises on bad content: it returns what it could read and a list of
`gpuscope.metrics.findings.Finding` saying what it skipped or doubted.
"""
