"""Provides the `gpuscope` command line: the parser, the study and live commands, and how they print."""
