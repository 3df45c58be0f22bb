"""pyoasis's ``Var``: a coupling field, put and got as Fortran-ordered numpy arrays, over
:class:`isthmus.Field`."""

from __future__ import annotations

from typing import List, Optional

import numpy

from ..coupler import Field, Info, IsthmusError
from .checktypes import check_types
from .component import oasis_error
from .exception import OasisException, PyOasisException
from .parameters import OasisParameters
from .partition import Partition


def _parameter(info: Info) -> OasisParameters:
    return OasisParameters(int(info))  # isthmus's info codes are OASIS's values


class Var:
    """A coupling field (OASIS's def_var), local; enddef compares the ranks' definitions.

    Arrays are Fortran-ordered, as ``pyoasis.asarray`` makes them: the partition's points
    first (x fastest for a box), the bundle last: shape ``(points,)``, ``(nx, ny)``,
    ``(points, bundle_size)`` or ``(nx, ny, bundle_size)``. float64 or float32 (the field is
    coupled in double precision, as OASIS does).

    :param str cdport: name of the field in the namcouple
    :param Partition partition: its partition
    :param OasisParameters kinout: OASIS_OUT or OASIS_IN
    :param int bundle_size: number of levels of a bundle (default 1)
    :raises OasisException: if isthmus is unable to define the field
    :raises PyOasisException: if an incorrect parameter is supplied
    """

    def __init__(self, cdport: str, partition: Partition, kinout: OasisParameters,
                 bundle_size: int = 1) -> None:
        check_types([str, Partition, OasisParameters, int],
                    [cdport, partition, kinout, bundle_size])
        if len(cdport) == 0:
            raise PyOasisException("Name empty")
        if partition._id < 0:
            raise PyOasisException("Partition identifier <0.")
        if kinout not in (OasisParameters.OASIS_IN, OasisParameters.OASIS_OUT):
            raise PyOasisException("kinout parameter neither OASIS_IN or OASIS_OUT.")
        if bundle_size < 1:
            raise PyOasisException("Bundle size <1.")
        self.name = cdport
        self.bundle_size = bundle_size
        self.direction = kinout
        self._partition_local_size = partition.local_size
        self._field: Optional[Field] = None
        self._id = OasisParameters.OASIS_VAR_UNCPL.value
        if partition._partition is None:  # an uncoupled component defines nothing
            return
        try:
            self._field = Field(cdport, partition._partition,
                                "in" if kinout == OasisParameters.OASIS_IN else "out",
                                numpy.float64, bundle_size)
        except IsthmusError as e:
            raise oasis_error("Error in def_var", e) from None
        self._id = self._field.id

    def get_id(self) -> int:
        """:returns: the identifier of the field"""
        return self._id

    @property
    def id(self) -> int:
        return self._id

    def get_name(self) -> str:
        """:returns: name of the field"""
        return self.name

    # pyoasis keeps these under private names that scripts read (Eophis logs ``var._name``)
    @property
    def _name(self) -> str:
        return self.name

    @property
    def _inout(self) -> OasisParameters:
        return self.direction

    @property
    def _bundle_size(self) -> int:
        return self.bundle_size

    def _check(self, field: numpy.ndarray) -> None:
        if field.dtype not in (numpy.float64, numpy.float32):
            raise PyOasisException("Data type of field can only by float32 or float64")
        points = self._field.points if self._field is not None else self._partition_local_size
        ok = field.size == points * self.bundle_size
        if self.bundle_size > 1:
            ok = ok and field.ndim >= 2 and field.shape[-1] == self.bundle_size
        elif field.ndim == 3:
            ok = ok and field.shape[-1] == 1
        if not ok:
            raise OasisException("Field of the wrong size", 1,
                                 f"field {self.name}: array of shape {field.shape}, expected "
                                 f"{points} points x {self.bundle_size} levels")

    def put(self, kstep: int, field: numpy.ndarray, write_restart: bool = False,
            fracwgt: Optional[numpy.ndarray] = None) -> OasisParameters:
        """Sends the field's values at model time ``kstep`` (seconds).

        ``fracwgt`` (OASIS3-MCT 5.0): an array of the field's shape weighing each value (e.g.
        its cell's ice fraction); the destination receives map(field * fracwgt) /
        map(fracwgt).

        :returns: OASIS's info code (OASIS_SENT, OASIS_OK, OASIS_LOCTRANS, ...)
        :raises OasisException: if isthmus is unable to put the field
        :raises PyOasisException: if an incorrect parameter is supplied
        """
        check_types([int, numpy.ndarray, bool], [kstep, field, write_restart])
        self._check(field)
        weights = None
        if fracwgt is not None:
            check_types([numpy.ndarray], [fracwgt])
            if fracwgt.size != field.size:
                raise PyOasisException("fracwgt has {} values but the field has {}".format(
                    fracwgt.size, field.size))
            weights = numpy.ascontiguousarray(fracwgt.ravel(order="F"), dtype=numpy.float64)
        if self._field is None:
            return OasisParameters.OASIS_OK
        values = numpy.ascontiguousarray(field.ravel(order="F"), dtype=numpy.float64)
        try:
            return _parameter(self._field.put(kstep, values, write_restart, fracwgt=weights))
        except IsthmusError as e:
            raise oasis_error("Error in sending data to another component", e) from None

    def get(self, kstep: int, field: numpy.ndarray) -> OasisParameters:
        """Receives the field at model time ``kstep`` into ``field`` (left as it is when
        ``kstep`` is no coupling date).

        :returns: OASIS's info code (OASIS_RECVD, OASIS_OK, ...)
        :raises OasisException: if isthmus is unable to get the field
        :raises PyOasisException: if an incorrect parameter is supplied
        """
        check_types([int, numpy.ndarray], [kstep, field])
        self._check(field)
        if not field.flags.writeable:
            raise PyOasisException("The field array is read-only")
        if self._field is None:
            return OasisParameters.OASIS_OK
        direct = field.dtype == numpy.float64 and field.flags.f_contiguous
        if direct:  # the array's memory is the coupler's layout: no copy
            values = field.reshape(-1, order="F")
        else:  # holds the current values, so that a date without coupling changes nothing
            values = numpy.ascontiguousarray(field.ravel(order="F"), dtype=numpy.float64)
        try:
            info = self._field.get(kstep, values).info
        except IsthmusError as e:
            raise oasis_error("Error in getting data from another component", e) from None
        if not direct:
            field[...] = values.reshape(field.shape, order="F")
        return _parameter(info)

    def put_inquire(self, kstep: int) -> OasisParameters:
        """:returns: what a put at ``kstep`` would return (nothing is done)"""
        check_types([int], [kstep])
        if self._field is None:
            return OasisParameters.OASIS_OK
        try:
            return _parameter(self._field.put_inquire(kstep))
        except IsthmusError as e:
            raise oasis_error("Error in put_inquire", e) from None

    def get_freqs(self) -> List[int]:
        """:returns: the coupling periods of the field, in seconds"""
        if self._field is None:
            return []
        try:
            return self._field.periods
        except IsthmusError as e:
            raise oasis_error("Error in getting coupling frequencies", e) from None

    @property
    def cpl_freqs(self) -> List[int]:
        """The coupling periods of the field, in seconds."""
        return self.get_freqs()

    @property
    def is_active(self) -> bool:
        """Whether the namcouple couples this field (OASIS gives OASIS_Var_Uncpl otherwise)."""
        return self._field is not None and self._field.is_configured

    def __str__(self) -> str:
        return f"Variable data: name: {self.name}, id: {self._id}"
