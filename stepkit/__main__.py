from stepkit.cli import entry

entry()
