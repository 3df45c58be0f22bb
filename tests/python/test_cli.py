"""The isthmus command line: subcommands are discovered, and a bare call explains itself."""

import os
import subprocess
import sys

SOURCE = os.environ.get("ISTHMUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
    return subprocess.run([sys.executable, "-m", "isthmus", *args], capture_output=True, text=True, env=env)


def test_bare_call_prints_usage_and_fails():
    r = run()
    assert r.returncode == 2
    assert "usage: isthmus" in r.stderr


def test_unknown_command_is_rejected_by_name():
    r = run("no-such-command")
    assert r.returncode == 2
    assert "invalid choice: 'no-such-command'" in r.stderr


def test_every_command_module_registers_a_parser():
    import pkgutil

    sys.path.insert(0, os.path.join(SOURCE, "python"))
    import isthmus.commands
    from isthmus.cli import build_parser

    names = [m.name for m in pkgutil.iter_modules(isthmus.commands.__path__)]
    help_text = build_parser().format_help()
    for name in names:
        assert name in help_text, f"command module {name} did not register a subcommand"
