"""Provides the app's screens, one module per screen."""
