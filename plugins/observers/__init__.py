"""Observers: the JSONL event log and the terminal progress display."""
