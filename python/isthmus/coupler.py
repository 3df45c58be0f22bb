"""The coupler from Python: components, partitions and fields over isthmus's C API.

A thin front end (docs/python.md): every call translates its arguments and calls
``libisthmus.so`` through ctypes; numpy arrays are passed without a copy and mpi4py
communicators by their Fortran handles (the C API's ``_f`` functions). ::

    from mpi4py import MPI
    import numpy as np
    import isthmus

    with isthmus.Coupler(MPI.COMM_WORLD, "ocean", "namcouple", run_dir=".") as cpl:
        comm = cpl.local_comm
        n = 182 * 149
        first, last = n * comm.rank // comm.size, n * (comm.rank + 1) // comm.size
        grid = isthmus.Partition(cpl, ig_paral=[1, first, last - first], global_size=n)
        sst = isthmus.Field("O_SST", grid, "out")
        flux = isthmus.Field("O_FLX", grid, "in")
        cpl.enddef()
        for date in range(0, 86400, 3600):
            sst.put(date, values)                 # isthmus.Info.SENT or Info.OK
            info, received = flux.get(date)       # Info.RECVD or Info.OK

Collective calls (creation, enddef, report, communicators) fail on every rank alike with
:class:`IsthmusError`, whose message is the C API's (``isthmus_coupler_last_error``): what,
where and why. Definitions (partitions, fields) are local, as OASIS's: a bad one raises on its
rank, and ``enddef`` (which compares the ranks' definitions) raises on every rank. ``put`` and
``get`` are local calls; their arrays are checked (dtype, size, layout) before the C library
sees them.

Arrays hold a field's local points in the partition's order; a bundle of ``b`` levels is
level-major: a C-ordered array of shape ``(b, points)`` (or flat, ``b * points`` values).
"""

from __future__ import annotations

import ctypes
import enum
import operator
import os
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

if TYPE_CHECKING:  # mpi4py is imported when a coupler is created (it initialises MPI)
    from mpi4py import MPI

__all__ = ["Coupler", "Partition", "Field", "Info", "Direction", "ErrorCode", "IsthmusError",
           "Received", "load_library"]

PathLike = Union[str, "os.PathLike[str]"]


class ErrorCode(enum.IntEnum):
    """The C API's error codes (``enum isthmus_error``; docs/errors.md)."""

    OK = 0
    ARG = 1
    DECOMP = 2
    UNOWNED = 3
    MPI = 4
    REMOTE = 5
    CONFIG = 6
    FILE = 7
    NOMEM = 8
    INTERNAL = 9
    TIMEOUT = 10


class IsthmusError(Exception):
    """A failed isthmus call: ``code`` (:class:`ErrorCode` when known) and ``message``.

    ``str(error)`` is the message, which names the rank, the call, and what was wrong, e.g.
    ``isthmus: rank 0: isthmus_coupler_get: get before enddef (component ocean)``.
    """

    def __init__(self, code: int, message: str) -> None:
        try:
            code = ErrorCode(code)
        except ValueError:
            pass
        super().__init__(code, message)
        self.code: int = code
        self.message: str = message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        name = self.code.name if isinstance(self.code, ErrorCode) else str(self.code)
        return f"IsthmusError({name}, {self.message!r})"


class Info(enum.IntEnum):
    """OASIS3-MCT's info codes returned by put and get (``enum isthmus_coupling_info``)."""

    OK = 0           #: not a coupling date: nothing moved
    RECVD = 3        #: get: received
    SENT = 4         #: put: sent
    LOCTRANS = 5     #: put: accumulated by the time operation only
    TOREST = 6
    OUTPUT = 7
    SENTOUT = 8      #: put: sent, and written (EXPOUT)
    TORESTOUT = 9
    FROMREST = 10
    INPUT = 11
    RECVOUT = 12     #: get: received, and written (EXPOUT)
    FROMRESTOUT = 13
    WAITGROUP = 14   #: put: its colon group travels when every field is put


