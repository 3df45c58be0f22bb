"""pyoasis's two exceptions: OASIS (here: isthmus) failed, or an argument is wrong."""

from __future__ import annotations

from ..coupler import IsthmusError


class OasisException(IsthmusError):
    """A call of the coupler failed: ``text (error)`` as pyoasis says it, then isthmus's
    message (which names the rank, the call and what was wrong). ``error`` is isthmus's
    error code (:class:`isthmus.ErrorCode`); also an :class:`isthmus.IsthmusError`."""

    def __init__(self, text: str, error: int, detail: str = "") -> None:
        full = f"{text} ({int(error)})" + (f": {detail}" if detail else "")
        super().__init__(error, full)
        self.error: int = int(error)
        self.text: str = text


class PyOasisException(Exception):
    """An incorrect argument, found by the Python layer before any call."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
