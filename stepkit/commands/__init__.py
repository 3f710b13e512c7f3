"""One module per CLI command; each has ``run(args) -> exit code``."""