class Direction(enum.IntEnum):
    """A field's direction (``enum isthmus_var_direction``)."""

    IN = 0
    OUT = 1


class Received(NamedTuple):
    """What :meth:`Field.get` returns: the info code and the array (received or untouched)."""

    info: Info
    data: np.ndarray


_DTYPES = {np.dtype(np.float64): 0, np.dtype(np.float32): 1}  # ISTHMUS_DOUBLE, ISTHMUS_FLOAT
_PUT_WRITE_RESTART = 1


class _Options(ctypes.Structure):
    _fields_ = [("run_dir", ctypes.c_char_p), ("timeout_seconds", ctypes.c_double)]


_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_i64_p = ctypes.POINTER(ctypes.c_int64)
_c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# name: (restype, argtypes). Every coupler call returns an error code (int).
_SIGNATURES = {
    "isthmus_error_name": (ctypes.c_char_p, [ctypes.c_int]),
    "isthmus_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "isthmus_context_destroy": (ctypes.c_int, [_c_void_pp]),
    "isthmus_decomp_create_indices": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64,
                                                     ctypes.c_int64, ctypes.c_void_p, _c_void_pp]),
    "isthmus_decomp_destroy": (ctypes.c_int, [_c_void_pp]),
    "isthmus_coupler_create_f": (ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                                ctypes.POINTER(_Options), _c_void_pp]),
    "isthmus_coupler_destroy": (ctypes.c_int, [_c_void_pp]),
    "isthmus_coupler_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "isthmus_coupler_get_local_comm_f": (ctypes.c_int, [ctypes.c_void_p, _c_int_p]),
    "isthmus_coupler_get_context": (ctypes.c_int, [ctypes.c_void_p, _c_void_pp]),
    "isthmus_coupler_set_couplcomm_f": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "isthmus_coupler_def_partition": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                     ctypes.c_char_p, _c_int_p]),
    "isthmus_coupler_def_partition_oasis": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64,
                                                           ctypes.c_void_p, ctypes.c_int,
                                                           ctypes.c_char_p, _c_int_p]),
    "isthmus_coupler_def_var": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                               ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                               _c_int_p]),
    "isthmus_coupler_enddef": (ctypes.c_int, [ctypes.c_void_p]),
    "isthmus_coupler_put_flags": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                 ctypes.c_void_p, ctypes.c_int, _c_int_p]),
    "isthmus_coupler_get_partition_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int,
                                                          ctypes.c_void_p, ctypes.c_void_p]),
    "isthmus_coupler_gather": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64,
                                              ctypes.c_void_p, ctypes.c_void_p]),
    "isthmus_coupler_put_fracwgt": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                   ctypes.c_void_p, ctypes.c_int, _c_int_p]),
    "isthmus_coupler_put_terms": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                 ctypes.c_int, _c_int_p]),
    "isthmus_coupler_get": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_void_p, _c_int_p]),
    "isthmus_coupler_terminate": (ctypes.c_int, [ctypes.c_void_p]),
    "isthmus_coupler_put_inquire": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                   _c_int_p]),
    "isthmus_coupler_get_ncpl": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, _c_int_p]),
    "isthmus_coupler_get_freqs": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                 _c_int_p]),
    "isthmus_coupler_get_intracomm_f": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                       _c_int_p]),
    "isthmus_coupler_get_intercomm_f": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                       _c_int_p]),
    "isthmus_coupler_get_multi_intracomm_f": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int,
                                                             ctypes.c_int, ctypes.c_char_p,
                                                             _c_int_p, _c_int_p]),
    "isthmus_coupler_report": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64,
                                              _c_i64_p]),
    "isthmus_coupler_is_configured": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                     _c_int_p]),
    "isthmus_coupler_get_var_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, _c_i64_p,
                                                    _c_int_p]),
    "isthmus_coupler_get_component_index": (ctypes.c_int, [ctypes.c_void_p, _c_int_p]),
}

_loaded: dict = {}  # path -> CDLL: a shared library is loaded once per process anyway


