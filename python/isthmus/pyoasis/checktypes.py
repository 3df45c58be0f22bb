"""pyoasis's argument checks (``check_types``) and ``asarray``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy

from .exception import PyOasisException


def check_types(types: Sequence[type], arguments: Sequence[Any]) -> None:
    """Raises :class:`PyOasisException` unless each argument has its type (``list``: a list
    of ints; ``None`` passes any check), as pyoasis does."""
    if len(arguments) != len(types):
        raise PyOasisException(f"The function requires {len(types)} arguments.")
    for i, (t, a) in enumerate(zip(types, arguments)):
        if t is list:
            if not isinstance(a, list) or any(type(e) is not int for e in a):
                raise PyOasisException(f"The elements of the list in argument {i} must be "
                                       f"integers.")
        elif a is not None and not isinstance(a, t):
            raise PyOasisException(f"Argument {i} must be of type {t}.")


def asarray(data: Any, dtype: Any = numpy.float64) -> numpy.ndarray:
    """A Fortran-ordered numpy array of float64 (or float32) values, as pyoasis makes them."""
    if dtype not in (numpy.float64, numpy.float32):
        raise PyOasisException("Array dtype can only be float32 or float64")
    try:
        return numpy.asfortranarray(data, dtype=dtype)
    except Exception:
        raise PyOasisException("Unable to initialise the Numpy array") from None


Array = asarray  # pyoasis 3.x/4.x's name
