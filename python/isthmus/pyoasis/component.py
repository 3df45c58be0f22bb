"""pyoasis's ``Component``: the one coupler of this process, and the module-level calls that
act on it (``terminate``, ``oasis_abort``, debug level).

OASIS's interface keeps one implicit coupler per process, so this module holds the current
component (the Python counterpart of mod_oasis's one handle); nothing below it has global
state.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any, List, Optional, Tuple

from mpi4py import MPI

from ..coupler import Coupler, IsthmusError
from .checktypes import check_types
from .exception import OasisException, PyOasisException

_current: Optional["Component"] = None
_debug_level = 0


def current() -> "Component":
    """The component of this process (raises :class:`PyOasisException` before one exists)."""
    if _current is None or _current._coupler is None:
        raise PyOasisException("No component: create a pyoasis.Component first.")
    return _current


def oasis_error(text: str, error: IsthmusError) -> OasisException:
    """isthmus's error as pyoasis reports it."""
    return OasisException(text, error.code, error.message)


class Component:
    """The component this process runs, coupled by isthmus as OASIS3-MCT would.

    Collective over ``communicator`` (default ``MPI.COMM_WORLD``): every process of every
    component, once. Reads the configuration ``namcouple`` from the current directory, where
    weights, restart and grid files are looked up too. ``coupled=False``: the component takes
    part by name (it gets its local communicator, and its partners count it) but defines no
    fields: partitions and fields are not created, put and get move nothing.

    :param str name: name of the component
    :param bool coupled: whether the component will be coupled (default: True)
    :param mpi4py.MPI.Intracomm communicator: global MPI communicator (default: MPI.COMM_WORLD)
    :raises OasisException: if isthmus is unable to initialise the component
    :raises PyOasisException: if an incorrect parameter is supplied
    """

    def __init__(self, name: str, coupled: bool = True,
                 communicator: Optional[MPI.Intracomm] = None) -> None:
        global _current
        self._coupler: Optional[Coupler] = None
        check_types([str, bool, MPI.Intracomm], [name, coupled, communicator])
        if _current is not None and _current._coupler is not None:
            raise PyOasisException("There should be only one component.")
        if len(name) == 0:
            raise PyOasisException("Component name empty.")
        self._name = name
        self._coupled = coupled
        self._communicator = communicator if communicator is not None else MPI.COMM_WORLD
        try:
            self._coupler = Coupler(self._communicator, name, "namcouple")
            self._id = self._coupler.component_index + 1  # OASIS counts from 1
            self.localcomm: MPI.Intracomm = self._coupler.local_comm
        except IsthmusError as e:
            if self._coupler is not None:
                self._coupler._destroy()
                self._coupler = None
            raise oasis_error("Error initialising component " + name, e) from None
        self.couplcomm: MPI.Intracomm = (self.localcomm.Dup()
                                         if self.localcomm != MPI.COMM_NULL else MPI.COMM_NULL)
        _current = self

    def __del__(self) -> None:
        """Ends the coupling (OASIS's terminate), as pyoasis does when the component goes."""
        try:
            self._terminate()
        except Exception as e:  # a destructor cannot raise: say it, as pyoasis aborts
            sys.stderr.write(f"pyoasis: terminate failed: {e}\n")

    def _terminate(self) -> None:
        global _current
        cpl = getattr(self, "_coupler", None)
        if cpl is None:
            return
        self._coupler = None
        if _current is self:
            _current = None
        try:
            cpl.terminate()
        except IsthmusError as e:
            raise oasis_error("Error in terminate", e) from None
        finally:
            cpl._destroy()

    @property
    def coupler(self) -> Coupler:
        """The isthmus coupler underneath (:class:`isthmus.Coupler`)."""
        if self._coupler is None:
            raise PyOasisException(f"Component {self._name} has terminated.")
        return self._coupler

    @property
    def name(self) -> str:
        """:returns: the name of the component"""
        return self._name

    def get_name(self) -> str:
        return self._name

    def get_id(self) -> int:
        """:returns: the component identifier (from 1)"""
        return self._id

    @property
    def id(self) -> int:
        return self._id

    def create_couplcomm(self, coupled: bool) -> int:
        """Makes the coupling communicator: the ranks of the component that pass
        ``coupled=True`` (a split of the local communicator); the others get
        ``MPI.COMM_NULL`` and only call enddef. Collective over the component.

        :returns: error code (0)
        """
        check_types([bool], [coupled])
        comm = self.localcomm.Split(1 if coupled else MPI.UNDEFINED, self.localcomm.rank)
        return self.set_couplcomm(comm)

    def set_couplcomm(self, couplcomm: MPI.Intracomm) -> int:
        """Sets the coupling communicator (``MPI.COMM_NULL`` on the ranks that do not couple).

        :returns: error code (0)
        """
        try:
            self.coupler.set_couplcomm(couplcomm)
        except IsthmusError as e:
            raise oasis_error("Error in set_couplcomm", e) from None
        self.couplcomm = couplcomm
        return 0

    def get_intracomm(self, compname: str) -> MPI.Intracomm:
        """:returns: this component's and ``compname``'s ranks as one intracommunicator"""
        check_types([str], [compname])
        try:
            return self.coupler.intracomm(compname)
        except IsthmusError as e:
            raise oasis_error("Error in get_intracomm", e) from None

    def get_intercomm(self, compname: str) -> MPI.Intercomm:
        """:returns: an intercommunicator between this component and ``compname``"""
        check_types([str], [compname])
        try:
            return self.coupler.intercomm(compname)
        except IsthmusError as e:
            raise oasis_error("Error in get_intercomm", e) from None

    def get_multi_intracomm(self, complist: List[str]) -> Tuple[MPI.Intracomm, dict]:
        """:param complist: the names of the components to join, this one among them
        :returns: their ranks as one intracommunicator (components in order of their number,
            each in its local order) and a dictionary of each name's root rank in it
        :raises OasisException: if isthmus is unable to create the intracommunicator (a name
            twice or unknown, this component missing, fewer than two components)
        """
        # (a list of names: check_types's list is one of integers)
        if not isinstance(complist, list) or any(type(e) is not str for e in complist):
            raise PyOasisException("The elements of the list in argument 0 must be strings.")
        try:
            return self.coupler.multi_intracomm(complist)
        except IsthmusError as e:
            raise oasis_error("Error in get_multi_intracomm", e) from None

    @staticmethod
    def enddef() -> None:
        """Ends the definition phase of this process's component.

        :raises OasisException: if isthmus is unable to end the definitions
        """
        try:
            current().coupler.enddef()
        except IsthmusError as e:
            raise oasis_error("Error in enddef", e) from None

    @property
    def debug_level(self) -> int:
        """OASIS's debug level (kept, not used: isthmus's errors always say what and where)."""
        return get_debug()

    @debug_level.setter
    def debug_level(self, level: int) -> None:
        set_debug(level)

    def __str__(self) -> str:
        return f"Component: name: {self._name}, id: {self._id}"