def load_library(path: Optional[PathLike] = None) -> ctypes.CDLL:
    """``libisthmus.so`` with the coupler's signatures declared.

    Looked up as the command line interface does: ``path``, else ``$ISTHMUS_LIB``, else
    ``libisthmus.so`` in ``$ISTHMUS_BUILD_DIR``, else ``build/`` of the source tree.
    """
    from .commands.decompose import find_library

    found = str(find_library(path))
    lib = _loaded.get(found)
    if lib is None:
        lib = ctypes.CDLL(found)
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        _loaded[found] = lib
    return lib


def _text(value: Optional[bytes]) -> str:
    return value.decode(errors="replace") if value else ""


def _fortran_handle(comm: Any) -> int:
    """The Fortran handle (MPI_Fint) of an mpi4py communicator (or of an int handle)."""
    if isinstance(comm, int):
        return comm
    py2f = getattr(comm, "py2f", None)
    if py2f is None:
        raise IsthmusError(ErrorCode.ARG, f"isthmus: expected an mpi4py communicator, got "
                                          f"{type(comm).__name__}")
    return py2f()


def _intracomm(handle: int) -> "MPI.Intracomm":
    from mpi4py import MPI

    return MPI.Intracomm.f2py(handle)


class Coupler:
    """One process's coupler: the component it runs, its partitions and fields.

    Collective over ``comm`` (every rank of every component, once). ``component`` names the
    component this rank runs, or ``""``/``None`` for a rank that takes no part in coupling.
    ``config`` is a namcouple (OASIS3-MCT 2.0-5.0) or a YAML configuration (.yaml, .yml).
    ``run_dir`` is where weights, restart, grid and INPUT files are read and OUTPUT files
    written (default: the current directory). ``timeout`` (seconds): a put or get waiting
    longer than this for its partner fails with :attr:`ErrorCode.TIMEOUT` (0: wait for ever,
    or ``$ISTHMUS_COUPLER_TIMEOUT``).

    Used as a context manager, the coupler is terminated (sends in flight completed) and
    destroyed on leaving the block; if the block raised, it is destroyed without terminate,
    so that the exception is not hidden behind a wait for a partner.
    """

    def __init__(self, comm: Optional["MPI.Comm"] = None, component: Optional[str] = None,
                 config: PathLike = "namcouple", *, run_dir: Optional[PathLike] = None,
                 timeout: float = 0.0, library: Optional[PathLike] = None) -> None:
        from mpi4py import MPI  # initialises MPI before the library uses it

        self._lib = load_library(library)
        self._handle = ctypes.c_void_p()
        self._terminated = False
        self._component = component or ""
        self._npartitions = 0
        world = MPI.COMM_WORLD if comm is None else comm
        opt = _Options(os.fsencode(run_dir) if run_dir is not None else None, float(timeout))
        rc = self._lib.isthmus_coupler_create_f(
            _fortran_handle(world), self._component.encode(), os.fsencode(config),
            ctypes.byref(opt), ctypes.byref(self._handle))
        if rc != 0:
            message = _text(self._lib.isthmus_coupler_last_error(self._handle))
            self._lib.isthmus_coupler_destroy(ctypes.byref(self._handle))
            raise IsthmusError(rc, message or f"isthmus_coupler_create failed ({rc})")

    # ---- life ------------------------------------------------------------------------------

    def __enter__(self) -> "Coupler":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self._destroy()

    def __del__(self) -> None:
        try:
            self._destroy()
        except Exception:
            pass

    def terminate(self) -> None:
        """Completes the sends still in flight (OASIS's oasis_terminate). Once."""
        if not self._terminated:
            self._call(self._lib.isthmus_coupler_terminate)
            self._terminated = True

    def close(self) -> None:
        """Terminates (if not done yet) and releases the coupler. Idempotent."""
        if self._handle:
            try:
                self.terminate()
            finally:
                self._destroy()

    def _destroy(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.isthmus_coupler_destroy(ctypes.byref(handle))

    @property
    def closed(self) -> bool:
        """Whether the coupler has been released."""
        return not self._handle

    def _call(self, fn, *args) -> None:
        if not self._handle:
            raise IsthmusError(ErrorCode.ARG, f"isthmus: {fn.__name__}: the coupler of "
                                              f"component '{self._component}' is closed")
        rc = fn(self._handle, *args)
        if rc != 0:
            raise IsthmusError(rc, _text(self._lib.isthmus_coupler_last_error(self._handle)) or
                               f"{fn.__name__} failed ({_text(self._lib.isthmus_error_name(rc))})")

    # ---- the component ---------------------------------------------------------------------

    @property
    def component(self) -> str:
        """The name of this rank's component (``""`` on a rank without one)."""
        return self._component

    @property
    def local_comm(self) -> "MPI.Intracomm":
        """The component's ranks (OASIS's local communicator; ``MPI.COMM_NULL`` on a rank
        without component). Owned by the coupler: do not free it."""
        handle = ctypes.c_int()
        self._call(self._lib.isthmus_coupler_get_local_comm_f, ctypes.byref(handle))
        return _intracomm(handle.value)

    @property
    def component_index(self) -> int:
        """This component's number among the world's components, from 0 (-1: none)."""
        index = ctypes.c_int(-1)
        self._call(self._lib.isthmus_coupler_get_component_index, ctypes.byref(index))
        return index.value

    def set_couplcomm(self, coupling: Optional["MPI.Comm"]) -> None:
        """OASIS's oasis_set_couplcomm: the ranks of the component that couple (e.g. a split
        of :attr:`local_comm`), ``MPI.COMM_NULL`` or ``None`` on the others, which then only
        call :meth:`enddef` and terminate. Collective over the component, before any
        definition."""
        from mpi4py import MPI

        comm = MPI.COMM_NULL if coupling is None else coupling
        self._call(self._lib.isthmus_coupler_set_couplcomm_f, _fortran_handle(comm))

    def is_configured(self, field: str) -> bool:
        """Whether the configuration names ``field`` in any entry (else its put and get move
        nothing: OASIS's OASIS_Var_Uncpl)."""
        yes = ctypes.c_int(0)
        self._call(self._lib.isthmus_coupler_is_configured, field.encode(), ctypes.byref(yes))
        return bool(yes.value)

    def enddef(self) -> None:
        """Ends the definition phase and builds the couplings (collective over the
        component; an error names the field, the configuration line and the components)."""
        self._call(self._lib.isthmus_coupler_enddef)

    def report(self) -> str:
        """The communication report of the component's couplings: per entry puts, gets,
        exchanges, messages, bytes and times. Collective over the component; the text on its
        first rank, ``""`` elsewhere."""
        length = ctypes.c_int64(0)
        self._call(self._lib.isthmus_coupler_report, None, 0, ctypes.byref(length))
        # the second call is collective too: every rank makes it, whatever its length
        buf = ctypes.create_string_buffer(length.value + 1)
        self._call(self._lib.isthmus_coupler_report, buf, len(buf), ctypes.byref(length))
        return buf.value.decode(errors="replace")

    def intracomm(self, other: str) -> "MPI.Intracomm":
        """This component's and ``other``'s ranks as one intracommunicator, in world order
        (OASIS's oasis_get_intracomm). Collective over both components; free it when done."""
        handle = ctypes.c_int()
        self._call(self._lib.isthmus_coupler_get_intracomm_f, other.encode(),
                   ctypes.byref(handle))
        return _intracomm(handle.value)

    def multi_intracomm(self, components: Sequence[str]) -> Tuple["MPI.Intracomm", Dict[str, int]]:
        """Several components' ranks as one intracommunicator (OASIS's
        oasis_get_multi_intracomm): ``components`` lists this component and at least one
        other, each once (blank names are skipped). The components follow in order of their
        number (:attr:`component_index`), each with its ranks in their local order. Returns the
        communicator and, per name, the communicator's rank of that component's first rank
        (-1 for a blank name). Collective over the listed components, which all pass the same
        list; free the communicator when done."""
        names = [str(c) for c in components]
        width = max([len(n.encode()) for n in names] + [1])
        packed = b"".join(n.encode().ljust(width) for n in names)
        handle = ctypes.c_int()
        roots = (ctypes.c_int * max(1, len(names)))()
        self._call(self._lib.isthmus_coupler_get_multi_intracomm_f, len(names), width, packed,
                   ctypes.byref(handle), roots)
        return _intracomm(handle.value), {n: roots[k] for k, n in enumerate(names)}

    def intercomm(self, other: str) -> "MPI.Intercomm":
        """An intercommunicator between this component and ``other`` (OASIS's
        oasis_get_intercomm). Collective over both components; free it when done."""
        from mpi4py import MPI

        handle = ctypes.c_int()
        self._call(self._lib.isthmus_coupler_get_intercomm_f, other.encode(),
                   ctypes.byref(handle))
        return MPI.Intercomm.f2py(handle.value)

    def _next_partition_name(self) -> str:
        self._npartitions += 1
        return f"{self._component}_part{self._npartitions:06d}"

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("terminated" if self._terminated else "open")
        return f"<isthmus.Coupler component={self._component!r} {state}>"


def _oasis_local_size(ig: Sequence[int]) -> int:
    """The number of points of an OASIS partition descriptor (0 if it is too short to say;
    the C library then explains what is wrong)."""
    kind = ig[0] if len(ig) else -1
    if kind in (0, 1) and len(ig) >= 3:
        return int(ig[2])
    if kind == 2 and len(ig) >= 4:
        return int(ig[2]) * int(ig[3])
    if kind == 3 and len(ig) >= 2:
        return int(sum(ig[3:3 + 2 * int(ig[1]):2]))
    if kind == 4 and len(ig) >= 2:
        return int(ig[1])
    return 0


class Partition:
    """Which points of a grid this rank holds, in the order of its arrays.

    Either an OASIS3-MCT partition descriptor, ``ig_paral`` with 0-based offsets (serial
    ``[0, 0, n]``, apple ``[1, offset, length]``, box ``[2, offset, nx, ny, global_nx]``,
    orange ``[3, nseg, off1, len1, ...]``, points ``[4, npts, i1, i2, ...]`` with 0-based
    indices), or ``indices``: this rank's 0-based global indices in local order.

    ``global_size``: the grid's number of points; left out (0) it is, as OASIS does without
    ``isize``, the largest index any rank of the component names, plus one (give it when the
    last points of the grid may be on no rank), settled in ``enddef``. ``name`` defaults to
    ``<component>_part<n>``. Local, as OASIS's def_partition: every rank defines the same
    partitions in the same order (same name and global size), which ``enddef`` checks; a bad
    descriptor or index raises on its rank, and ``enddef`` then raises on every rank.
    """

    def __init__(self, coupler: Coupler, ig_paral: Optional[Sequence[int]] = None, *,
                 indices: Optional[Sequence[int]] = None, global_size: int = 0,
                 name: Optional[str] = None) -> None:
        if (ig_paral is None) == (indices is None):
            raise IsthmusError(ErrorCode.ARG, "isthmus: Partition: give ig_paral or indices "
                                              "(exactly one)")
        self.coupler = coupler
        self.name: str = name if name is not None else coupler._next_partition_name()
        self.global_size: int = int(global_size)
        lib = coupler._lib
        pid = ctypes.c_int(-1)
        if ig_paral is not None:
            ig = np.ascontiguousarray(ig_paral, dtype=np.intc)
            self.local_size: int = _oasis_local_size(ig)
            coupler._call(lib.isthmus_coupler_def_partition_oasis, self.global_size,
                          ig.ctypes.data, int(ig.size), self.name.encode(), ctypes.byref(pid))
        else:
            idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
            self.local_size = int(idx.size)
            int_max = np.iinfo(np.intc).max
            if idx.size + 2 <= int_max and (idx.size == 0 or (idx.min() >= np.iinfo(np.intc).min
                                                              and idx.max() <= int_max)):
                # as an OASIS points partition: a bad index fails on its rank (and then
                # enddef, which compares the ranks' definitions, on every rank)
                ig = np.concatenate(([4, idx.size], idx)).astype(np.intc)
                coupler._call(lib.isthmus_coupler_def_partition_oasis, self.global_size,
                              ig.ctypes.data, int(ig.size), self.name.encode(),
                              ctypes.byref(pid))
            else:
                self._def_from_indices(idx, pid)
        self.id: int = pid.value

    def gather(self, local: np.ndarray, first: bool, grid_size: int) -> Optional[np.ndarray]:
        """This rank's values at the partition's points (``local_size`` of them, in its order)
        gathered on the component's first rank: the global array of ``grid_size`` values
        (``first``, which the caller says: the rank of the component's first rank) or None
        elsewhere; points no rank holds are 0. ``grid_size``, the same on every rank, is the
        partition's global size (before ``enddef``, for a partition defined without one, at
        least one more than its largest index). Collective over the component (OASIS's grid
        writing with a partition)."""
        values = np.ascontiguousarray(np.asarray(local, dtype=np.float64).reshape(-1))
        out = np.zeros(grid_size) if first else None
        self.coupler._call(self.coupler._lib.isthmus_coupler_gather, self.id, int(grid_size),
                           values.ctypes.data if values.size else None,
                           out.ctypes.data if out is not None else None)
        return out

    def _def_from_indices(self, idx: np.ndarray, pid: ctypes.c_int) -> None:
        coupler, lib = self.coupler, self.coupler._lib
        ctx, decomp = ctypes.c_void_p(), ctypes.c_void_p()
        coupler._call(lib.isthmus_coupler_get_context, ctypes.byref(ctx))
        try:
            rc = lib.isthmus_decomp_create_indices(ctx, self.global_size, int(idx.size),
                                                   idx.ctypes.data, ctypes.byref(decomp))
            local_error = None
            if rc != 0:
                local_error = IsthmusError(rc, _text(lib.isthmus_last_error(ctx)))
            try:
                # A rank whose indices are wrong defines no points: its definition fails
                # here, with the decomposition's message, and enddef on every rank.
                coupler._call(lib.isthmus_coupler_def_partition, decomp if not rc else None,
                              self.name.encode(), ctypes.byref(pid))
            except IsthmusError as e:
                raise (local_error or e) from None
        finally:
            if decomp:
                lib.isthmus_decomp_destroy(ctypes.byref(decomp))
            lib.isthmus_context_destroy(ctypes.byref(ctx))

    @classmethod
    def from_ig_paral(cls, coupler: Coupler, ig_paral: Sequence[int], global_size: int = 0,
                      name: Optional[str] = None) -> "Partition":
        """A partition from an OASIS descriptor (see the class)."""
        return cls(coupler, ig_paral, global_size=global_size, name=name)

    @classmethod
    def from_indices(cls, coupler: Coupler, indices: Sequence[int], global_size: int = 0,
                     name: Optional[str] = None) -> "Partition":
        """A partition from this rank's 0-based global indices, in local order."""
        return cls(coupler, indices=indices, global_size=global_size, name=name)

    def __repr__(self) -> str:
        return f"<isthmus.Partition {self.name!r} id={self.id} local_size={self.local_size}>"


def _direction(value: Union[str, Direction, int]) -> Direction:
    if isinstance(value, str):
        try:
            return Direction[value.upper()]
        except KeyError:
            pass
    else:
        try:
            return Direction(value)
        except ValueError:
            pass
    raise IsthmusError(ErrorCode.ARG, f"isthmus: direction {value!r}: expected 'in' or 'out'")


class Field:
    """A coupling field (OASIS's def_var): ``name`` as the configuration knows it, its
    ``partition``, ``direction`` ``"in"`` or ``"out"``, ``dtype`` float64 or float32 and
    ``bundle`` levels per point (OASIS's var_nodims(2)). Collective over the component.

    Its arrays hold :attr:`size` = points × bundle values of :attr:`dtype`, level-major:
    C-contiguous, flat or of shape :attr:`shape` ``(bundle, points)`` (``(points,)`` for one
    level). :meth:`empty` makes one.
    """

    def __init__(self, name: str, partition: Partition, direction: Union[str, Direction],
                 dtype: Any = np.float64, bundle: int = 1) -> None:
        self.name: str = name
        self.partition = partition
        self.coupler = partition.coupler
        self.direction: Direction = _direction(direction)
        self.dtype: np.dtype = np.dtype(dtype)
        if self.dtype not in _DTYPES:
            raise IsthmusError(ErrorCode.ARG, f"isthmus: field {name}: dtype {self.dtype} "
                                              f"(fields are float64 or float32)")
        vid = ctypes.c_int(-1)
        self.coupler._call(self.coupler._lib.isthmus_coupler_def_var, name.encode(),
                           partition.id, int(self.direction), _DTYPES[self.dtype], int(bundle),
                           ctypes.byref(vid))
        self.id: int = vid.value
        points, levels = ctypes.c_int64(0), ctypes.c_int(0)
        self.coupler._call(self.coupler._lib.isthmus_coupler_get_var_size, self.id,
                           ctypes.byref(points), ctypes.byref(levels))
        self.points: int = points.value
        self.bundle: int = levels.value

    @property
    def size(self) -> int:
        """The number of values of the field's arrays on this rank: points × bundle."""
        return self.points * self.bundle

    @property
    def shape(self) -> Tuple[int, ...]:
        """``(points,)`` for one level, ``(bundle, points)`` for a bundle."""
        return (self.points,) if self.bundle == 1 else (self.bundle, self.points)

    def empty(self) -> np.ndarray:
        """An uninitialised array for this field (:attr:`shape`, :attr:`dtype`)."""
        return np.empty(self.shape, dtype=self.dtype)

    def _check(self, call: str, array: Any, writable: bool) -> np.ndarray:
        where = f"isthmus: {call} {self.name}"
        if not isinstance(array, np.ndarray):
            raise IsthmusError(ErrorCode.ARG, f"{where}: expected a numpy array, got "
                                              f"{type(array).__name__}")
        if array.dtype != self.dtype:
            raise IsthmusError(ErrorCode.ARG, f"{where}: array of dtype {array.dtype}, the "
                                              f"field is {self.dtype}")
        if array.size != self.size:
            raise IsthmusError(ErrorCode.ARG, f"{where}: array of {array.size} values, the "
                                              f"field has {self.points} local points x "
                                              f"{self.bundle} levels = {self.size}")
        if not array.flags.c_contiguous:
            raise IsthmusError(ErrorCode.ARG, f"{where}: the array is not C-contiguous "
                                              f"(np.ascontiguousarray makes a copy that is)")
        if writable and not array.flags.writeable:
            raise IsthmusError(ErrorCode.ARG, f"{where}: the array is read-only")
        return array

    def put(self, date: int, array: np.ndarray, write_restart: bool = False,
            terms: Sequence[Optional[np.ndarray]] = (),
            fracwgt: Optional[np.ndarray] = None) -> Info:
        """Puts the field's values at ``date`` (seconds since the start of the run).

        Returns :attr:`Info.SENT` when sent, :attr:`Info.OK` when ``date`` is no coupling date,
        :attr:`Info.LOCTRANS` when only accumulated, :attr:`Info.WAITGROUP` while its colon
        group waits for the other fields. The array may be reused at once.
        ``write_restart``: also write the value (or the partial accumulation) to OASIS's
        restart files (OASIS's write_restart).
        ``terms``: OASIS's higher-order terms fld2..fld5 (e.g. the two gradients of
        second-order conservative remapping), arrays like ``array`` or None where not given;
        multiplied by the weights file's further weights where the source side multiplies
        (MAPPING ... sum; docs/coupler.md, "Mapping sides").
        ``fracwgt``: OASIS3-MCT 5.0's fraction weights, an array like ``array`` (e.g. each
        cell's ice fraction): the destination receives map(array * fracwgt) / map(fracwgt),
        0 where both are 0. Ignored on an entry without a mapping; on or off for the entry from
        its first exchange on; INSTANT entries only (docs/coupler.md, "fracwgt").
        """
        a = self._check("put", array, writable=False)
        info = ctypes.c_int(-1)
        flags = _PUT_WRITE_RESTART if write_restart else 0
        if fracwgt is not None or any(t is not None for t in terms):
            checked = [None if t is None else self._check("put", t, writable=False) for t in terms]
            ptrs = (ctypes.c_void_p * max(1, len(checked)))(*[None if t is None else t.ctypes.data
                                                              for t in checked])
            if fracwgt is not None:
                w = self._check("put", fracwgt, writable=False)
                self.coupler._call(self.coupler._lib.isthmus_coupler_put_fracwgt, self.id,
                                   operator.index(date), a.ctypes.data, ptrs, len(checked),
                                   w.ctypes.data, flags, ctypes.byref(info))
            else:
                self.coupler._call(self.coupler._lib.isthmus_coupler_put_terms, self.id,
                                   operator.index(date), a.ctypes.data, ptrs, len(checked),
                                   flags, ctypes.byref(info))
        else:
            self.coupler._call(self.coupler._lib.isthmus_coupler_put_flags, self.id,
                               operator.index(date), a.ctypes.data, flags, ctypes.byref(info))
        return Info(info.value)

    def get(self, date: int, out: Optional[np.ndarray] = None) -> Received:
        """Gets the field at ``date`` into ``out`` (a new zeroed array if None).

        Returns ``(info, array)``: :attr:`Info.RECVD` and the received values on a coupling
        date, else :attr:`Info.OK` and the array untouched. Waits for the data.
        """
        a = self.zeros() if out is None else self._check("get", out, writable=True)
        info = ctypes.c_int(-1)
        self.coupler._call(self.coupler._lib.isthmus_coupler_get, self.id,
                           operator.index(date), a.ctypes.data, ctypes.byref(info))
        return Received(Info(info.value), a)

    def zeros(self) -> np.ndarray:
        """A zeroed array for this field (:attr:`shape`, :attr:`dtype`)."""
        return np.zeros(self.shape, dtype=self.dtype)

    def put_inquire(self, date: int) -> Info:
        """What :meth:`put` at ``date`` would return, doing nothing (OASIS's put_inquire)."""
        info = ctypes.c_int(-1)
        self.coupler._call(self.coupler._lib.isthmus_coupler_put_inquire, self.id,
                           operator.index(date), ctypes.byref(info))
        return Info(info.value)

    @property
    def ncpl(self) -> int:
        """The number of couplings (configuration entries) of the field (OASIS's
        oasis_get_ncpl); 0 for a field the configuration does not name."""
        n = ctypes.c_int(0)
        self.coupler._call(self.coupler._lib.isthmus_coupler_get_ncpl, self.id, ctypes.byref(n))
        return n.value

    @property
    def periods(self) -> List[int]:
        """The coupling periods in seconds, in configuration order (OASIS's oasis_get_freqs)."""
        n = self.ncpl
        if n == 0:
            return []
        periods = (ctypes.c_int * n)()
        self.coupler._call(self.coupler._lib.isthmus_coupler_get_freqs, self.id, n, periods)
        return list(periods)

    @property
    def is_configured(self) -> bool:
        """Whether the configuration names this field (else put and get move nothing)."""
        return self.coupler.is_configured(self.name)

    def __repr__(self) -> str:
        return (f"<isthmus.Field {self.name!r} {self.direction.name.lower()} {self.dtype} "
                f"points={self.points} bundle={self.bundle}>")
