"""``isthmus weights``: generate remapping weights (SCRIP format) in parallel, or check a file.

    isthmus weights --src GRID --dst GRID --method STACK --out FILE [--ranks N]
                    [--normalization destarea|fracarea|fracnnei] [--neighbours N]
                    [--variance V] [--order 1|2] [--masks isthmus|oasis]
                    [--stream-source] [--slab-points N] [--grids parts|whole]
    isthmus weights --namcouple FILE [--run-dir DIR] [--ranks N]
    isthmus weights --check FILE [--json]

GRID is a SCRIP grid file, a CF file with lon/lat bounds, a file laid out as the shared data's
grid_*.nc (lon, lat, clo, cla, imask), or OASIS's grids.nc as ``DIR/grids.nc:NAME`` (masks.nc
and areas.nc read from beside it). STACK is the interpolation stack: methods tried in order for
each destination point, e.g. ``conservative,bilinear,nearest,fixed=0`` (docs/weights.md).
``--ranks N`` runs the generator (the C++ program isthmus_weights) on N MPI ranks.

``--namcouple`` makes, ahead of a coupled run, the weights file of every SCRIPR entry of an
OASIS namcouple (or an isthmus YAML configuration) as the coupler would at its start: the same
file names (``rmp_<src>_to_<dst>_<METHOD>.nc``), grids from the run directory's grids.nc,
masks.nc and areas.nc (``--run-dir``, by default the namcouple's), the same methods, options and
cache key, so that the coupled run then reads them instead of generating them on its own ranks.
A file already there is kept, as the coupler keeps it.

``--check`` applies a weights file (ours or anyone's) to analytic test functions and prints, per
function, the interpolation error over the destination points the file maps, and the
conservation error (the destination integral against the source integral, with the file's cell
areas and fractions) — as ESMF's weight check does.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

from isthmus.commands.decompose import find_built


def find_tool(explicit=None) -> Path:
    """The isthmus_weights program: --tool, $ISTHMUS_WEIGHTS, $ISTHMUS_BUILD_DIR, build/, PATH."""
    on_path = shutil.which("isthmus_weights")
    return find_built("tools/weights/isthmus_weights", "ISTHMUS_WEIGHTS", explicit,
                      executable=True, extra=[on_path] if on_path else [])


def mpirun_command(ranks: int):
    """The launcher: $MPIRUN as given (any MPI's; e.g. MPICH's mpiexec.mpich), or Open MPI's
    mpirun with what it needs here: as root, and with more ranks than cores."""
    if os.environ.get("MPIRUN"):
        return [os.environ["MPIRUN"], "-n", str(ranks)]
    cmd = ["mpirun", "-n", str(ranks)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if ranks > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    return cmd


# Set by batch systems (and SGE's host list): mpirun may then place ranks on other nodes.
_ALLOCATIONS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "COBALT_JOBID", "FLUX_JOB_ID",
                "PE_HOSTFILE", "OMPI_MCA_orte_default_hostfile")


def launch(argv, ranks: int, mpirun: bool = False):
    """The command and environment that run isthmus_weights (argv) on `ranks` ranks.

    One rank runs as a singleton (no launcher; the program itself then skips Open MPI's network
    search and runtime daemon). Several ranks run under mpirun_command; when that is Open MPI's
    mpirun outside a batch allocation, every rank is on this node and Open MPI's default search
    for a network (the cm PML opening libfabric and PSM: 0.2 s a process here) buys nothing, so
    the ranks take the shared-memory PML it would choose anyway. A user's own settings win."""
    env = dict(os.environ)
    if ranks > (os.cpu_count() or 1):
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    if ranks == 1 and not mpirun:
        return list(argv), env
    if not os.environ.get("MPIRUN") and not any(os.environ.get(v) for v in _ALLOCATIONS):
        env.setdefault("OMPI_MCA_pml", "ob1")
    return mpirun_command(ranks) + list(argv), env


def generate(args) -> int:
    try:
        tool = find_tool(args.tool)
    except FileNotFoundError as e:
        print(f"isthmus weights: {e}", file=sys.stderr)
        return 1
    if args.namcouple:
        argv = [str(tool), "--namcouple", args.namcouple]
        if args.run_dir:
            argv += ["--run-dir", args.run_dir]
        cmd, env = launch(argv, args.ranks, args.mpirun)
        return subprocess.call(cmd, env=env)
    argv = [str(tool), "--src", args.src, "--dst", args.dst, "--method", args.method,
            "--out", args.out, "--normalization", args.normalization,
            "--neighbours", str(args.neighbours), "--variance", str(args.variance),
            "--order", str(args.order), "--masks", args.masks]
    if args.stream_source is not None:
        argv.append("--stream-source" if args.stream_source else "--no-stream-source")
    if args.slab_points:
        argv += ["--slab-points", str(args.slab_points)]
    if args.grids:
        argv += ["--grids", args.grids]
    cmd, env = launch(argv, args.ranks, args.mpirun)
    return subprocess.call(cmd, env=env)


