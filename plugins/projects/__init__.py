"""Project-type plugins: each returns gate commands as data, never runs them."""
