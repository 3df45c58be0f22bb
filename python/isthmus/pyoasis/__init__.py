"""OASIS3-MCT 5.0's Python interface (pyoasis) over isthmus: scripts written for pyoasis run
unchanged. ::

    import pyoasis                      # with python/isthmus/pyoasis/shim on PYTHONPATH,
    from pyoasis import OASIS           # or: import isthmus.pyoasis as pyoasis

    comp = pyoasis.Component("ocean")   # reads ./namcouple
    part = pyoasis.ApplePartition(offset, size)
    sst = pyoasis.Var("O_SST", part, OASIS.OUT)
    comp.enddef()
    sst.put(date, pyoasis.asarray(values))
    del comp                            # terminates

What it covers and what not: docs/python.md.
"""

import sys as _sys

from .checktypes import Array, asarray, check_types
from .component import (Component, get_debug, global_except_hook, oasis_abort, pyoasis_abort,
                        set_debug, terminate)
from .exception import OasisException, PyOasisException
from .grid import Grid
from .parameters import OASIS, OasisParameters
from .partition import (ApplePartition, BoxPartition, CubePartition, OrangePartition,
                        Partition, PointsPartition, SerialPartition)
from .var import Var

__all__ = ["Component", "Partition", "SerialPartition", "ApplePartition", "BoxPartition",
           "OrangePartition", "PointsPartition", "CubePartition", "Var", "Grid",
           "OasisParameters", "OASIS", "OasisException", "PyOasisException", "asarray", "Array",
           "check_types", "terminate", "oasis_abort", "pyoasis_abort", "set_debug", "get_debug",
           "install"]


def install() -> None:
    """Makes ``import pyoasis`` (and its submodules) give this module, in this process."""
    _sys.modules["pyoasis"] = _sys.modules[__name__]
    for name, module in list(_sys.modules.items()):
        if name.startswith(__name__ + "."):
            _sys.modules["pyoasis" + name[len(__name__):]] = module


# pyoasis's rule: an uncaught exception on one rank aborts the MPI run rather than leave the
# other ranks waiting for ever
_sys.excepthook = global_except_hook
