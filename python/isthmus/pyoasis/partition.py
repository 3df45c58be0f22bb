"""pyoasis's partitions: serial, apple, box, orange, points (and 3-D cube), as OASIS3-MCT
describes them, over :class:`isthmus.Partition`."""

from __future__ import annotations

from typing import List, Optional

from ..coupler import IsthmusError
from ..coupler import Partition as _IsthmusPartition
from .checktypes import check_types
from .component import current, oasis_error
from .exception import PyOasisException


class Partition:
    """Base class of the partitions: ``_id`` (OASIS's partition id) and ``local_size``."""

    def _set(self, parameters: List[int], global_size: int, local_size: int,
             name: str) -> None:
        """Defines the partition (local; enddef compares the ranks') from an OASIS descriptor
        with 0-based offsets and indices."""
        self._local_size = local_size
        self._partition: Optional[_IsthmusPartition] = None
        component = current()
        if not component._coupled:
            self._id = 0  # an uncoupled component defines nothing
            return
        try:
            self._partition = _IsthmusPartition(component.coupler, parameters,
                                                global_size=max(global_size, 0),
                                                name=name or None)
        except IsthmusError as e:
            raise oasis_error("Error in def_partition", e) from None
        self._id = self._partition.id

    def get_id(self) -> int:
        """:returns: the partition identifier"""
        return self._id

    @property
    def id(self) -> int:
        return self._id

    @property
    def local_size(self) -> int:
        """The number of points of this rank's part."""
        return self._local_size

    def __str__(self) -> str:
        return f"Partition: id: {self._id}"


class SerialPartition(Partition):
    """The whole grid on one process.

    :param int size: number of points in the partition
    :param int global_size: global size of the grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, size: int, global_size: int = -1, name: str = "") -> None:
        check_types([int, int, str], [size, global_size, name])
        if size <= 0:
            raise PyOasisException("Size must be >0.")
        self._set([0, 0, size], global_size, size, name)


class ApplePartition(Partition):
    """One segment of the global index space.

    :param int offset: offset according to the global index (0-based)
    :param int size: number of points in the partition
    :param int global_size: global size of the grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, offset: int, size: int, global_size: int = -1, name: str = "") -> None:
        check_types([int, int, int, str], [offset, size, global_size, name])
        if offset < 0:
            raise PyOasisException("Offset <0.")
        if size <= 0:
            raise PyOasisException("Size <=0.")
        self._set([1, offset, size], global_size, size, name)


class BoxPartition(Partition):
    """A rectangle of a 2-D grid whose x index runs fastest.

    :param int global_offset: global index of the box's first point (0-based)
    :param int local_extent_x: extent in the x direction of the box
    :param int local_extent_y: extent in the y direction of the box
    :param int global_extent_x: global extent in the x direction
    :param int global_size: global size of the grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, global_offset: int, local_extent_x: int, local_extent_y: int,
                 global_extent_x: int, global_size: int = -1, name: str = "") -> None:
        check_types([int, int, int, int, int, str],
                    [global_offset, local_extent_x, local_extent_y, global_extent_x,
                     global_size, name])
        if global_offset < 0:
            raise PyOasisException("Global offset <0.")
        if local_extent_x < 0:
            raise PyOasisException("Local extent in x-direction <=0.")
        if local_extent_y < 0:
            raise PyOasisException("Local extent in y-direction <=0.")
        if global_extent_x <= 0:
            raise PyOasisException("Global extent in x-direction <=0.")
        self._set([2, global_offset, local_extent_x, local_extent_y, global_extent_x],
                  global_size, local_extent_x * local_extent_y, name)


class OrangePartition(Partition):
    """Several segments of the global index space.

    :param list offsets: offsets of the segments (0-based)
    :param list extents: lengths of the segments
    :param int global_size: global size of the grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, offsets: List[int], extents: List[int], global_size: int = -1,
                 name: str = "") -> None:
        check_types([list, list, int, str], [offsets, extents, global_size, name])
        if len(extents) != len(offsets):
            raise PyOasisException("Number of offsets != number of extents")
        if any(o < 0 for o in offsets):
            raise PyOasisException("Offset <0.")
        if any(e <= 0 for e in extents):
            raise PyOasisException("Extent <=0.")
        parameters = [3, len(offsets)]
        for o, e in zip(offsets, extents):
            parameters += [o, e]
        self._set(parameters, global_size, sum(extents), name)


class PointsPartition(Partition):
    """A list of points.

    :param list global_indices: the global indices of the points, 1-based as in OASIS
    :param int global_size: global size of the grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, global_indices: List[int], global_size: int = -1,
                 name: str = "") -> None:
        check_types([list, int, str], [global_indices, global_size, name])
        if len(global_indices) == 0:
            raise PyOasisException("Global indices list empty.")
        # OASIS's points are 1-based (its other kinds give 0-based offsets); isthmus's 0-based
        self._set([4, len(global_indices)] + [i - 1 for i in global_indices], global_size,
                  len(global_indices), name)


class CubePartition(Partition):
    """A box of a 2-D grid on every level of a 3-D grid (x fastest, then y, then z): the
    points ``global_offset + i + j * global_extent_x + k * global_extent_x * global_extent_y``
    for ``i < local_extent_x``, ``j < local_extent_y``, ``k < global_extent_z``.

    :param int global_offset: global index of the box's first point in the 2-D plane
    :param int local_extent_x: extent in the x direction of the box
    :param int local_extent_y: extent in the y direction of the box
    :param int global_extent_x: global extent in the x direction
    :param int global_extent_y: global extent in the y direction
    :param int global_extent_z: number of levels
    :param int global_size: global size of the 3-D grid (optional)
    :param str name: name of the partition (optional)
    """

    def __init__(self, global_offset: int, local_extent_x: int, local_extent_y: int,
                 global_extent_x: int, global_extent_y: int, global_extent_z: int,
                 global_size: int = -1, name: str = "") -> None:
        check_types([int, int, int, int, int, int, int, str],
                    [global_offset, local_extent_x, local_extent_y, global_extent_x,
                     global_extent_y, global_extent_z, global_size, name])
        if global_offset < 0:
            raise PyOasisException("Global offset <0.")
        if min(local_extent_x, local_extent_y, global_extent_z) < 0:
            raise PyOasisException("Local extent <0.")
        if global_extent_x <= 0 or global_extent_y <= 0:
            raise PyOasisException("Global extent <=0.")
        plane = global_extent_x * global_extent_y
        parameters = [3, local_extent_y * global_extent_z]
        for k in range(global_extent_z):
            for j in range(local_extent_y):
                parameters += [global_offset + j * global_extent_x + k * plane, local_extent_x]
        if global_size < 0:
            global_size = plane * global_extent_z
        self._set(parameters, global_size,
                  local_extent_x * local_extent_y * global_extent_z, name)
