"""``isthmus plot RESULTS``: scaling curves (PNG, log-log) from a results file.

One PNG per benchmark in RESULTS (JSON lines from ``isthmus simulate`` or ``make bench``), one
line per method (and platform), markers at the measured rank counts.
"""

import argparse
import sys


def register(subparsers):
    p = subparsers.add_parser("plot", help="draw scaling curves from a results file",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", help="JSON-lines results file")
    p.add_argument("-o", "--output", default=None,
                   help="PNG path (one benchmark) or stem (several: STEM-<bench>.png); default "
                        "RESULTS-<bench>.png")
    p.add_argument("--x", default=None, help="x key (dotted path; default the ranks)")
    p.add_argument("--y", default="median_s", help="y key (default %(default)s)")
    p.set_defaults(func=main)


def main(args) -> int:
    from isthmus.sim import plot

    try:
        paths = plot.plot(args.results, args.output, args.x, args.y)
    except (OSError, ValueError) as e:
        print(f"isthmus plot: {e}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0
