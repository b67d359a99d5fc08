"""Provides text renderers without Textual: braille, box plots, the plotext figures, half blocks, bars."""
