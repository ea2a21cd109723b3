"""Scenarios, dialogues, answer formats, balance and export (built in a later issue)."""
