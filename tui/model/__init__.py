"""The headless application layer: what a screen or a `--format` print shows, built from
parsers, collectors and metrics (screen models, reports, pollers, text plot renderers).

Never imports Textual (an import-linter contract in .importlinter keeps it so): a notebook or
a script can use it, and the printing path of the command line starts without the UI.
"""
