"""Provides everything Textual: the app, screens, widgets, styles and the command line."""
