"""Provides the watch screen and the panes and dialogs only it uses."""
