"""Scoring, slices and reports (built in a later issue)."""
