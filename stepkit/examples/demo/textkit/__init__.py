"""textkit: small text helpers."""

from textkit.counting import word_count

__all__ = ["word_count"]