# ---- --check ------------------------------------------------------------------------------

def _test_functions():
    import numpy as np

    def smooth(lon, lat):          # 2 + cos²(lat)·cos(2·lon)
        return 2.0 + np.cos(lat) ** 2 * np.cos(2.0 * lon)

    def harmonic(lon, lat):        # a spherical harmonic of degree 16 (Y_16^16's real part) + 2
        return 2.0 + np.cos(lat) ** 16 * np.cos(16.0 * lon)

    def vortex(lon, lat):          # a steep field: 1 - tanh of the distance to a point
        x0, y0, z0 = math.cos(0.3) * math.cos(-1.0), math.cos(0.3) * math.sin(-1.0), math.sin(0.3)
        d = np.arccos(np.clip(np.cos(lat) * np.cos(lon) * x0 + np.cos(lat) * np.sin(lon) * y0
                              + np.sin(lat) * z0, -1.0, 1.0))
        return 2.0 - np.tanh(3.0 * d)

    return {"smooth": smooth, "harmonic16": harmonic, "vortex": vortex}


def _radians(var):
    import numpy as np
    data = np.asarray(var[:], dtype=float)
    units = getattr(var, "units", "radians").lower()
    return np.deg2rad(data) if units.startswith("deg") else data


def check_file(path: str) -> dict:
    """The figures of --check for one weights file (see the module's docstring)."""
    import numpy as np
    from netCDF4 import Dataset

    with Dataset(path) as nc:
        v = nc.variables
        for name in ("src_address", "dst_address", "remap_matrix", "src_grid_center_lat",
                     "src_grid_center_lon", "dst_grid_center_lat", "dst_grid_center_lon"):
            if name not in v:
                raise ValueError(f"{path}: no variable {name} (--check needs the weights file's "
                                 "grid variables, which SCRIP, OASIS, CDO and isthmus write)")
        src = np.asarray(v["src_address"][:], dtype=np.int64) - 1
        dst = np.asarray(v["dst_address"][:], dtype=np.int64) - 1
        w = np.asarray(v["remap_matrix"][:], dtype=float)[:, 0]
        slon, slat = _radians(v["src_grid_center_lon"]), _radians(v["src_grid_center_lat"])
        dlon, dlat = _radians(v["dst_grid_center_lon"]), _radians(v["dst_grid_center_lat"])
        ns, nd = slon.size, dlon.size
        smask = np.asarray(v["src_grid_imask"][:]) != 0 if "src_grid_imask" in v else np.ones(ns, bool)
        sarea = np.asarray(v["src_grid_area"][:], float) if "src_grid_area" in v else None
        darea = np.asarray(v["dst_grid_area"][:], float) if "dst_grid_area" in v else None
        dfrac = np.asarray(v["dst_grid_frac"][:], float) if "dst_grid_frac" in v else None
        sfrac = np.asarray(v["src_grid_frac"][:], float) if "src_grid_frac" in v else None
        method = getattr(nc, "map_method", "")
        norm = getattr(nc, "normalization", "")
    keep = (src >= 0) & (dst >= 0) & (w != 0.0)  # SCRIP's null links and zero weights
    src, dst, w = src[keep], dst[keep], w[keep]
    mapped = np.zeros(nd, bool)
    mapped[dst] = True
    result = {"file": path, "map_method": method, "normalization": norm, "links": int(src.size),
              "src_points": int(ns), "dst_points": int(nd), "dst_mapped": int(mapped.sum()),
              "functions": {}}
    for name, f in _test_functions().items():
        fs = f(slon, slat)
        fd = np.zeros(nd)
        np.add.at(fd, dst, w * fs[src])
        exact = f(dlon, dlat)
        err = np.abs(fd[mapped] - exact[mapped]) / np.abs(exact[mapped])
        entry = {"max_rel_error": float(err.max()) if err.size else 0.0,
                 "rms_rel_error": float(np.sqrt(np.mean(err ** 2))) if err.size else 0.0}
        if "onserv" in method.lower():
            # Conservation: the source integral over the active cells, each counted by the
            # fraction of it the destination's active cells cover (src_grid_frac), against the
            # destination integral, each cell counted by its covered fraction (dst_grid_frac)
            # when the weights are FRACAREA-normalised. Only with sane areas and fractions:
            # OASIS 2.0's SCRIP writes src_grid_frac = 0 and negative areas and fractions.
            why = None
            if sarea is None or darea is None or sfrac is None or dfrac is None:
                why = "the file has no grid areas or fractions"
            elif (sarea < 0).any() or (darea < 0).any() or (dfrac < 0).any() or not (sfrac > 0).any():
                why = "the file's grid areas or fractions are invalid (negative, or all 0)"
            if why:
                entry["conservation_rel_error"] = None
                result["conservation_note"] = why
            else:
                scale = dfrac if norm.lower() == "fracarea" else np.ones(nd)
                src_int = float(np.sum((fs * sarea * sfrac)[smask]))
                dst_int = float(np.sum((fd * darea * scale)[mapped]))
                entry["conservation_rel_error"] = abs(dst_int - src_int) / abs(src_int)
        result["functions"][name] = entry
    return result


