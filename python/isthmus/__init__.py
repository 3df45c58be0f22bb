"""isthmus: communication layer and coupler for parallel Earth-system models (Python side).

The command line interface is ``python -m isthmus`` (or ``bin/isthmus``); each subcommand is a
module of ``isthmus.commands`` that defines ``register(subparsers)``.
"""

__version__ = "0.1.0"
