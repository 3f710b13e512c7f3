"""TODO(placeholder): not implemented yet."""
