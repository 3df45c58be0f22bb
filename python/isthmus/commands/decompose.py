"""``isthmus decompose``: NEMO's optimal domain decomposition of a structured grid.

    isthmus decompose --grid NX NY --procs P [--mask FILE:VAR] [--fold T|F]
                      [--cores-per-node C] [--png FILE] [--json]

Chooses the layout (ni x nj subdomains) whose largest subdomain is smallest once land-only
subdomains are removed (GMD 2022, sect. 2.1), prints the layout, the largest subdomain, the
removed land subdomains and, with --cores-per-node, the fraction of neighbour messages that
cross nodes with NEMO's default line placement and with square-node placement (Fig. 11); and
draws the layout as a PNG. The computation is the C library's (libisthmus.so through ctypes:
ISTHMUS_LIB, or libisthmus.so in ISTHMUS_BUILD_DIR, or build/ of the source tree).

The mask is a NetCDF variable of shape (NY, NX); by default nonzero means ocean (NEMO's tmask);
--oasis-mask reads OASIS's convention (0 = ocean, nonzero = masked).
"""

import argparse
import ctypes
import json
import os
import sys
from pathlib import Path

BOUNDARIES = {"closed": 0, "periodic": 1, "biperiodic": 2, "fold-t": 3, "fold-f": 4}


class LayoutInfo(ctypes.Structure):
    _fields_ = [("nx", ctypes.c_int64), ("ny", ctypes.c_int64), ("ni", ctypes.c_int),
                ("nj", ctypes.c_int), ("nsubdomains", ctypes.c_int),
                ("land_removed", ctypes.c_int), ("halo", ctypes.c_int),
                ("boundary", ctypes.c_int), ("largest_subdomain", ctypes.c_int64)]


def find_built(relative: str, env: str, explicit=None, executable: bool = False,
               extra=()) -> Path:
    """A file of the build: `explicit`, else $`env`, else `relative` in $ISTHMUS_BUILD_DIR, else
    in build/ of the source tree, else the `extra` candidates; the first that exists (and is
    executable, if asked)."""
    candidates = []
    if explicit:
        candidates.append(Path(explicit))
    if os.environ.get(env):
        candidates.append(Path(os.environ[env]))
    if os.environ.get("ISTHMUS_BUILD_DIR"):
        candidates.append(Path(os.environ["ISTHMUS_BUILD_DIR"]) / relative)
    src = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[3]))
    candidates.append(src / "build" / relative)
    candidates.extend(Path(c) for c in extra)
    for c in candidates:
        if c.is_file() and (not executable or os.access(c, os.X_OK)):
            return c
    raise FileNotFoundError(f"{Path(relative).name} not found (tried " +
                            ", ".join(str(c) for c in candidates) +
                            f"); build it (make build) or set {env}")


def find_library(explicit=None) -> Path:
    return find_built("libisthmus.so", "ISTHMUS_LIB", explicit)


