"""isthmus: communication layer and coupler for parallel Earth-system models (Python side).

The command line interface is ``python -m isthmus`` (or ``bin/isthmus``); each subcommand is a
module of ``isthmus.commands`` that defines ``register(subparsers)``.

The coupler's Python API (docs/python.md) is :class:`Coupler`, :class:`Partition` and
:class:`Field` over the C library (numpy arrays, mpi4py communicators); ``isthmus.pyoasis`` runs
scripts written for OASIS3-MCT 5.0's pyoasis unchanged. :func:`generate_weights` computes
remapping weights in SCRIP format (docs/weights.md).
"""

from .coupler import (Coupler, Direction, ErrorCode, Field, Info, IsthmusError, Partition,
                      Received)
from .weights import generate_weights

__version__ = "0.1.0"

__all__ = ["Coupler", "Partition", "Field", "Info", "Direction", "ErrorCode", "IsthmusError",
           "Received", "generate_weights"]