def terminate() -> None:
    """Ends the coupling of this process's component (also done when it is deleted)."""
    if _current is not None:
        _current._terminate()


def set_debug(debug: int) -> None:
    global _debug_level
    check_types([int], [debug])
    if debug < 0:
        raise PyOasisException("Negative debug level")
    _debug_level = debug


def get_debug() -> int:
    return _debug_level


def oasis_abort(component_id: int, routine: str, message: str, filename: str, line: int,
                error: int) -> None:
    """Prints the message and aborts every process (MPI_Abort over the world)."""
    check_types([int, str, str, str, int, int],
                [component_id, routine, message, filename, line, error])
    sys.stderr.write(f"oasis_abort: component {component_id}, {routine} ({filename}:{line}): "
                     f"{message} (error {error})\n")
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(error if error > 0 else 1)


def pyoasis_abort(exception: Exception) -> None:
    """Prints the exception with its traceback and aborts every process."""
    check_types([Exception], [exception])
    sys.stderr.write(traceback.format_exc())
    oasis_abort(0, "", str(exception), "", 0, 1)


def global_except_hook(exctype: Any, value: Any, tb: Any) -> None:
    """pyoasis's rule: an uncaught exception on one rank stops the whole MPI run (the other
    ranks would wait for it for ever)."""
    try:
        sys.stderr.write("\n*****************************************************\n"
                         f"Uncaught exception was detected on rank {MPI.COMM_WORLD.rank}.\n")
        traceback.print_exception(exctype, value, tb)
        sys.stderr.flush()
    finally:
        MPI.COMM_WORLD.Abort(1)
