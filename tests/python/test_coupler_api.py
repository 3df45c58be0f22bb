"""The coupler's Python API (isthmus.Coupler, Partition, Field) on MPI ranks: an ocean on the
ORCA2 grid and an atmosphere on the LMDZ grid exchanging fields both ways with the shared
bilinear weights (float64, float32, a bundle of 3 levels), checked against the same weights
applied serially through the library; then the errors, with the C API's messages.

The MPI side is this file run as a script under tests/mpirun.sh (``python
test_coupler_api.py MODE ...``); pytest runs it and reads what each rank wrote.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = os.environ.get("ISTHMUS_BUILD_DIR", str(SOURCE / "build"))
DATA = SOURCE / "tests" / "data" / "orca2-lmdz"
NO, NA = 182 * 149, 96 * 72  # ORCA2 (torc) and LMDZ points
LEVELS = 3
DATES = range(8)

# entry: (source field, destination field, period, weights, side); the bundle entry travels
# 3 levels, the float32 entry is declared float32 on both sides
NAMCOUPLE = """$NFIELDS
  4
$END
$RUNTIME
  8
$END
$NLOGPRT
  0 0
$END
$STRINGS
O_SST A_SST 1 2 1 rst_o.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
A_FLX O_FLX 1 4 1 rst_a.nc EXPORTED
96 72 182 149 lmdz torc
P 0 P 2
MAPPING
rmp_lmdz_to_torc_BILINEAR.nc src sum
O_SST32 A_SST32 1 2 1 rst_o32.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
O_BUN A_BUN 1 4 1 rst_ob.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
$END
"""
PERIODS = {"O_SST": 2, "A_SST": 2, "A_FLX": 4, "O_FLX": 4, "O_SST32": 2, "A_SST32": 2,
           "O_BUN": 4, "A_BUN": 4}


def sst(g):
    return 271.0 + 30 * np.sin(g * 0.0007) + g * 1e-7


def flux(g):
    return -120.0 + 80 * np.cos(g * 0.003)


def ocean_part(rank, size):
    """The ocean's OASIS apple partition: [1, offset, length]."""
    a, b = NO * rank // size, NO * (rank + 1) // size
    return [1, a, b - a]


def atmos_indices(rank, size):
    """The atmosphere's points: round robin over its ranks, in reverse order on odd ranks
    (an OASIS points partition, 0-based here)."""
    idx = np.arange(rank, NA, size, dtype=np.int64)
    return idx[::-1].copy() if rank % 2 else idx


