"""The fix rules both fix loops give the coder (the step's and the built-in coder's own)."""

FIX_RULES = "Make the minimal fix, no refactoring. Regressions caused by this change are in scope."
