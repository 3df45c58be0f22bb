"""``isthmus config``: check a coupling configuration, or convert a namcouple to YAML.

    isthmus config check FILE                  print what was understood (exit 0), or the error
    isthmus config convert NAMCOUPLE [-o OUT]  write the YAML form (to OUT, or standard output)

FILE is an OASIS3-MCT namcouple (2.0 to 5.0) or isthmus's YAML form (docs/coupler-config.md).
An error names the file, the line and the keyword, and the exit code is 1. The reading is the C
library's (isthmus_config_check/convert in libisthmus.so through ctypes, found as for
``isthmus decompose``: --lib, ISTHMUS_LIB, ISTHMUS_BUILD_DIR or build/); no MPI is started.
"""

import argparse
import ctypes
import sys
from pathlib import Path

from isthmus.commands.decompose import find_library


def _text_call(lib, function: str, path: str):
    """Calls a two-pass text function of the C API; returns (code, text or error message)."""
    f = getattr(lib, function)
    f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
                  ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p, ctypes.c_int64]
    f.restype = ctypes.c_int
    err = ctypes.create_string_buffer(4096)
    length = ctypes.c_int64(0)
    raw = str(path).encode()
    rc = f(raw, None, 0, ctypes.byref(length), err, len(err))
    if rc != 0:
        return rc, err.value.decode(errors="replace")
    buf = ctypes.create_string_buffer(length.value + 1)
    rc = f(raw, buf, len(buf), ctypes.byref(length), err, len(err))
    if rc != 0:
        return rc, err.value.decode(errors="replace")
    return 0, buf.value.decode()


def _message(text: str) -> str:
    # The C API prefixes the function name; the command line says which command failed itself.
    for prefix in ("isthmus: isthmus_config_check: ", "isthmus: isthmus_config_convert: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def check(args) -> int:
    lib = ctypes.CDLL(str(find_library(args.lib)))
    rc, text = _text_call(lib, "isthmus_config_check", args.file)
    if rc != 0:
        print(f"isthmus config check: {_message(text)}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def convert(args) -> int:
    lib = ctypes.CDLL(str(find_library(args.lib)))
    rc, text = _text_call(lib, "isthmus_config_convert", args.file)
    if rc != 0:
        print(f"isthmus config convert: {_message(text)}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(text)
        print(f"isthmus config convert: {args.file} -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def register(subparsers):
    p = subparsers.add_parser("config", help="check a namcouple or YAML configuration, or convert "
                              "a namcouple to YAML", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="config_command", metavar="ACTION")
    c = sub.add_parser("check", help="print what was understood, or the error")
    c.add_argument("file", help="namcouple or YAML file")
    c.add_argument("--lib", help="path of libisthmus.so")
    c.set_defaults(func=check)
    v = sub.add_parser("convert", help="write the YAML form of a namcouple")
    v.add_argument("file", help="namcouple (or YAML) file")
    v.add_argument("-o", "--output", help="YAML file to write (default: standard output)")
    v.add_argument("--lib", help="path of libisthmus.so")
    v.set_defaults(func=convert)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])
