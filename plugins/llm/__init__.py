"""LLM engines and the model-facing tools (imported lazily by the stages)."""