class Library:
    """The few C entry points this command needs, on a context over MPI_COMM_SELF."""

    def __init__(self, path: Path):
        from mpi4py import MPI  # initialises MPI (singleton) for the context

        self.lib = ctypes.CDLL(str(path))
        L = self.lib
        L.isthmus_last_error.restype = ctypes.c_char_p
        L.isthmus_context_create_f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        L.isthmus_layout_create_optimal.argtypes = [
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_int,
            ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        L.isthmus_layout_get_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(LayoutInfo)]
        L.isthmus_layout_warning.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)]
        L.isthmus_layout_block_ranks.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        L.isthmus_layout_starts.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64),
                                            ctypes.POINTER(ctypes.c_int64)]
        L.isthmus_layout_place_on_nodes.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                    ctypes.POINTER(ctypes.c_int)]
        L.isthmus_layout_internode_fraction.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                        ctypes.POINTER(ctypes.c_double)]
        L.isthmus_layout_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        L.isthmus_context_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.ctx = ctypes.c_void_p()
        self._check(L.isthmus_context_create_f(MPI.COMM_SELF.py2f(), ctypes.byref(self.ctx)))

    def _check(self, rc):
        if rc != 0:
            msg = self.lib.isthmus_last_error(self.ctx) if self.ctx else None
            raise RuntimeError(msg.decode() if msg else f"error code {rc}")

    def optimal(self, nx, ny, procs, halo, boundary, mask):
        layout = ctypes.c_void_p()
        buf = None
        if mask is not None:
            buf = (ctypes.c_uint8 * (nx * ny)).from_buffer_copy(bytes(mask))
        self._check(self.lib.isthmus_layout_create_optimal(
            self.ctx, nx, ny, procs, halo, boundary, buf, 0, ctypes.byref(layout)))
        return layout

    def describe(self, layout):
        info = LayoutInfo()
        self._check(self.lib.isthmus_layout_get_info(layout, ctypes.byref(info)))
        warn = ctypes.c_char_p()
        self._check(self.lib.isthmus_layout_warning(layout, ctypes.byref(warn)))
        ranks = (ctypes.c_int * (info.ni * info.nj))()
        self._check(self.lib.isthmus_layout_block_ranks(layout, ranks))
        si = (ctypes.c_int64 * (info.ni + 1))()
        sj = (ctypes.c_int64 * (info.nj + 1))()
        self._check(self.lib.isthmus_layout_starts(layout, si, sj))
        return info, (warn.value or b"").decode(), list(ranks), list(si), list(sj)

    def internode(self, layout, cores):
        f = ctypes.c_double()
        self._check(self.lib.isthmus_layout_internode_fraction(layout, cores, ctypes.byref(f)))
        return f.value

    def place(self, layout, cores):
        tile = (ctypes.c_int * 2)()
        self._check(self.lib.isthmus_layout_place_on_nodes(layout, cores, tile))
        return list(tile)

    def destroy(self, layout):
        self.lib.isthmus_layout_destroy(ctypes.byref(layout))

    def close(self):
        self.lib.isthmus_context_destroy(ctypes.byref(self.ctx))


def read_mask(spec: str, nx: int, ny: int, oasis: bool):
    import netCDF4
    import numpy as np

    path, sep, var = spec.rpartition(":")
    if not sep or not path or not var:
        raise ValueError(f"--mask '{spec}': expected FILE:VAR")
    with netCDF4.Dataset(path) as ds:
        if var not in ds.variables:
            raise ValueError(f"--mask {spec}: no variable '{var}' in {path} (variables: "
                             f"{', '.join(ds.variables)})")
        m = np.asarray(ds.variables[var][:])
    m = np.squeeze(m)
    if m.ndim == 3:  # (z, y, x): ocean where any level is ocean (NEMO: land at all levels)
        m = (m != 0).any(axis=0) if not oasis else (m == 0).any(axis=0)
        ocean = m
    elif m.ndim == 2:
        ocean = (m == 0) if oasis else (m != 0)
    else:
        raise ValueError(f"--mask {spec}: variable has shape {m.shape}; need (NY, NX)")
    if ocean.shape != (ny, nx):
        raise ValueError(f"--mask {spec}: shape {ocean.shape} does not match --grid {nx} {ny} "
                         f"(need ({ny}, {nx}))")
    return np.ascontiguousarray(ocean.astype(np.uint8))