def mpirun(n, script, *args, cwd=None, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), ISTHMUS_BUILD_DIR=BUILD,
               ISTHMUS_COUPLER_TIMEOUT="30")
    return subprocess.run([str(SOURCE / "tests" / "mpirun.sh"), str(n), sys.executable,
                           str(script), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def check_run(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def gather(outdir, nranks):
    """The ranks' npz files as {rank: dict}."""
    return {r: dict(np.load(Path(outdir) / f"rank{r}.npz")) for r in range(nranks)}


def assemble(results, prefix, field, n, levels=1):
    """A destination field over all ranks of a component, from each rank's indices."""
    out = np.full((levels, n), np.nan, dtype=results[next(iter(results))][field].dtype)
    for res in results.values():
        if field in res:
            out[:, res["indices"]] = res[field].reshape(levels, -1)
    return out if levels > 1 else out[0]


@functools.lru_cache(maxsize=None)
def native_toy(nocean, natmos):
    """Runs the toy through isthmus.Coupler on nocean + natmos ranks; {rank: arrays}."""
    run = Path(tempfile.mkdtemp(prefix="isthmus-pytest-coupler-"))
    (run / "namcouple").write_text(NAMCOUPLE)
    check_run(mpirun(nocean + natmos, __file__, "toy", run, nocean))
    results = gather(run, nocean + natmos)
    shutil.rmtree(run, ignore_errors=True)
    return results


needs_library = pytest.mark.skipif(not (Path(BUILD) / "libisthmus.so").is_file(),
                                   reason=f"no libisthmus.so in {BUILD}")


@needs_library
def test_toy_orca2_lmdz_both_ways_float32_and_bundle_match_the_serial_mapping():
    res = native_toy(1, 2)
    ref = res[0]  # rank 0 applied the weights serially through the library
    ocean = {r: v for r, v in res.items() if v["ocean"]}
    atmos = {r: v for r, v in res.items() if not v["ocean"]}
    assert len(ocean) == 1 and len(atmos) == 2
    for v in res.values():
        assert v["bad_codes"] == 0, v["codes"]
    # to the atmosphere, destination side: the serial sum's bits
    a_sst = assemble(atmos, "", "A_SST", NA)
    np.testing.assert_array_equal(a_sst, ref["ref_sst"])
    # float32: the float32 values widened, mapped in double, rounded back
    a_sst32 = assemble(atmos, "", "A_SST32", NA)
    assert a_sst32.dtype == np.float32
    np.testing.assert_array_equal(a_sst32, ref["ref_sst32"])
    # a bundle of 3 levels, level-major
    a_bun = assemble(atmos, "", "A_BUN", NA, LEVELS)
    np.testing.assert_array_equal(a_bun, ref["ref_bun"])
    # to the ocean, source side: partial sums added on arrival, to 1e-14 relative
    o_flx = assemble(ocean, "", "O_FLX", NO)
    np.testing.assert_allclose(o_flx, ref["ref_flx"], rtol=1e-14, atol=0)
    # the weights are not trivial: fields really moved and differ from their sources
    assert np.count_nonzero(a_sst) > NA // 2 and np.ptp(a_sst[a_sst != 0]) > 10


@needs_library
def test_toy_refuses_higher_order_terms_where_they_cannot_apply():
    for rank, res in native_toy(2, 3).items():
        said = str(res["term_refused"])
        if res["ocean"]:
            assert ("put of O_SST at date 0: fld2 (a higher-order term) is multiplied where the "
                    "source side multiplies, but entry O_SST (line 11) does not multiply there "
                    "(MAPPING bfb): write `sum` in its MAPPING line") in said, said
        else:
            assert ("put of A_FLX at date 0: fld2 (a higher-order term) needs 2 weights per "
                    "link, but the weights file rmp_lmdz_to_torc_BILINEAR.nc of entry A_FLX "
                    "(line 16) has 1") in said, said


TERMS_NAMCOUPLE = """$NFIELDS
  1
$END
$RUNTIME
  2
$END
$STRINGS
O_T A_T 1 1 1 rst_t.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
rmp_torc_to_lmdz_3W.nc src sum
$END
"""


def term_values(g, j):
    """Term j (0: the field, 1: fld2, 2: fld3) at source points g."""
    return (271.0 + 30 * np.sin(g * 0.0007)) if j == 0 else np.cos(g * 0.001 * (j + 1))


@needs_library
def test_put_with_higher_order_terms_matches_the_serial_sum(tmp_path):
    """Field.put(terms=...) on a source-side entry whose weights file has 3 weights per link
    (the shared bilinear file with two more columns): each link adds w1 x + w2 fld2 + w3 fld3."""
    from netCDF4 import Dataset

    with Dataset(DATA / "rmp_torc_to_lmdz_BILINEAR.nc") as f:
        src = np.asarray(f["src_address"][:], np.int64) - 1
        dst = np.asarray(f["dst_address"][:], np.int64) - 1
        w1 = np.asarray(f["remap_matrix"][:])[:, 0]
        k = np.arange(src.size)
        real = (src >= 0) & (dst >= 0)  # SCRIP's padding links: address 0, weight 0, kept so
        w = np.stack([w1, np.where(real, 0.5 + k % 7, 0.0), np.where(real, -0.25 * (k % 3), 0.0)],
                     axis=1)
        with Dataset(tmp_path / "rmp_torc_to_lmdz_3W.nc", "w") as o:
            for name, dim in f.dimensions.items():
                o.createDimension(name, 3 if name == "num_wgts" else len(dim))
            for name, var in f.variables.items():
                v = o.createVariable(name, var.dtype, var.dimensions)
                v.setncatts({a: var.getncattr(a) for a in var.ncattrs()})
                v[:] = w if name == "remap_matrix" else var[:]
            o.setncatts({a: f.getncattr(a) for a in f.ncattrs()})
    (tmp_path / "namcouple").write_text(TERMS_NAMCOUPLE)
    check_run(mpirun(3, __file__, "terms", tmp_path))
    s, d, w = src[real], dst[real], w[real]
    ref, mag = np.zeros(NA), np.zeros(NA)
    np.add.at(ref, d, sum(w[:, j] * term_values(s, j) for j in range(3)))
    np.add.at(mag, d, sum(np.abs(w[:, j] * term_values(s, j)) for j in range(3)))
    got = np.full(NA, np.nan)
    for r in range(3):
        res = dict(np.load(tmp_path / f"terms{r}.npz"))
        if "A_T" in res:
            got[res["indices"]] = res["A_T"]
    assert np.all(np.abs(got - ref) <= 1e-14 * mag), np.max(np.abs(got - ref) / mag)


@needs_library
def test_toy_destination_side_is_bit_for_bit_on_other_rank_counts():
    a, b = native_toy(1, 2), native_toy(2, 2)
    for field, levels in (("A_SST", 1), ("A_SST32", 1), ("A_BUN", LEVELS)):
        x = assemble({r: v for r, v in a.items() if not v["ocean"]}, "", field, NA, levels)
        y = assemble({r: v for r, v in b.items() if not v["ocean"]}, "", field, NA, levels)
        np.testing.assert_array_equal(x, y)
    for v in b.values():
        assert v["bad_codes"] == 0


@needs_library
def test_inquiries_local_comm_and_report():
    res = native_toy(1, 2)
    for r, v in res.items():
        assert int(v["local_size"]) == (1 if v["ocean"] else 2)
        assert int(v["component_index"]) == (0 if v["ocean"] else 1)
        assert list(v["ncpl"]) == [1, 1, 1, 1]
        # ocean (component 0) first, each in its local order; each name's first rank
        assert int(v["multi_rank"]) == r
        assert list(v["multi_roots"]) == [1, -1, 0]
    report = str(res[0]["report"])
    assert "component ocean, 1 ranks" in report and "O_SST>A_SST" in report
    assert str(res[2]["report"]) == ""  # the component's first rank has it, not the others


@needs_library
def test_errors_raise_isthmus_error_with_the_c_api_message(tmp_path):
    (tmp_path / "namcouple").write_text(
        "$NFIELDS\n  0\n$END\n$RUNTIME\n  10\n$END\n$STRINGS\n$END\n")
    r = mpirun(2, __file__, "errors", tmp_path)
    check_run(r)
    for rank in range(2):
        got = json.loads((tmp_path / f"errors{rank}.json").read_text())
        me = f"isthmus: rank {rank}: "
        assert got["missing_config"] == [
            "CONFIG", me + "isthmus_coupler_create: the configuration file /nonexistent/"
            "namcouple cannot be read (component ocean)"]
        assert got["get_before_enddef"] == [
            "ARG", me + "isthmus_coupler_get: get before enddef (component ocean)"]
        # definitions are local (as OASIS's): a bad partition on the last rank fails there,
        # without using up its id (its next id 0, rank 0's 1)
        kind9 = ("OASIS partition kind 9 is unknown (0 serial, 1 apple, 2 box, 3 orange, "
                 "4 points)")
        assert got["bad_kind"] == (
            ["DECOMP", me + "isthmus_coupler_def_partition_oasis: " + kind9] if rank == 1
            else None)
        assert got["after_bad_kind"] == (0 if rank == 1 else 1)
        # an index array with a duplicate on rank 1 only
        assert got["duplicate_index"] == (
            ["DECOMP", me + "isthmus_coupler_def_partition_oasis: global index 10 appears "
             "twice, at local positions 0 and 2"] if rank == 1 else None)
        # enddef compares the definitions: on every rank, the first that differs
        assert got["enddef"] == [
            "ARG", me + "isthmus_coupler_enddef: enddef: the coupling ranks of component ocean "
            'made different definitions: definition 1 is "def_partition 0 "p": global size from '
            'the points" on rank 0 but "def_partition "p": failed: ' + kind9 + '" on rank 1 '
            "(every coupling rank makes the same definitions in the same order)"]
        assert got["wrong_size"] == [
            "ARG", "isthmus: put O_A: array of 9 values, the field has 10 local points x 2 "
            "levels = 20"]
        assert got["wrong_dtype"] == [
            "ARG", "isthmus: put O_A: array of dtype float32, the field is float64"]
        assert got["not_contiguous"][0] == "ARG"
        assert "not C-contiguous" in got["not_contiguous"][1]
        assert got["read_only_out"][1].endswith("the array is read-only")
        assert got["bad_direction"] == [
            "ARG", "isthmus: direction 'sideways': expected 'in' or 'out'"]
        assert got["closed"][0] == "ARG" and "is closed" in got["closed"][1]
        assert got["float32_field"] == {"dtype": "float32", "shape": [2, 10], "size": 20}


# ---- the MPI side ---------------------------------------------------------------------------


def serial_reference(lib, path, ns, nd, fields):
    """The weights file applied to each source array on this rank alone (MPI_COMM_SELF):
    the destination side's order, the bits the coupler must give."""
    import ctypes

    from mpi4py import MPI

    vp = ctypes.c_void_p
    lib.isthmus_context_create_f.argtypes = [ctypes.c_int, ctypes.POINTER(vp)]
    lib.isthmus_decomp_create_segments.argtypes = [vp, ctypes.c_int64, ctypes.c_int64,
                                                   ctypes.POINTER(ctypes.c_int64),
                                                   ctypes.POINTER(ctypes.c_int64),
                                                   ctypes.POINTER(vp)]
    lib.isthmus_mapping_create_file.argtypes = [vp, ctypes.c_char_p, vp, vp, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_int), vp,
                                                ctypes.POINTER(vp)]
    lib.isthmus_mapping_apply.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
    lib.isthmus_mapping_destroy.argtypes = [ctypes.POINTER(vp)]
    ctx, s, d, m = vp(), vp(), vp(), vp()
    assert lib.isthmus_context_create_f(MPI.COMM_SELF.py2f(), ctypes.byref(ctx)) == 0
    zero, cs, cd = ctypes.c_int64(0), ctypes.c_int64(ns), ctypes.c_int64(nd)
    assert lib.isthmus_decomp_create_segments(ctx, ns, 1, zero, cs, ctypes.byref(s)) == 0
    assert lib.isthmus_decomp_create_segments(ctx, nd, 1, zero, cd, ctypes.byref(d)) == 0
    levels = (ctypes.c_int * len(fields))(*[1] * len(fields))
    assert lib.isthmus_mapping_create_file(ctx, str(path).encode(), s, d, len(fields), levels,
                                           None, ctypes.byref(m)) == 0, lib.isthmus_last_error(ctx)
    src = [np.ascontiguousarray(f, dtype=np.float64) for f in fields]
    dst = [np.zeros(nd) for _ in fields]
    sp = (vp * len(fields))(*[a.ctypes.data for a in src])
    dp = (vp * len(fields))(*[a.ctypes.data for a in dst])
    assert lib.isthmus_mapping_apply(m, sp, dp) == 0
    lib.isthmus_mapping_destroy(ctypes.byref(m))
    for h in (s, d):
        lib.isthmus_decomp_destroy(ctypes.byref(h))
    lib.isthmus_context_destroy(ctypes.byref(ctx))
    return dst


def references():
    """Every destination field of the toy, mapped serially."""
    import isthmus.coupler

    lib = isthmus.coupler.load_library()
    go, ga = np.arange(NO), np.arange(NA)
    x32 = sst(go).astype(np.float32).astype(np.float64)
    to_atmos = serial_reference(lib, DATA / "rmp_torc_to_lmdz_BILINEAR.nc", NO, NA,
                                [sst(go), x32] + [sst(go) + 10 * k for k in range(LEVELS)])
    (to_ocean,) = serial_reference(lib, DATA / "rmp_lmdz_to_torc_BILINEAR.nc", NA, NO,
                                   [flux(ga)])
    return {"ref_sst": to_atmos[0], "ref_sst32": to_atmos[1].astype(np.float32),
            "ref_bun": np.stack(to_atmos[2:]), "ref_flx": to_ocean}


def toy_main(rundir, nocean):
    """One rank of the toy: ocean on the first nocean ranks, atmosphere on the others."""
    from mpi4py import MPI

    import isthmus

    world = MPI.COMM_WORLD
    ocean = world.rank < nocean
    out = {"ocean": ocean, "codes": [], "bad_codes": 0}
    with isthmus.Coupler(world, "ocean" if ocean else "atmos", Path(rundir) / "namcouple",
                         run_dir=DATA) as cpl:
        local = cpl.local_comm
        out["local_size"], out["component_index"] = local.size, cpl.component_index
        if ocean:
            ig = ocean_part(local.rank, local.size)
            part = isthmus.Partition(cpl, ig, name="torc")  # grid size: OASIS's rule
            g = np.arange(ig[1], ig[1] + ig[2])
            sends = [isthmus.Field("O_SST", part, "out"),
                     isthmus.Field("O_SST32", part, "out", np.float32),
                     isthmus.Field("O_BUN", part, "out", bundle=LEVELS)]
            values = [sst(g), sst(g).astype(np.float32),
                      np.stack([sst(g) + 10 * k for k in range(LEVELS)])]
            receives = [isthmus.Field("O_FLX", part, isthmus.Direction.IN)]
        else:
            g = atmos_indices(local.rank, local.size)
            part = isthmus.Partition.from_indices(cpl, g, NA, name="lmdz")
            sends = [isthmus.Field("A_FLX", part, "out")]
            values = [flux(g)]
            receives = [isthmus.Field("A_SST", part, "in"),
                        isthmus.Field("A_SST32", part, "in", dtype=np.float32),
                        isthmus.Field("A_BUN", part, "in", bundle=LEVELS)]
        out["indices"] = g
        assert part.local_size == len(g)
        cpl.enddef()
        # both components in one communicator (OASIS's get_multi_intracomm), listed out of order
        joined, roots = cpl.multi_intracomm(["atmos", "", "ocean"])
        out["multi_rank"], out["multi_roots"] = joined.rank, [roots["atmos"], roots[""],
                                                              roots["ocean"]]
        joined.Free()
        out["ncpl"] = [f.ncpl for f in sends + receives]
        for f in sends + receives:
            assert f.periods == [PERIODS[f.name]], (f.name, f.periods)
            assert f.is_configured
        # a higher-order term (OASIS's fld2) is refused on these entries, before anything is
        # sent: O_SST multiplies on the destination side, A_FLX's file has one weight per link
        f, v = sends[0], values[0]
        try:
            f.put(0, v, terms=[v])
            out["term_refused"] = ""
        except isthmus.IsthmusError as e:
            out["term_refused"] = str(e)
        for date in DATES:
            for f, v in zip(sends, values):
                inquired = f.put_inquire(date)
                info = f.put(date, v)
                expected = isthmus.Info.SENT if date % PERIODS[f.name] == 0 else isthmus.Info.OK
                out["codes"].append((f.name, date, int(info)))
                out["bad_codes"] += (info != expected) + (info != inquired)
            for f in receives:
                buf = f.empty()
                buf.fill(-1)
                info, data = f.get(date, buf)
                assert data is buf
                coupled = date % PERIODS[f.name] == 0
                out["bad_codes"] += info != (isthmus.Info.RECVD if coupled else isthmus.Info.OK)
                if coupled:
                    out[f.name] = data.copy()
                else:
                    out["bad_codes"] += int(np.any(data != -1))  # untouched
        out["report"] = cpl.report()
    if world.rank == 0:
        out.update(references())
    np.savez(Path(rundir) / f"rank{world.rank}.npz", **{k: np.asarray(v) for k, v in out.items()})


def errors_main(rundir):
    """Each error case's (code name, message) on this rank, to errors<rank>.json."""
    from mpi4py import MPI

    import isthmus

    world = MPI.COMM_WORLD
    got = {}

    def catch(key, fn):
        try:
            fn()
            got[key] = None
        except isthmus.IsthmusError as e:
            got[key] = [e.code.name, str(e)]

    catch("missing_config", lambda: isthmus.Coupler(world, "ocean", "/nonexistent/namcouple"))
    with isthmus.Coupler(world, "ocean", Path(rundir) / "namcouple") as cpl:
        good = [1, world.rank * 10, 10]
        bad = [9, 0, 10] if world.rank == world.size - 1 else good
        catch("bad_kind", lambda: isthmus.Partition(cpl, bad, name="p"))
        part = isthmus.Partition(cpl, good, name="p")
        got["after_bad_kind"] = part.id
        dup = [world.rank * 10, world.rank * 10 + 1] + ([world.rank * 10] if world.rank else [])
        catch("duplicate_index", lambda: isthmus.Partition.from_indices(cpl, dup, 40))
        a = isthmus.Field("O_A", part, "out", bundle=2)
        b = isthmus.Field("O_B", part, "in", np.float32, bundle=2)
        got["float32_field"] = {"dtype": str(b.empty().dtype), "shape": list(b.shape),
                                "size": b.size}
        catch("get_before_enddef", lambda: b.get(0))
        catch("wrong_size", lambda: a.put(0, np.zeros(9)))
        catch("wrong_dtype", lambda: a.put(0, np.zeros(20, np.float32)))
        catch("not_contiguous", lambda: a.put(0, np.zeros((20, 2))[:, 0]))
        ro = b.zeros()
        ro.flags.writeable = False
        catch("read_only_out", lambda: b.get(0, ro))
        catch("bad_direction", lambda: isthmus.Field("O_C", part, "sideways"))
        catch("enddef", lambda: cpl.enddef())
    catch("closed", lambda: cpl.enddef())
    (Path(rundir) / f"errors{world.rank}.json").write_text(json.dumps(got))


def terms_main(rundir):
    """1 ocean rank puts O_T with two terms, 2 atmosphere ranks get A_T; terms<rank>.npz."""
    from mpi4py import MPI

    import isthmus

    world = MPI.COMM_WORLD
    ocean = world.rank == 0
    out = {}
    with isthmus.Coupler(world, "ocean" if ocean else "atmos", Path(rundir) / "namcouple",
                         run_dir=rundir) as cpl:
        local = cpl.local_comm
        if ocean:
            part = isthmus.Partition(cpl, [1, 0, NO], name="torc")
            f = isthmus.Field("O_T", part, "out")
        else:
            g = atmos_indices(local.rank, local.size)
            part = isthmus.Partition.from_indices(cpl, g, NA, name="lmdz")
            f = isthmus.Field("A_T", part, "in")
            out["indices"] = g
        cpl.enddef()
        if ocean:
            g = np.arange(NO)
            info = f.put(0, term_values(g, 0), terms=[term_values(g, 1), term_values(g, 2)])
            assert info == isthmus.Info.SENT, info
        else:
            info, out["A_T"] = f.get(0)
            assert info == isthmus.Info.RECVD, info
    np.savez(Path(rundir) / f"terms{world.rank}.npz", **out)


if __name__ == "__main__":
    if sys.argv[1] == "terms":
        terms_main(sys.argv[2])
    elif sys.argv[1] == "toy":
        toy_main(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "errors":
        errors_main(sys.argv[2])
