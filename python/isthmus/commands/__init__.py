"""Subcommands of the isthmus CLI, one module each (see isthmus.cli)."""
