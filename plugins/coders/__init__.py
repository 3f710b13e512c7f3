"""Coders and reviewers behind stepkit_implement and stepkit_review."""
