"""Provides the browser: the tree, the preview, and what it opens."""
