"""Evidence condensers: one parser per tool behind stepkit_condense_output."""