def check(args) -> int:
    try:
        r = check_file(args.check)
    except (OSError, ValueError, KeyError) as e:
        print(f"isthmus weights --check: {e}", file=sys.stderr)
        return 1
    print(f"{r['file']}: {r['map_method']} ({r['normalization'] or 'no normalization'}), "
          f"{r['links']} links, {r['dst_mapped']} of {r['dst_points']} destination points mapped")
    for name, e in r["functions"].items():
        line = f"  {name:11s} max rel error {e['max_rel_error']:.3e}  rms {e['rms_rel_error']:.3e}"
        if e.get("conservation_rel_error") is not None:
            line += f"  conservation {e['conservation_rel_error']:.3e}"
        print(line)
    if r.get("conservation_note"):
        print(f"  conservation not checked: {r['conservation_note']}")
    if args.json:
        print(json.dumps(r))
    return 0


def main(args) -> int:
    if args.check:
        return check(args)
    given = [o for o in ("src", "dst", "method", "out") if getattr(args, o)]
    if args.namcouple:
        if given:
            print("isthmus weights: --namcouple makes the files its SCRIPR entries name: not with "
                  + ", ".join("--" + g for g in given), file=sys.stderr)
            return 2
        return generate(args)
    if args.run_dir:
        print("isthmus weights: --run-dir goes with --namcouple", file=sys.stderr)
        return 2
    missing = [o for o in ("src", "dst", "method", "out") if o not in given]
    if missing:
        print("isthmus weights: " + ", ".join("--" + m for m in missing) + " required "
              "(or --namcouple FILE, or --check FILE)", file=sys.stderr)
        return 2
    return generate(args)


def register(subparsers):
    p = subparsers.add_parser("weights", help="generate remapping weights (SCRIP) in parallel, "
                              "or check a weights file", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", help="source grid")
    p.add_argument("--dst", help="destination grid")
    p.add_argument("--method", help="interpolation stack, e.g. conservative,nearest")
    p.add_argument("--out", help="the SCRIP weights file to write")
    p.add_argument("--ranks", type=int, default=1, help="MPI ranks (default 1)")
    p.add_argument("--normalization", default="fracarea",
                   choices=["destarea", "fracarea", "fracnnei"],
                   help="conservative normalisation (OASIS CONSERV's; default fracarea)")
    p.add_argument("--neighbours", type=int, default=4, help="nearest/gaussian: n (default 4)")
    p.add_argument("--variance", type=float, default=1.0, help="gaussian: OASIS GAUSWGT's VAR")
    p.add_argument("--order", type=int, default=1, choices=[1, 2],
                   help="conservative: first or second order")
    p.add_argument("--masks", default="isthmus", choices=["isthmus", "oasis"],
                   help="oasis: SCRIP's mask rules (nearest/gaussian drop the masked among the n "
                        "nearest; conservative serves masked destination points), as SCRIPR")
    p.add_argument("--stream-source", dest="stream_source", action="store_true", default=None,
                   help="conservative, nearest or gaussian alone: read the source (any grid format) in "
                   "slabs instead of whole (the default for sources of more than 2^23 points)")
    p.add_argument("--no-stream-source", dest="stream_source", action="store_false",
                   help="hold the source whole even if it is large")
    p.add_argument("--slab-points", type=int, default=0,
                   help="source points per slab when streaming (default 2^20)")
    p.add_argument("--grids", choices=["parts", "whole"], default=None,
                   help="parts: each rank reads its block of the destination and the source rows "
                   "that block can reach (conservative stacks; the default on more than one "
                   "rank); whole: every rank reads both grids whole")
    p.add_argument("--namcouple", metavar="FILE",
                   help="make every SCRIPR entry's weights file of this namcouple (or YAML) instead")
    p.add_argument("--run-dir", dest="run_dir", metavar="DIR",
                   help="--namcouple: the run directory (its grids.nc; where the files go)")
    p.add_argument("--check", metavar="FILE", help="check a weights file instead")
    p.add_argument("--json", action="store_true", help="--check: also print one JSON line")
    p.add_argument("--tool", help="path of isthmus_weights")
    p.add_argument("--mpirun", action="store_true", help="start under mpirun even at 1 rank")
    p.set_defaults(func=main)
