"""Provides widgets shared by several screens."""
