"""Provides kernel efficiency: roofline tables, rankings, runs, timelines and GPU peaks."""
