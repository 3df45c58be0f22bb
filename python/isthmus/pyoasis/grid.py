"""pyoasis's ``Grid``: OASIS's grid files (grids.nc, masks.nc, areas.nc, fracs.nc) written
through isthmus's grid writers (``isthmus_grids_write_*``) into the current directory."""

from __future__ import annotations

import ctypes
from typing import Optional

import numpy

from ..coupler import load_library
from .checktypes import check_types
from .exception import OasisException, PyOasisException
from .partition import Partition

_ERRSIZE = 1024


class Grid:
    """A grid declared to OASIS and written to grids.nc, masks.nc, areas.nc (and fracs.nc).

    Without ``partition`` the arrays are global, Fortran-ordered ``(nx_global,
    ny_global[, corners])``, as pyoasis takes them, and the calling process writes them
    (OASIS's rule: call it on one process of the component). With ``partition`` every process
    of the component passes its values at the partition's points (in its order; corners as
    ``(points, corners)``) and the component's first process writes the gathered grid
    (OASIS3-MCT 4.0's decomposed grid writing): then every process makes the same calls.

    :param str cgrid: grid name
    :param int nx_global: global x size of the grid
    :param int ny_global: global y size of the grid
    :param numpy.ndarray lon: longitudes of the cell centres
    :param numpy.ndarray lat: latitudes of the cell centres
    :param Partition partition: the partition whose points the arrays hold, or None
    """

    def __init__(self, cgrid: str, nx_global: int, ny_global: int, lon: numpy.ndarray,
                 lat: numpy.ndarray, partition: Optional[Partition] = None) -> None:
        check_types([str, int, int, numpy.ndarray, numpy.ndarray, Partition],
                    [cgrid, nx_global, ny_global, lon, lat, partition])
        if len(cgrid) == 0:
            raise PyOasisException("Grid name empty.")
        self._lib = load_library()
        self._partition = None
        self._first = True  # this process writes
        if partition is not None:
            native = getattr(partition, "_partition", None)
            if native is None:
                raise PyOasisException(f"Grid {cgrid}: the partition is not defined (an "
                                       "uncoupled component defines none)")
            self._partition = native
            self._first = native.coupler.local_comm.rank == 0
        self._cgrid = cgrid
        self._nx = nx_global
        self._ny = ny_global
        for fn, argtypes in (("isthmus_grids_write_centers", [ctypes.c_void_p] * 2),
                             ("isthmus_grids_write_corners",
                              [ctypes.c_int] + [ctypes.c_void_p] * 2),
                             ("isthmus_grids_write_mask", [ctypes.c_void_p]),
                             ("isthmus_grids_write_areas", [ctypes.c_void_p]),
                             ("isthmus_grids_write_fractions", [ctypes.c_void_p])):
            getattr(self._lib, fn).argtypes = ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                                ctypes.c_int] + argtypes +
                                               [ctypes.c_char_p, ctypes.c_int64])
        self._write("isthmus_grids_write_centers", self._values(lon, "lon"),
                    self._values(lat, "lat"))

    def _values(self, a: numpy.ndarray, what: str, per_point: int = 1,
                dtype=numpy.float64) -> Optional[numpy.ndarray]:
        if self._partition is not None:
            # this process's points, gathered for the first process (None elsewhere)
            n = self._partition.local_size
            if a.size != n * per_point:
                raise PyOasisException(f"Grid {self._cgrid}: {what} has {a.size} values, expected "
                                       f"the partition's {n} points here" +
                                       (f" x {per_point}" if per_point > 1 else ""))
            blocks = numpy.asarray(a, dtype=numpy.float64).reshape(n, per_point, order="F")
            parts = [self._partition.gather(blocks[:, k], self._first, self._nx * self._ny)
                     for k in range(per_point)]
            if not self._first:
                return None
            whole = numpy.concatenate(parts)
            return numpy.rint(whole).astype(dtype) if dtype != numpy.float64 else whole
        if a.size != self._nx * self._ny * per_point:
            raise PyOasisException(f"Grid {self._cgrid}: {what} has {a.size} values, expected "
                                   f"{self._nx} x {self._ny}" +
                                   (f" x {per_point}" if per_point > 1 else ""))
        return numpy.ascontiguousarray(a.ravel(order="F"), dtype=dtype)

    def _write(self, fn: str, *arrays, nc: Optional[int] = None) -> None:
        if not self._first:
            return  # the component's first process writes the gathered grid
        err = ctypes.create_string_buffer(_ERRSIZE)
        args = [None, self._cgrid.encode(), self._nx, self._ny]
        if nc is not None:
            args.append(nc)
        args += [a.ctypes.data for a in arrays] + [err, _ERRSIZE]
        rc = getattr(self._lib, fn)(*args)
        if rc != 0:
            raise OasisException(f"Error in writing grid {self._cgrid}", rc,
                                 err.value.decode(errors="replace"))

    def set_corners(self, clo: numpy.ndarray, cla: numpy.ndarray) -> None:
        """Corner longitudes and latitudes, shape ``(nx, ny, corners)``."""
        check_types([numpy.ndarray, numpy.ndarray], [clo, cla])
        points = self._partition.local_size if self._partition is not None else self._nx * self._ny
        nc = clo.size // max(points, 1)
        if self._partition is not None:  # every process must know it: the first one's
            nc = self._partition.coupler.local_comm.bcast(nc, root=0)
        self._write("isthmus_grids_write_corners", self._values(clo, "clo", nc),
                    self._values(cla, "cla", nc), nc=nc)

    def set_mask(self, mask: numpy.ndarray, companion: Optional[str] = None) -> None:
        """The mask, OASIS's convention (1 = masked, not coupled). ``companion`` is ignored."""
        check_types([numpy.ndarray, str], [mask, companion])
        self._write("isthmus_grids_write_mask", self._values(mask, "mask", dtype=numpy.intc))

    def set_frac(self, frac: numpy.ndarray, companion: Optional[str] = None) -> None:
        """The fractions of the cells. ``companion`` is ignored."""
        check_types([numpy.ndarray, str], [frac, companion])
        self._write("isthmus_grids_write_fractions", self._values(frac, "frac"))

    def set_area(self, area: numpy.ndarray) -> None:
        """The areas of the cells."""
        check_types([numpy.ndarray], [area])
        self._write("isthmus_grids_write_areas", self._values(area, "area"))

    def write(self) -> None:
        """Ends the grid's writing (each call above has written its file already)."""


