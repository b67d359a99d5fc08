"""Provides the generic views of one file: table, log, Markdown, image, PDF."""
