"""Observers: the terminal progress display.  (The JSONL event log is written
by the engine through the run store, not by an observer.)"""