def draw(png, nx, ny, info, ranks, si, sj, mask, cores, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(8, 8 * ny / max(nx, 1) + 0.8))
    if mask is not None:
        ax.imshow(np.where(mask.reshape(ny, nx) != 0, 1.0, 0.0), origin="lower", cmap="Blues",
                  vmin=-0.5, vmax=1.5, extent=(0, nx, 0, ny), interpolation="nearest")
    cmap = plt.get_cmap("tab20")
    for bj in range(info.nj):
        for bi in range(info.ni):
            r = ranks[bj * info.ni + bi]
            x0, y0 = si[bi], sj[bj]
            w, h = si[bi + 1] - x0, sj[bj + 1] - y0
            if r < 0:
                ax.add_patch(Rectangle((x0, y0), w, h, facecolor="0.55", edgecolor="k",
                                       hatch="//", linewidth=0.5, alpha=0.8))
                continue
            color = cmap((r // cores) % 20) if cores else "none"
            ax.add_patch(Rectangle((x0, y0), w, h, facecolor=color, edgecolor="k",
                                   linewidth=0.6, alpha=0.45 if cores else 1.0))
            if info.ni * info.nj <= 400:
                ax.text(x0 + w / 2, y0 + h / 2, str(r), ha="center", va="center", fontsize=6)
    ax.set_xlim(0, nx)
    ax.set_ylim(0, ny)
    ax.set_xlabel("i")
    ax.set_ylabel("j")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def register(subparsers):
    p = subparsers.add_parser("decompose", help="optimal domain decomposition of a grid (NEMO)",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", nargs=2, type=int, required=True, metavar=("NX", "NY"))
    p.add_argument("--procs", type=int, required=True, help="number of processes")
    p.add_argument("--mask", help="land-sea mask FILE:VAR (NetCDF, shape NY x NX)")
    p.add_argument("--oasis-mask", action="store_true",
                   help="the mask uses OASIS's convention (0 = ocean)")
    p.add_argument("--fold", choices=["T", "F"], help="tripolar north fold pivot")
    p.add_argument("--boundary", choices=["closed", "periodic", "biperiodic"], default=None,
                   help="boundary without a fold (default closed; periodic with --fold)")
    p.add_argument("--halo", type=int, default=1, help="halo width (default 1)")
    p.add_argument("--cores-per-node", type=int, default=0, help="place ranks on nodes of C cores")
    p.add_argument("--png", default="decomposition.png", help="picture (default %(default)s)")
    p.add_argument("--no-png", action="store_true", help="do not draw the picture")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--lib", help="path of libisthmus.so")
    p.set_defaults(func=main)


def main(args) -> int:
    nx, ny = args.grid
    if args.fold and args.boundary:
        print("isthmus decompose: --fold and --boundary exclude each other", file=sys.stderr)
        return 2
    bname = f"fold-{args.fold.lower()}" if args.fold else (args.boundary or "closed")
    try:
        mask = read_mask(args.mask, nx, ny, args.oasis_mask) if args.mask else None
        lib = Library(find_library(args.lib))
    except (ValueError, FileNotFoundError, OSError, ImportError) as e:
        print(f"isthmus decompose: {e}", file=sys.stderr)
        return 1
    try:
        layout = lib.optimal(nx, ny, args.procs, args.halo, BOUNDARIES[bname],
                             None if mask is None else mask.tobytes())
    except RuntimeError as e:
        print(f"isthmus decompose: {e}", file=sys.stderr)
        lib.close()
        return 1
    info, warning, ranks, si, sj = lib.describe(layout)
    widths = [si[k + 1] - si[k] for k in range(info.ni)]
    heights = [sj[k + 1] - sj[k] for k in range(info.nj)]
    out = {"nx": nx, "ny": ny, "procs": args.procs, "boundary": bname, "halo": args.halo,
           "ni": info.ni, "nj": info.nj, "subdomains": info.nsubdomains,
           "land_removed": info.land_removed, "largest_subdomain_points": info.largest_subdomain,
           "largest_subdomain_shape": [max(widths) + 2 * args.halo, max(heights) + 2 * args.halo],
           "j_sizes": heights, "warning": warning}
    if args.cores_per_node > 0:
        line = lib.internode(layout, args.cores_per_node)
        tile = lib.place(layout, args.cores_per_node)
        square = lib.internode(layout, args.cores_per_node)
        out.update({"cores_per_node": args.cores_per_node, "internode_fraction_line": line,
                    "internode_fraction_square": square, "node_tile": tile})
        info, warning, ranks, si, sj = lib.describe(layout)
    if not args.no_png:
        title = (f"{nx} x {ny}, {args.procs} processes: {info.ni} x {info.nj} layout, "
                 f"{info.nsubdomains} subdomains, {info.land_removed} land-only removed")
        draw(args.png, nx, ny, info, ranks, si, sj, mask, args.cores_per_node, title)
        out["png"] = args.png
    lib.destroy(layout)
    lib.close()
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return 0
    print(f"grid {nx} x {ny}, {args.procs} processes, boundary {bname}, halo {args.halo}")
    print(f"layout: {info.ni} x {info.nj} = {info.ni * info.nj} subdomains, "
          f"{info.land_removed} land-only removed, {info.nsubdomains} used")
    print(f"largest subdomain: {out['largest_subdomain_shape'][0]} x "
          f"{out['largest_subdomain_shape'][1]} = {info.largest_subdomain} points (with halo)")
    print("j sizes (south to north): " + " ".join(str(h) for h in heights))
    if args.cores_per_node > 0:
        print(f"inter-node message fraction ({args.cores_per_node} cores per node): "
              f"{100 * out['internode_fraction_line']:.1f} % with line placement, "
              f"{100 * out['internode_fraction_square']:.1f} % with square-node placement "
              f"({out['node_tile'][0]} x {out['node_tile'][1]} tiles, used)")
    if warning:
        print(f"warning: {warning}")
    if not args.no_png:
        print(f"picture: {args.png}")
    return 0
