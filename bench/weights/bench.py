"""bench/weights: isthmus weights against CDO on the same grid pairs, in the same run.

For each grid pair and method, CDO (gennn, genbil, gencon: 1 and 2 OpenMP threads) and isthmus
(nearest with 1 neighbour, bilinear, conservative: 1 and 2 MPI ranks) write a SCRIP weights file
from the same SCRIP grid files and the same source mask (CDO takes it from a field's missing
values, isthmus from grid_imask). Each run is timed as a whole command (reading the grids, the
weights, writing the file; MPI's start included: a singleton at 1 rank, mpirun at 2, started as
`isthmus weights` starts them), repeated WEIGHTS_REPS times (the median kept), with its peak
resident memory (/usr/bin/time for CDO; for isthmus the largest rank's, from the tool). Every
file is then checked the same way (isthmus.commands.weights.check_file): the relative error of
2 + cos²(lat)·cos(2·lon) over the destination points the file maps, and how many active
destination points it leaves unmapped.

One JSON object per tool, method, pair and rank count (`tool`, `method`, `pair`, `ranks`,
`seconds`, `peak_rss_bytes`, `links`, `error` (max relative), `error_rms`, `unmapped_active`,
...) on stdout and in --out; a table on stderr.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from netCDF4 import Dataset

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from isthmus.commands.weights import check_file, launch  # noqa: E402

DATA = ROOT / "tests" / "data" / "orca2-lmdz"
METHODS = [("nearest", "gennn", "nearest", "neighbours=1"),
           ("bilinear", "genbil", "bilinear", ""),
           ("conservative", "gencon", "conservative", "")]


def write_scrip(path: Path, lon, lat, clo, cla, mask, dims):
    """A SCRIP grid file (degrees) and a field file with the mask as missing values."""
    n = lon.size
    with Dataset(path, "w") as o:
        o.createDimension("grid_size", n)
        o.createDimension("grid_corners", clo.shape[1])
        o.createDimension("grid_rank", 2)
        o.createVariable("grid_dims", "i4", ("grid_rank",))[:] = dims
        for name, a in (("grid_center_lat", lat), ("grid_center_lon", lon)):
            v = o.createVariable(name, "f8", ("grid_size",))
            v.units = "degrees"
            v[:] = a
        for name, a in (("grid_corner_lat", cla), ("grid_corner_lon", clo)):
            v = o.createVariable(name, "f8", ("grid_size", "grid_corners"))
            v.units = "degrees"
            v[:] = a
        o.createVariable("grid_imask", "i4", ("grid_size",))[:] = mask
    field = path.with_name(path.stem + "_field.nc")
    with Dataset(field, "w") as o:
        o.createDimension("x", n)
        v = o.createVariable("f", "f8", ("x",), fill_value=-9e33)
        f = 2 + np.cos(np.deg2rad(lat)) ** 2 * np.cos(2 * np.deg2rad(lon))
        v[:] = np.where(mask == 1, f, -9e33)
    return field


def write_regular(path: Path, dlon: float, dlat: float):
    """A global regular grid of dlon x dlat degree cells, every cell active."""
    nx, ny = round(360 / dlon), round(180 / dlat)
    lon2, lat2 = np.meshgrid((np.arange(nx) + 0.5) * dlon, -90 + (np.arange(ny) + 0.5) * dlat)
    hx, hy = dlon / 2, dlat / 2
    lo = np.stack([lon2 - hx, lon2 + hx, lon2 + hx, lon2 - hx], -1).reshape(-1, 4)
    la = np.stack([lat2 - hy, lat2 - hy, lat2 + hy, lat2 + hy], -1).reshape(-1, 4)
    return write_scrip(path, lon2.ravel(), lat2.ravel(), lo, la, np.ones(nx * ny, np.int32), [nx, ny])


def shared_grid(work: Path, name: str):
    with Dataset(DATA / f"grid_{name}.nc") as g:
        lon, lat = g["lon"][:], g["lat"][:]
        clo, cla, m = g["clo"][:], g["cla"][:], g["imask"][:]
    ny, nx = lon.shape
    path = work / f"{name}.nc"
    field = write_scrip(path, lon.ravel(), lat.ravel(), clo.reshape(4, -1).T, cla.reshape(4, -1).T,
                        m.ravel().astype(np.int32), [nx, ny])
    return path, field


def corners_of(lon2, lat2):
    """Cell corners of a curvilinear grid of centres (ny, nx), as the means of the four
    surrounding centres on the sphere (edges extrapolated), counter-clockwise."""
    x = np.cos(np.deg2rad(lat2)) * np.cos(np.deg2rad(lon2))
    y = np.cos(np.deg2rad(lat2)) * np.sin(np.deg2rad(lon2))
    z = np.sin(np.deg2rad(lat2))
    p = np.stack([x, y, z], -1)
    # pad: periodic in x, extrapolated in y
    p = np.concatenate([p[:, -1:], p, p[:, :1]], 1)
    p = np.concatenate([2 * p[:1] - p[1:2], p, 2 * p[-1:] - p[-2:-1]], 0)
    c = (p[:-1, :-1] + p[1:, :-1] + p[:-1, 1:] + p[1:, 1:]) / 4  # corner (j-1/2, i-1/2)
    c /= np.linalg.norm(c, axis=-1, keepdims=True)
    clon = np.rad2deg(np.arctan2(c[..., 1], c[..., 0]))
    clat = np.rad2deg(np.arcsin(np.clip(c[..., 2], -1, 1)))
    sw, se = (clon[:-1, :-1], clat[:-1, :-1]), (clon[:-1, 1:], clat[:-1, 1:])
    ne, nw = (clon[1:, 1:], clat[1:, 1:]), (clon[1:, :-1], clat[1:, :-1])
    lo = np.stack([sw[0], se[0], ne[0], nw[0]], -1).reshape(-1, 4)
    la = np.stack([sw[1], se[1], ne[1], nw[1]], -1).reshape(-1, 4)
    return lo, la


def large_pair(work: Path):
    """A 1442 x 1021 tripolar-like ocean grid (regular in longitude, Mercator-like in latitude,
    north of 40°N bent toward two poles over land at 80°E and 260°E) with a land mask, and a
    0.25° regular grid of 1440 x 720."""
    src = work / "tripolar.nc"
    dst = work / "regular025.nc"
    if not src.exists():
        nx, ny = 1442, 1021
        lon1 = -1.25 * 0.25 + np.arange(nx) * 360.0 / 1440
        t = np.linspace(-1.0, 1.0, ny)
        lat1 = np.rad2deg(np.arctan(np.sinh(t * 2.0))) * 0.96  # about -78 .. 86
        lon2, lat2 = np.meshgrid(lon1, lat1)
        north = np.clip((lat2 - 40.0) / 46.0, 0, 1)
        lat2 = lat2 - 6.0 * north ** 2 * (1 + np.cos(np.deg2rad(2 * (lon2 - 80.0))))
        clo, cla = corners_of(lon2, lat2)
        land = (np.cos(np.deg2rad(3 * lon2)) * np.cos(np.deg2rad(2 * lat2)) > 0.6) | (lat2 < -70)
        write_scrip(src, lon2.ravel(), lat2.ravel(), clo, cla,
                    (~land).ravel().astype(np.int32), [nx, ny])
    if not dst.exists():
        write_regular(dst, 0.25, 0.25)
    return (src, src.with_name(src.stem + "_field.nc")), (dst, dst.with_name(dst.stem + "_field.nc"))


def huge_pair(work: Path):
    """The issue's case users report unfinished after 7 days with ESMF: an 8962 x 9040
    curvilinear source (81 M cells; analytic, bent in both directions, a land mask of ~30 %),
    written in slabs of rows (6.8 GB), to a 1.25° x 1° regular grid (288 x 180)."""
    src = work / "curvilinear81m.nc"
    dst = work / "regular125x1.nc"
    nx, ny = 8962, 9040
    if not src.exists():
        tmp = src.with_suffix(".tmp.nc")
        with Dataset(tmp, "w", format="NETCDF3_64BIT_DATA") as o:
            o.createDimension("grid_size", nx * ny)
            o.createDimension("grid_corners", 4)
            o.createDimension("grid_rank", 2)
            o.createVariable("grid_dims", "i4", ("grid_rank",))[:] = [nx, ny]
            v = {}
            for name in ("grid_center_lat", "grid_center_lon"):
                v[name] = o.createVariable(name, "f8", ("grid_size",))
                v[name].units = "degrees"
            for name in ("grid_corner_lat", "grid_corner_lon"):
                v[name] = o.createVariable(name, "f8", ("grid_size", "grid_corners"))
                v[name].units = "degrees"
            v["grid_imask"] = o.createVariable("grid_imask", "i4", ("grid_size",))

            def mapping(i, j):  # (i, j) in cell units -> (lon, lat) in degrees
                lon = -180.0 + 360.0 * i / nx + 1.5 * np.sin(2 * np.pi * j / ny)
                lat = -78.0 + 166.0 * j / ny + 0.8 * np.sin(2 * np.pi * i / nx)
                return lon, lat

            rows = 200
            for j0 in range(0, ny, rows):
                j1 = min(ny, j0 + rows)
                i, j = np.meshgrid(np.arange(nx, dtype=float), np.arange(j0, j1, dtype=float))
                lon, lat = mapping(i + 0.5, j + 0.5)
                a, b = j0 * nx, j1 * nx
                v["grid_center_lon"][a:b] = lon.ravel()
                v["grid_center_lat"][a:b] = lat.ravel()
                co = [mapping(i + di, j + dj) for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1))]
                v["grid_corner_lon"][a:b, :] = np.stack([c[0].ravel() for c in co], -1)
                v["grid_corner_lat"][a:b, :] = np.stack([c[1].ravel() for c in co], -1)
                land = np.cos(np.deg2rad(3 * lon)) * np.cos(np.deg2rad(2 * lat)) > 0.45
                v["grid_imask"][a:b] = (~land).ravel().astype(np.int32)
        tmp.rename(src)
    if not dst.exists():
        write_regular(dst, 1.25, 1.0)
    return src, dst


def run_huge(tool, work, ranks_list, sink, commit):
    """isthmus alone (CDO is not run on it): time, peak memory per rank, links."""
    src, dst = huge_pair(work)
    for ranks in ranks_list:
        out = work / f"w_huge_conservative_isthmus_{ranks}.nc"
        sec, peak, rec = run_isthmus(tool, "conservative", "", src, dst, out, ranks)
        chk = check_file(str(out)) if os.environ.get("WEIGHTS_HUGE_CHECK") == "1" else None
        r = {"tool": "isthmus", "method": "conservative", "pair": "huge", "ranks": ranks,
             "seconds": sec, "peak_rss_bytes": peak, "links": rec["links"],
             "seconds_weights": rec["seconds_weights"], "streamed": rec.get("streamed", False),
             "src_points": 8962 * 9040, "dst_points": 288 * 180,
             "error": chk["functions"]["smooth"]["max_rel_error"] if chk else None,
             "error_rms": chk["functions"]["smooth"]["rms_rel_error"] if chk else None,
             "version": f"isthmus {commit}", "parallelism": f"{ranks} MPI rank(s)",
             "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        line = json.dumps(r)
        print(line, flush=True)
        if sink:
            sink.write(line + "\n")
            sink.flush()
        out.unlink()


def run_cdo(op, src, field, dst, out, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = ["/usr/bin/time", "-f", "PEAK_KB %M", "cdo", "-s", "-P", str(threads),
           f"{op},{dst}", f"-setgrid,{src}", str(field), str(out)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sec = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    peak = int(re.findall(r"PEAK_KB (\d+)", p.stderr)[-1]) * 1024
    return sec, peak


def run_isthmus(tool, method, options, src, dst, out, ranks):
    argv = [str(tool), "--src", str(src), "--dst", str(dst), "--method", method, "--out", str(out),
            "--quiet"]
    for word in options.split():
        k, v = word.split("=")
        argv += ["--" + k, v]
    cmd, env = launch(argv, ranks)     # as `isthmus weights --ranks N` runs it
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sec = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    return sec, rec["peak_rss_bytes"], rec


def unmapped_active(path, dst_grid):
    with Dataset(path) as nc:
        d = np.asarray(nc["dst_address"][:], np.int64) - 1
        w = np.asarray(nc["remap_matrix"][:])[:, 0]
    with Dataset(dst_grid) as g:
        m = np.asarray(g["grid_imask"][:]) == 1
    mapped = np.zeros(m.size, bool)
    mapped[d[(d >= 0) & (w != 0)]] = True
    return int((m & ~mapped).sum())


def cdo_accepts(src, field, dst, weights, work):
    """Whether `cdo remap,<dst grid>,<weights>` applies the file to the source field."""
    out = work / "cdo_remap_check.nc"
    p = subprocess.run(["cdo", "-s", f"remap,{dst},{weights}", f"-setgrid,{src}", str(field),
                        str(out)], capture_output=True, text=True)
    if p.returncode != 0:
        return False
    return True


def point_errors(path):
    """Which destination points the file maps, and the relative error of the smooth function
    at each (0 where unmapped)."""
    with Dataset(path) as nc:
        v = nc.variables
        src = np.asarray(v["src_address"][:], np.int64) - 1
        dst = np.asarray(v["dst_address"][:], np.int64) - 1
        w = np.asarray(v["remap_matrix"][:])[:, 0]
        units = getattr(v["src_grid_center_lon"], "units", "radians")
        conv = (lambda x: np.deg2rad(x)) if units.startswith("deg") else (lambda x: x)
        slon, slat = conv(np.asarray(v["src_grid_center_lon"][:])), conv(np.asarray(v["src_grid_center_lat"][:]))
        dlon, dlat = conv(np.asarray(v["dst_grid_center_lon"][:])), conv(np.asarray(v["dst_grid_center_lat"][:]))
    keep = (src >= 0) & (dst >= 0) & (w != 0)
    src, dst, w = src[keep], dst[keep], w[keep]
    f = lambda lon, lat: 2 + np.cos(lat) ** 2 * np.cos(2 * lon)
    y = np.zeros(dlon.size)
    np.add.at(y, dst, w * f(slon, slat)[src])
    mapped = np.zeros(dlon.size, bool)
    mapped[dst] = True
    exact = f(dlon, dlat)
    return mapped, np.where(mapped, np.abs(y - exact) / np.abs(exact), 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    quick = os.environ.get("ISTHMUS_BENCH_QUICK") == "1"
    pairs = os.environ.get("WEIGHTS_PAIRS", "orca2-lmdz" if quick else "orca2-lmdz lmdz-orca2 large").split()
    reps = int(os.environ.get("WEIGHTS_REPS", "1" if quick else "3"))
    ranks_list = [int(r) for r in os.environ.get("WEIGHTS_RANKS", "1 2").split()]
    work = Path(os.environ.get("ISTHMUS_BENCH_WORKDIR", "/tmp/isthmus-bench-weights"))
    work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    _v = subprocess.run(["cdo", "-V"], capture_output=True, text=True)
    cdo_version = next((l for l in (_v.stdout + _v.stderr).splitlines() if "Climate Data Operators" in l), "cdo")
    torc, lmdz = shared_grid(work, "torc"), shared_grid(work, "lmdz")
    grids = {"orca2-lmdz": (torc, lmdz), "lmdz-orca2": (lmdz, torc)}
    if "large" in pairs:
        grids["large"] = large_pair(work)
    sink = open(a.out, "a") if a.out else None
    if "huge" in pairs:
        run_huge(a.tool, work, ranks_list, sink, commit)
        pairs = [p for p in pairs if p != "huge"]
    rows = []
    for pair in pairs:
        (src, field), (dst, _) = grids[pair]
        wanted = os.environ.get("WEIGHTS_METHODS", "nearest bilinear conservative").split()
        for name, cdo_op, stack, options in (m for m in METHODS if m[0] in wanted):
            for ranks in ranks_list:
                pending = []
                for tool in ("cdo", "isthmus"):
                    out = work / f"w_{pair}_{name}_{tool}_{ranks}.nc"
                    secs, peaks, extra = [], [], {}
                    for _ in range(reps):
                        # Each run starts with no output file and nothing waiting to be written
                        # back: neither tool pays for the other's (or its previous run's)
                        # hundreds of megabytes on disk.
                        out.unlink(missing_ok=True)
                        os.sync()
                        if tool == "cdo":
                            s, pk = run_cdo(cdo_op, src, field, dst, out, ranks)
                        else:
                            s, pk, extra = run_isthmus(a.tool, stack, options, src, dst, out, ranks)
                        secs.append(s)
                        peaks.append(pk)
                    chk = check_file(str(out))
                    f = chk["functions"]["smooth"]
                    rec = {"tool": tool, "method": name, "pair": pair, "ranks": ranks,
                           "seconds": statistics.median(secs), "seconds_all": secs,
                           "peak_rss_bytes": max(peaks), "links": chk["links"],
                           "error": f["max_rel_error"], "error_rms": f["rms_rel_error"],
                           "unmapped_active": unmapped_active(out, dst),
                           "src_points": chk["src_points"], "dst_points": chk["dst_points"],
                           "version": cdo_version if tool == "cdo" else f"isthmus {commit}",
                           "parallelism": f"{ranks} OpenMP thread(s)" if tool == "cdo" else f"{ranks} MPI rank(s)",
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                    if tool == "isthmus":
                        rec["seconds_weights"] = extra.get("seconds_weights")
                        rec["writer"] = extra.get("writer")
                        rec["grids"] = extra.get("grids", "streamed" if extra.get("streamed") else None)
                        rec["src_points_held"] = extra.get("src_points_held")
                        rec["cdo_remap_accepts"] = cdo_accepts(src, field, dst, out, work)
                    pending.append((rec, out))
                # The error over the destination points both files map: the two tools leave
                # different points unmapped, and those are the hardest ones.
                (m0, e0), (m1, e1) = (point_errors(o) for _, o in pending)
                both = m0 & m1
                for (rec, _), e in zip(pending, (e0, e1)):
                    rec["common_points"] = int(both.sum())
                    rec["error_common"] = float(e[both].max()) if both.any() else 0.0
                    rec["error_common_rms"] = float(np.sqrt(np.mean(e[both] ** 2))) if both.any() else 0.0
                    line = json.dumps(rec)
                    print(line, flush=True)
                    if sink:
                        sink.write(line + "\n")
                        sink.flush()
                    rows.append(rec)
    print(f"\n{'pair':11s} {'method':12s} {'ranks':>5s} {'cdo s':>8s} {'isthmus s':>9s} {'ratio':>6s} "
          f"{'cdo MiB':>8s} {'ist MiB':>8s} {'cdo rms':>9s} {'ist rms':>9s} {'cdo unm':>7s} {'ist unm':>7s}"
          " (rms: relative error on the points both map)", file=sys.stderr)
    for r in rows:
        if r["tool"] != "cdo":
            continue
        i = next(x for x in rows if x["tool"] == "isthmus" and x["pair"] == r["pair"]
                 and x["method"] == r["method"] and x["ranks"] == r["ranks"])
        print(f"{r['pair']:11s} {r['method']:12s} {r['ranks']:5d} {r['seconds']:8.3f} {i['seconds']:9.3f} "
              f"{r['seconds'] / i['seconds']:6.1f} {r['peak_rss_bytes'] / 2**20:8.1f} "
              f"{i['peak_rss_bytes'] / 2**20:8.1f} {r['error_common_rms']:9.2e} {i['error_common_rms']:9.2e} "
              f"{r['unmapped_active']:7d} {i['unmapped_active']:7d}", file=sys.stderr)


if __name__ == "__main__":
    main()
