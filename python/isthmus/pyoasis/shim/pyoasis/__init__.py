"""``import pyoasis`` resolves to isthmus's pyoasis-compatible module when the directory
python/isthmus/pyoasis/shim is on PYTHONPATH (docs/python.md)."""

import isthmus.pyoasis as _pyoasis

_pyoasis.install()  # replaces this module in sys.modules: `pyoasis` is isthmus.pyoasis
