"""Maps of the toy's last exchanges in both directions, from the dumps the C toy writes
(toy_ocean.nc, toy_atmos.nc in its run directory): per direction, the field sent (what
travelled, after the time operation), the field received and its error against the analytic
function (received - analytic, on the destination's active points).

Usage: python3 plot.py RUN_DIR OUT.png        (make demo runs it)
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402

GRIDS = {"ocean": "ORCA2", "atmos": "LMDZ"}
GRID_FILES = {"ocean": "grid_torc.nc", "atmos": "grid_lmdz.nc"}


def load(run, comp):
    with netCDF4.Dataset(Path(run) / f"toy_{comp}.nc") as nc:
        d = {k: np.asarray(nc[k][:]).ravel() for k in
             ("lon", "lat", "imask", "sent", "received", "expected")}
        d["sent_name"], d["sent_date"] = nc["sent"].field, int(nc["sent"].date)
        d["recv_name"], d["recv_date"] = nc["received"].field, int(nc["received"].date)
    # the cells' corners (the grid file of the run directory), as polygons in -180..180 around
    # their centre; a cell across the date line is drawn on both sides
    with netCDF4.Dataset(Path(run) / GRID_FILES[comp]) as nc:
        clo = np.asarray(nc["clo"][:]).reshape(nc["clo"].shape[0], -1).T
        cla = np.asarray(nc["cla"][:]).reshape(nc["cla"].shape[0], -1).T
    lon = (d["lon"] + 180.0) % 360.0 - 180.0
    clo = lon[:, None] + (clo - lon[:, None] + 180.0) % 360.0 - 180.0
    cells = np.stack((clo, cla), axis=-1)
    east, west = np.nonzero(clo.max(axis=1) > 180.0)[0], np.nonzero(clo.min(axis=1) < -180.0)[0]
    d["index"] = np.concatenate((np.arange(lon.size), east, west))
    d["cells"] = np.concatenate((cells, cells[east] - [360.0, 0.0], cells[west] + [360.0, 0.0]))
    return d


def panel(ax, d, values, active, title, cmap, vmin, vmax):
    sel = np.ones(d["index"].size, bool) if active is None else active[d["index"]]
    ax.set_facecolor("0.85")  # inactive points (land for the ocean's fields)
    cells = PolyCollection(d["cells"][sel], array=values[d["index"][sel]], cmap=cmap,
                           edgecolors="face", linewidths=0.2, rasterized=True)
    cells.set_clim(vmin, vmax)
    ax.add_collection(cells)
    ax.set_xlim(-180, 180)
    ax.set_ylim(-90, 90)
    ax.set_xticks(range(-180, 181, 60))
    ax.set_yticks(range(-90, 91, 30))
    ax.set_title(title, fontsize=9)
    plt.colorbar(cells, ax=ax, shrink=0.8)


def main(run, out):
    ocean, atmos = load(run, "ocean"), load(run, "atmos")
    fig, axes = plt.subplots(2, 3, figsize=(16, 7), constrained_layout=True)
    # row 0: ocean -> atmosphere (averaged); row 1: atmosphere -> ocean (lagged)
    h = lambda seconds: f"{seconds / 3600:g} h"  # noqa: E731
    rows = ((ocean, atmos, "ocean", "atmos",
             f"sent at {h(ocean['sent_date'])}: the average of the puts "
             f"{h(ocean['sent_date'] - 18000)}-{h(ocean['sent_date'])}", ""),
            (atmos, ocean, "atmos", "ocean", f"put at {h(atmos['sent_date'])}",
             f" (LAG: the put of {h(ocean['recv_date'] - 3600)})"))
    for row, (src, dst, sname, dname, sent_how, recv_how) in enumerate(rows):
        active = dst["imask"] != 0
        err = dst["received"] - dst["expected"]
        lo, hi = 1.0, 3.0  # both functions' range
        # the ocean's land points (inactive) are left out: their coordinates are not all real
        sent_active = src["imask"] != 0 if sname == "ocean" else None
        panel(axes[row, 0], src, src["sent"], sent_active,
              f"{src['sent_name']} on {GRIDS[sname]}, {sent_how}", "viridis", lo, hi)
        panel(axes[row, 1], dst, dst["received"], active,
              f"{dst['recv_name']} on {GRIDS[dname]}, received at {h(dst['recv_date'])}"
              f"{recv_how}", "viridis", lo, hi)
        e = float(np.max(np.abs(err[active])))
        rms = float(np.sqrt(np.mean(err[active] ** 2)))
        panel(axes[row, 2], dst, err, active,
              f"{dst['recv_name']} - analytic: max {e:.3f}, rms {rms:.4f}", "RdBu_r", -e, e)
    fig.suptitle("isthmus toy: ORCA2 ocean <-> LMDZ atmosphere, bilinear weights "
                 "(examples/toy)", fontsize=11)
    fig.savefig(out, dpi=80)
    print(f"plot.py: wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RUN_DIR OUT.png")
    main(sys.argv[1], sys.argv[2])
