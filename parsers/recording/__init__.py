"""Provides the recording format, in one place: its schema, its column readings, and its reader."""
