"""OASIS's parameters as pyoasis names them (``OasisParameters``, alias ``OASIS``)."""

from enum import Enum


class OasisParameters(Enum):
    """OASIS3-MCT's directions and info codes, with pyoasis's values; each has a short alias
    (``OASIS.OUT`` is ``OasisParameters.OASIS_OUT``)."""

    OASIS_OK = 0
    OASIS_NOTDEF = -2
    OASIS_VAR_UNCPL = -1
    OASIS_OUT = 20
    OASIS_IN = 21
    OASIS_INOUT = 2
    OASIS_RECVD = 3
    OASIS_SENT = 4
    OASIS_LOCTRANS = 5
    OASIS_TOREST = 6
    OASIS_OUTPUT = 7
    OASIS_SENTOUT = 8
    OASIS_TORESTOUT = 9
    OASIS_FROMREST = 10
    OASIS_INPUT = 11
    OASIS_RECVOUT = 12
    OASIS_FROMRESTOUT = 13
    OASIS_WAITGROUP = 14
    OK = 0
    NOTDEF = -2
    VAR_UNCPL = -1
    OUT = 20
    IN = 21
    INOUT = 2
    RECVD = 3
    SENT = 4
    LOCTRANS = 5
    TOREST = 6
    OUTPUT = 7
    SENTOUT = 8
    TORESTOUT = 9
    FROMREST = 10
    INPUT = 11
    RECVOUT = 12
    FROMRESTOUT = 13
    WAITGROUP = 14


OASIS = OasisParameters
