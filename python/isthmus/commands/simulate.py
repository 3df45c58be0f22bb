"""``isthmus simulate BENCH --platform P --ranks N [bench args]``: a benchmark under SimGrid SMPI.

BENCH is one of the project's benchmarks (bench/<name>/, built in build-smpi/ on demand) or the
path of a program compiled with smpicc/smpicxx. Options this command does not know are passed to
the benchmark, as is everything after ``--``. The benchmark's JSON lines are printed and appended,
with the platform, the SimGrid options, wall time and peak memory (PSS), to the results file.

SimGrid is Debian's 3.32 unless ``--simgrid PREFIX`` (or ISTHMUS_SIMGRID=PREFIX) names another
installation, e.g. 4.1 built by sim/build_simgrid.sh; its builds go to build-smpi-simgrid<version>/.
"""

import argparse
import json
import sys
from pathlib import Path


def _add_options(p, suppress=False):
    d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
    p.add_argument("--platform", default=d(None),
                   help="preset (tansuo, curie, torus-m, fattree-m, dragonfly-mm, dragonfly-sl, "
                        "dragonfly-ls) or topology (crossbar, fattree, torus, dragonfly), with "
                        "overrides: 'crossbar:nodes=2,bw=1GBps,lat=10us', 'torus:dims=8x8x8'")
    p.add_argument("--ranks", type=int, default=d(None), help="number of simulated ranks")
    p.add_argument("--ranks-per-node", type=int, default=d(None),
                   help="ranks placed on each node (default: the platform's cores per node)")
    p.add_argument("--results", default=d("sim-results.jsonl"),
                   help="JSON-lines file the records are appended to (default %(default)s)")
    p.add_argument("--cfg", action="append", default=d([]), metavar="KEY:VALUE",
                   help="extra SimGrid option (repeatable), e.g. --cfg smpi/or:0:1e-6:0")
    p.add_argument("--calibration", default=d(None), metavar="NAME",
                   help="per-message cost calibration (docs/simulation.md, 'Calibration'): "
                        "dahu (published SMPI calibration of an HPC cluster), local-shm (this "
                        "machine's Open MPI), each with '+ib' for SimGrid's InfiniBand "
                        "contention model; default: the platform's placeholder overheads")
    p.add_argument("--build-dir", default=d(None),
                   help="SMPI build directory (default build-smpi/ of the source tree, "
                        "build-smpi-simgrid<version>/ with --simgrid)")
    p.add_argument("--simgrid", default=d(None), metavar="PREFIX",
                   help="SimGrid installation to build and run with (default $ISTHMUS_SIMGRID, "
                        "else the smpicc/smpirun in PATH: Debian's 3.32); sim/build_simgrid.sh "
                        "installs 4.1 in /work/simgrid-4.1")
    p.add_argument("--no-build", action="store_true", default=d(False),
                   help="do not configure/build the benchmark first")
    p.add_argument("--privatize", action="store_true", default=d(False),
                   help="keep SMPI's globals privatization (code with global state, Fortran "
                        "modules); slower")
    p.add_argument("--simulate-computation", action="store_true", default=d(False),
                   help="benchmark computation and inject it as simulated time "
                        "(non-deterministic)")
    p.add_argument("--full-platform", action="store_true", default=d(False),
                   help="instantiate the whole platform even when the ranks use a part of it")
    p.add_argument("--workdir", default=d(None),
                   help="keep platform, host file and SimGrid log in this directory")
    p.add_argument("--no-progress", action="store_true", default=d(False),
                   help="no progress bar")
    p.add_argument("--timeout", type=float, default=d(None), help="wall-clock limit (s)")


def register(subparsers):
    p = subparsers.add_parser(
        "simulate", help="run a benchmark under SimGrid SMPI on a simulated network",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bench", help="benchmark name (bench/<name>) or SMPI-compiled executable")
    _add_options(p)
    p.add_argument("bench_args", nargs=argparse.REMAINDER,
                   help="arguments for the benchmark (unknown options and anything after --)")
    p.set_defaults(func=main)


def main(args) -> int:
    from isthmus.sim import runner

    # Options written after BENCH land in bench_args: take ours back, leave the rest.
    rest = list(args.bench_args)
    tail = []
    if "--" in rest:
        i = rest.index("--")
        rest, tail = rest[:i], rest[i + 1:]
    again = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_options(again, suppress=True)
    ours, unknown = again.parse_known_args(rest)
    for k, v in vars(ours).items():
        setattr(args, k, v)
    bench_args = unknown + tail
    if not args.platform or not args.ranks:
        print("isthmus simulate: --platform and --ranks are required", file=sys.stderr)
        return 2
    try:
        res = runner.run(args.bench, args.platform, args.ranks, bench_args,
                         ranks_per_node=args.ranks_per_node, build_dir=args.build_dir,
                         build=not args.no_build, cfg=args.cfg, privatize=args.privatize,
                         simulate_computation=args.simulate_computation,
                         full_platform=args.full_platform,
                         results=Path(args.results) if args.results else None,
                         workdir=Path(args.workdir) if args.workdir else None,
                         progress=False if args.no_progress else None, timeout=args.timeout,
                         simgrid=args.simgrid, calibration=args.calibration)
    except (ValueError, FileNotFoundError, RuntimeError, TimeoutError) as e:
        print(f"isthmus simulate: {e}", file=sys.stderr)
        return 1
    for rec in res.records:
        print(json.dumps(rec, sort_keys=True))
    print(f"isthmus simulate: {args.ranks} ranks on {args.platform}: wall {res.wall_s:.1f} s "
          f"(CPU {res.meta['cpu_s']:.1f} s), "
          f"peak PSS {res.peak_pss_bytes / 2**30:.2f} GiB, simulated end "
          f"{res.simulated_s if res.simulated_s is not None else '?'} s", file=sys.stderr)
    if res.returncode != 0:
        print(f"isthmus simulate: smpirun failed with code {res.returncode}; log in "
              f"{res.workdir / 'smpirun.log'}:\n{res.log_tail}", file=sys.stderr)
        return 1
    if not res.records:
        print("isthmus simulate: the benchmark printed no JSON record", file=sys.stderr)
        return 1
    if args.results:
        print(f"isthmus simulate: appended {len(res.records)} record(s) to {args.results}",
              file=sys.stderr)
    return 0
