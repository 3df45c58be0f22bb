"""Remapping weights from Python: :func:`generate_weights` over an mpi4py communicator.

The same generator as ``isthmus weights`` and the coupler's SCRIPR (docs/weights.md), through the
C library's ``isthmus_weights_generate``::

    from mpi4py import MPI
    import isthmus
    made = isthmus.generate_weights("grids.nc:torc", "grids.nc:lmdz", "conservative,nearest",
                                    "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc",
                                    options={"normalization": "fracnnei"}, comm=MPI.COMM_WORLD)
"""

import ctypes
import os
from typing import Any, Mapping, Optional, Union

from .coupler import IsthmusError, _fortran_handle, _text, load_library

PathLike = Union[str, "os.PathLike[str]"]


def _signatures(lib: ctypes.CDLL) -> None:
    lib.isthmus_context_create_f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    lib.isthmus_context_create_f.restype = ctypes.c_int
    lib.isthmus_context_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.isthmus_context_destroy.restype = ctypes.c_int
    lib.isthmus_last_error.argtypes = [ctypes.c_void_p]
    lib.isthmus_last_error.restype = ctypes.c_char_p
    lib.isthmus_weights_generate.argtypes = [ctypes.c_void_p] + [ctypes.c_char_p] * 5 + [
        ctypes.POINTER(ctypes.c_int)]
    lib.isthmus_weights_generate.restype = ctypes.c_int


def generate_weights(src_grid: PathLike, dst_grid: PathLike, method: str, out: PathLike, *,
                     options: Optional[Mapping[str, Any]] = None, comm: Any = None,
                     library: Optional[PathLike] = None) -> bool:
    """Writes the SCRIP weights file ``out`` from ``src_grid`` to ``dst_grid``.

    Collective over ``comm`` (an mpi4py communicator; default ``MPI.COMM_WORLD``): each rank
    computes the links of a share of the destination points, and the file has the same bits at
    any rank count. Grids: a SCRIP grid file, a CF file with lon/lat bounds, or OASIS's
    ``"DIR/grids.nc:NAME"``. ``method``: the interpolation stack, e.g.
    ``"conservative,bilinear,creep"``. ``options``: ``normalization`` (destarea, fracarea,
    fracnnei), ``neighbours``, ``variance``, ``order``, ``masks`` (isthmus, or oasis: SCRIP's mask
    rules, as the coupler's SCRIPR uses them; docs/weights.md).

    Returns True if the file was written, False if an up-to-date file was already there (one
    isthmus made from the same grids, stack and options, or one another tool made). Raises
    :class:`IsthmusError` (the same on every rank) naming what is wrong.
    """
    from mpi4py import MPI  # initialises MPI before the library uses it

    lib = load_library(library)
    _signatures(lib)
    ctx = ctypes.c_void_p()
    rc = lib.isthmus_context_create_f(_fortran_handle(comm if comm is not None else MPI.COMM_WORLD),
                                      ctypes.byref(ctx))
    if rc != 0:
        raise IsthmusError(rc, f"isthmus: generate_weights: no context ({rc})")
    try:
        words = " ".join(f"{k}={v}" for k, v in (options or {}).items())
        made = ctypes.c_int(0)
        rc = lib.isthmus_weights_generate(ctx, os.fsencode(src_grid), os.fsencode(dst_grid),
                                          method.encode(), words.encode(), os.fsencode(out),
                                          ctypes.byref(made))
        if rc != 0:
            raise IsthmusError(rc, _text(lib.isthmus_last_error(ctx)) or
                               f"isthmus_weights_generate failed ({rc})")
        return bool(made.value)
    finally:
        lib.isthmus_context_destroy(ctypes.byref(ctx))
