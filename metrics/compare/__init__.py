"""Comparing a baseline run with a candidate (gpuscope diff): matching, ratios, noise tests."""
