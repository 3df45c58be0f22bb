"""The ``isthmus`` command: subcommands are discovered from the modules of isthmus.commands.

A command module defines ``register(subparsers)``, which adds its parser and sets
``func=callable(args) -> int`` as a default. Adding a command never touches this file.
"""

import argparse
import importlib
import pkgutil
import sys

import isthmus.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="isthmus",
        description="isthmus: coupling and communication for parallel Earth-system models",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(isthmus.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"isthmus.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)
