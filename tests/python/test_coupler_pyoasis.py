"""The pyoasis-compatible module: the toy of test_coupler_api.py written as a pyoasis script
(``import pyoasis`` through the shim, ./namcouple, Fortran-ordered arrays, 1-based points)
receives exactly what the native API receives; and pyoasis's exceptions."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from test_coupler_api import (DATA, DATES, LEVELS, NA, NAMCOUPLE, PERIODS, SOURCE,
                              assemble, atmos_indices, check_run, flux, gather, mpirun,
                              native_toy, needs_library, ocean_part, sst)

SHIM = SOURCE / "python" / "isthmus" / "pyoasis" / "shim"


def run_dir(tmp_path, namcouple=NAMCOUPLE):
    """A run directory as OASIS wants it: the namcouple and the weights files."""
    (tmp_path / "namcouple").write_text(namcouple)
    for f in DATA.glob("rmp_*_BILINEAR.nc"):
        (tmp_path / f.name).symlink_to(f)
    return tmp_path


@needs_library
def test_pyoasis_toy_receives_what_the_native_api_receives(tmp_path):
    run = run_dir(tmp_path)
    check_run(mpirun(3, __file__, "toy", run, 1, cwd=run))
    py = gather(run, 3)
    native = native_toy(1, 2)
    for r in range(3):
        assert py[r]["bad_codes"] == 0, py[r]["codes"]
        np.testing.assert_array_equal(py[r]["indices"], native[r]["indices"])
        for field in ("A_SST", "A_SST32", "A_BUN", "O_FLX"):
            if field in native[r]:
                assert py[r][field].dtype == native[r][field].dtype, field
                np.testing.assert_array_equal(py[r][field], native[r][field], err_msg=field)
    # and so the serial mapping's values, assembled over the atmosphere's ranks
    atmos = {r: py[r] for r in (1, 2)}
    np.testing.assert_array_equal(assemble(atmos, "", "A_SST", NA), native[0]["ref_sst"])
    assert str(py[0]["component"]) == "Component: name: ocean, id: 1"
    assert str(py[1]["component"]) == "Component: name: atmos, id: 2"
    assert list(py[1]["freqs"]) == [4, 2, 2, 4]
    for r in range(3):  # get_multi_intracomm: ocean first, then the atmosphere's two ranks
        assert list(py[r]["multi"]) == [r, 1, 0]


@needs_library
def test_pyoasis_exceptions(tmp_path):
    (tmp_path / "run").mkdir()
    empty = run_dir(tmp_path / "run",
                    "$NFIELDS\n  1\n$END\n$RUNTIME\n  10\n$END\n$STRINGS\n"
                    "O_A A_A 1 2 1 r.nc EXPORTED\n4 5 4 5 ga ga\nP 0 P 0\nLOCTRANS\nAVERAGE\n"
                    "$END\n")
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    check_run(mpirun(1, __file__, "errors", empty, cwd=nowhere))
    got = json.loads((empty / "errors.json").read_text())
    me = "isthmus: rank 0: "
    assert got["no_namcouple"] == [
        "OasisException", "Error initialising component ocean (6): " + me +
        "isthmus_coupler_create: the configuration file namcouple cannot be read (component "
        "ocean)"]
    assert got["empty_name"] == ["PyOasisException", "Component name empty."]
    assert got["second"] == ["PyOasisException", "There should be only one component."]
    assert got["bad_partition"] == ["PyOasisException", "Global indices list empty."]
    assert got["not_int"] == ["PyOasisException",
                              "The elements of the list in argument 0 must be integers."]
    assert got["bad_kinout"] == ["PyOasisException",
                                 "kinout parameter neither OASIS_IN or OASIS_OUT."]
    assert got["get_before_enddef"] == [
        "OasisException", "Error in getting data from another component (1): " + me +
        "isthmus_coupler_get: get before enddef (component ocean)"]
    assert got["wrong_size"] == [
        "OasisException", "Field of the wrong size (1): field O_A: array of shape (7,), "
        "expected 20 points x 1 levels"]
    assert got["bad_dtype"] == ["PyOasisException",
                                "Data type of field can only by float32 or float64"]
    assert got["date_not_int"] == ["PyOasisException", "Argument 0 must be of type <class 'int'>."]
    assert got["is_active"] == [True, False]
    assert got["private"] == ["O_A", 1, "OASIS_OUT", 1]
    assert got["box_points"] == 20 and got["cube_points"] == 60
    assert got["put_loctrans"] == ["OASIS_SENT", "OASIS_RECVD", "OASIS_LOCTRANS", "OASIS_SENT",
                                   "OASIS_RECVD", 2.0, 2.0]
    import netCDF4

    with netCDF4.Dataset(empty / "grids.nc") as ds:  # Fortran (nx, ny) is (ny, nx) here
        assert ds["ga.lon"].shape == (5, 4) and ds["ga.clo"].shape == (4, 5, 4)
        assert ds["ga.lon"][0, 3] == 270 and ds["ga.lat"][4, 0] == 60
    with netCDF4.Dataset(empty / "masks.nc") as ds:
        assert list(np.asarray(ds["ga.msk"][:]).sum(axis=1)) == [0, 0, 0, 0, 4]
    assert (empty / "areas.nc").is_file()
    assert got["enddef_error"] == [
        "OasisException", "Error in enddef (1): " + me + "isthmus_coupler_enddef: enddef after "
        "enddef (component ocean)"]
    assert got["multi_alone"] == [
        "OasisException", "Error in get_multi_intracomm (1): " + me + "isthmus_coupler_get_multi_"
        "intracomm: get_multi_intracomm: the list must name at least two components (it names 1)"]
    assert got["multi_not_names"] == ["PyOasisException",
                                      "The elements of the list in argument 0 must be strings."]


FRACWGT_NAMCOUPLE = """$NFIELDS
  3
$END
$RUNTIME
  8
$END
$NLOGPRT
  0
$END
$STRINGS
FSENDSCA FRECVSCA 1 4 1 r.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
{w}
FSENDFRC FRECVFRC 1 4 1 r.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
{w}
FSENDNOR FRECVNOR 1 4 1 r.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
{w}
$END
"""


@needs_library
@pytest.mark.parametrize("senders,strategy", [(2, ""), (3, " sum"), (1, " opt")])
def test_pyoasis_fracwgt_as_oasis_example_uses_it(tmp_path, senders, strategy):
    """OASIS3-MCT 5.0's fracwgt example, as a pyoasis script: the sender puts field * frac,
    frac, and field with fracwgt=frac; the receiver's third field must be the first divided by
    the second where the mapped fraction is not 0 (0 elsewhere), to the bit, whichever side
    multiplies."""
    run = run_dir(tmp_path, FRACWGT_NAMCOUPLE.format(
        w="rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc src" + strategy))
    (run / "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc").symlink_to(
        DATA / "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc")
    check_run(mpirun(senders + 1, __file__, "fracwgt", run, senders, cwd=run))
    got = dict(np.load(run / "fracwgt.npz"))
    scaled, frac, normalized = got["scaled"], got["frac"], got["normalized"]
    for date in range(2):
        expect = np.where(frac[date] != 0, scaled[date] / np.where(frac[date] != 0, frac[date], 1), 0)
        np.testing.assert_array_equal(normalized[date], expect)
        assert ((frac[date] > 0) & (frac[date] < 1)).sum() > 1000  # fractions between 0 and 1
        assert (frac[date] == 0).sum() > 100 and (frac[date] == 1).sum() > 100
        assert np.abs(normalized[date]).max() > 1.5  # the field, not the fraction


@needs_library
@pytest.mark.parametrize("ranks", [1, 3])
def test_pyoasis_grid_with_a_partition(tmp_path, ranks):
    """pyoasis's Grid(..., partition=p) (OASIS3-MCT 4.0's decomposed grid writing): every
    process passes its columns of an 11 x 5 grid (a box partition), the first one writes the
    gathered grid; grids.nc and masks.nc hold the global arrays."""
    run = run_dir(tmp_path, "$NFIELDS\n  0\n$END\n$RUNTIME\n  10\n$END\n$STRINGS\n$END\n")
    check_run(mpirun(ranks, __file__, "grid", run, cwd=run))
    import netCDF4

    i, j = np.meshgrid(np.arange(11), np.arange(5), indexing="ij")
    with netCDF4.Dataset(run / "grids.nc") as ds:  # (ny, nx) in C order
        np.testing.assert_array_equal(ds["pgrd.lon"][:], (10.0 * i + 0.5 * j).T)
        np.testing.assert_array_equal(ds["pgrd.lat"][:], (-20.0 + 10.0 * j).T)
        np.testing.assert_array_equal(ds["pgrd.clo"][:], np.stack([(10.0 * i + 0.5 * j + k).T
                                                                   for k in range(4)]))
    with netCDF4.Dataset(run / "masks.nc") as ds:
        np.testing.assert_array_equal(ds["pgrd.msk"][:], ((i + j) % 2).T)


# ---- the MPI side ---------------------------------------------------------------------------


def toy_main(rundir, nocean):
    """test_coupler_api.py's toy, as a pyoasis script would write it."""
    sys.path.insert(0, str(SHIM))
    import pyoasis
    from mpi4py import MPI
    from pyoasis import OASIS

    assert pyoasis.__name__ == "isthmus.pyoasis"  # the shim gave isthmus's module
    world = MPI.COMM_WORLD
    ocean = world.rank < nocean
    comp = pyoasis.Component("ocean" if ocean else "atmos")
    out = {"ocean": ocean, "codes": [], "bad_codes": 0, "component": str(comp)}
    local = comp.localcomm
    if ocean:
        _, offset, size = ocean_part(local.rank, local.size)
        part = pyoasis.ApplePartition(offset, size)
        g = np.arange(offset, offset + size)
        sends = [pyoasis.Var("O_SST", part, OASIS.OUT), pyoasis.Var("O_SST32", part, OASIS.OUT),
                 pyoasis.Var("O_BUN", part, OASIS.OUT, bundle_size=LEVELS)]
        values = [pyoasis.asarray(sst(g)), pyoasis.asarray(sst(g), dtype=np.float32),
                  pyoasis.asarray(np.stack([sst(g) + 10 * k for k in range(LEVELS)], axis=1))]
        receives = [(pyoasis.Var("O_FLX", part, OASIS.IN), np.float64, 1)]
    else:
        g = atmos_indices(local.rank, local.size)
        part = pyoasis.PointsPartition([int(i) + 1 for i in g], name="lmdz")  # 1-based
        sends = [pyoasis.Var("A_FLX", part, OASIS.OUT)]
        values = [pyoasis.asarray(flux(g))]
        receives = [(pyoasis.Var("A_SST", part, OASIS.IN), np.float64, 1),
                    (pyoasis.Var("A_SST32", part, OASIS.IN), np.float32, 1),
                    (pyoasis.Var("A_BUN", part, OASIS.IN, bundle_size=LEVELS), np.float64,
                     LEVELS)]
    out["indices"] = g
    comp.enddef()
    joined, roots = comp.get_multi_intracomm(["atmos", "ocean"])
    out["multi"] = [joined.rank, roots["atmos"], roots["ocean"]]
    joined.Free()
    out["freqs"] = [v.cpl_freqs[0] for v in sends + [r[0] for r in receives]]
    for date in DATES:
        for var, v in zip(sends, values):
            inquired = var.put_inquire(date)
            info = var.put(date, v)
            expected = OASIS.SENT if date % PERIODS[var.name] == 0 else OASIS.OK
            out["codes"].append((var.name, date, info.value))
            out["bad_codes"] += (info != expected) + (info != inquired)
        for var, dtype, levels in receives:
            buf = pyoasis.asarray(np.full((len(g), levels) if levels > 1 else len(g), -1.0),
                                  dtype=dtype)
            info = var.get(date, buf)
            coupled = date % PERIODS[var.name] == 0
            out["bad_codes"] += info != (OASIS.RECVD if coupled else OASIS.OK)
            if coupled:  # the native API's layout: level-major
                out[var.name] = np.ascontiguousarray(buf.T) if levels > 1 else buf.copy()
            else:
                out["bad_codes"] += int(np.any(buf != -1))
    del comp  # terminates, as with pyoasis
    np.savez(Path(rundir) / f"rank{world.rank}.npz", **{k: np.asarray(v) for k, v in out.items()})


def errors_main(rundir):
    """pyoasis's exceptions on one rank, to errors.json."""
    sys.path.insert(0, str(SHIM))
    import pyoasis
    from pyoasis import OASIS

    got = {}

    def catch(key, fn):
        try:
            got[key] = fn()
        except (pyoasis.OasisException, pyoasis.PyOasisException) as e:
            got[key] = [type(e).__name__, str(e)]

    catch("no_namcouple", lambda: pyoasis.Component("ocean"))  # the cwd has no namcouple
    catch("empty_name", lambda: pyoasis.Component(""))
    os.chdir(rundir)
    comp = pyoasis.Component("ocean")
    catch("second", lambda: pyoasis.Component("atmos"))
    catch("bad_partition", lambda: pyoasis.PointsPartition([]))
    catch("not_int", lambda: pyoasis.PointsPartition([1.5, 2]))
    part = pyoasis.BoxPartition(0, 4, 5, 4, name="ga")
    got["box_points"] = part.local_size
    got["cube_points"] = pyoasis.CubePartition(0, 4, 5, 4, 5, 3, name="cube").local_size
    catch("bad_kinout", lambda: pyoasis.Var("O_A", part, OASIS.SENT))
    var = pyoasis.Var("O_A", part, OASIS.OUT)
    unused = pyoasis.Var("O_UNUSED", part, OASIS.IN)
    got["is_active"] = [var.is_active, unused.is_active]
    # pyoasis's private names that scripts read (Eophis logs var._name)
    got["private"] = [var._name, var._bundle_size, var._inout.name, comp._id]
    field = pyoasis.asarray(np.ones((4, 5)))
    catch("get_before_enddef", lambda: unused.get(0, field))
    catch("wrong_size", lambda: var.put(0, pyoasis.asarray(np.ones(7))))
    catch("bad_dtype", lambda: var.put(0, np.ones((4, 5), dtype=np.int32)))
    catch("date_not_int", lambda: var.put(0.5, field))
    back = pyoasis.Var("A_A", part, OASIS.IN)
    comp.enddef()
    # within the component, LOCTRANS AVERAGE over the period of 2 s, the coupling date's own
    # put included: 0 is sent alone, then the mean of the puts at 1 and 2
    codes = [var.put(0, field).name, back.get(0, field).name]
    codes.append(var.put(1, pyoasis.asarray(np.full((4, 5), 1.0))).name)
    codes.append(var.put(2, pyoasis.asarray(np.full((4, 5), 3.0))).name)
    received = pyoasis.asarray(np.zeros((4, 5)), dtype=np.float32)
    codes.append(back.get(2, received).name)
    got["put_loctrans"] = codes + [float(received.min()), float(received.max())]
    catch("enddef_error", lambda: comp.enddef())
    catch("multi_alone", lambda: comp.get_multi_intracomm(["ocean"]))
    catch("multi_not_names", lambda: comp.get_multi_intracomm(["ocean", 2]))
    lon, lat = np.meshgrid(np.arange(4.0) * 90, np.arange(5.0) * 30 - 60, indexing="ij")
    grid = pyoasis.Grid("ga", 4, 5, pyoasis.asarray(lon), pyoasis.asarray(lat))
    grid.set_corners(pyoasis.asarray(np.stack([lon - 45, lon + 45, lon + 45, lon - 45], 2)),
                     pyoasis.asarray(np.stack([lat - 15, lat - 15, lat + 15, lat + 15], 2)))
    grid.set_mask(np.asfortranarray((lat > 50).astype(np.int32)))
    grid.set_area(pyoasis.asarray(np.ones((4, 5))))
    grid.write()
    (Path(rundir) / "errors.json").write_text(json.dumps(got))


def fracwgt_main(rundir, nsend):
    """OASIS3-MCT 5.0's fracwgt example (sender on apple partitions, serial receiver)."""
    sys.path.insert(0, str(SHIM))
    import pyoasis
    from mpi4py import MPI
    from pyoasis import OASIS

    sender = MPI.COMM_WORLD.rank < nsend
    comp = pyoasis.Component("sender-apple" if sender else "receiver")
    if sender:
        local = comp.localcomm
        n = 182 * 149
        size = n // local.size
        offset = local.rank * size
        if local.rank == local.size - 1:
            size = n - offset
        part = pyoasis.ApplePartition(offset, size)
        names = ("FSENDSCA", "FSENDFRC", "FSENDNOR")
        g = np.arange(offset, offset + size)
    else:
        part = pyoasis.SerialPartition(96 * 72)
        names = ("FRECVSCA", "FRECVFRC", "FRECVNOR")
    variables = [pyoasis.Var(v, part, OASIS.OUT if sender else OASIS.IN) for v in names]
    comp.enddef()
    got = {"scaled": [], "frac": [], "normalized": []}
    for date in (0, 4):
        if sender:
            lon, lat = (g % 182) * 360.0 / 182, (g // 182) * 180.0 / 149 - 90
            field = 2.0 + np.sin(np.radians(lat)) ** 3 * np.cos(2 * np.radians(lon)) + date
            frac = 1.0 / (1.0 + np.exp(-0.2 * (np.abs(lat) - 60.0 + 10.0 * np.cos(8 * np.radians(lon)))))
            frac = np.where(frac <= 0.1, 0.0, np.where(frac >= 0.9, 1.0, frac))
            variables[0].put(date, pyoasis.asarray(field * frac))
            variables[1].put(date, pyoasis.asarray(frac))
            info = variables[2].put(date, pyoasis.asarray(field), fracwgt=pyoasis.asarray(frac))
            assert info == OASIS.SENT, info
        else:
            for key, var in zip(got, variables):
                a = pyoasis.asarray(np.zeros(96 * 72))
                var.get(date, a)
                got[key].append(np.array(a))
    if not sender:
        np.savez(Path(rundir) / "fracwgt.npz", **{k: np.array(v) for k, v in got.items()})
    del comp


def grid_main(rundir):
    """A grid written from every process with a box partition (test_pyoasis_grid_with_...)."""
    sys.path.insert(0, str(SHIM))
    import pyoasis

    comp = pyoasis.Component("gridmodel")
    local = comp.localcomm
    i0 = local.rank * 11 // local.size
    cols = (local.rank + 1) * 11 // local.size - i0
    part = pyoasis.BoxPartition(i0, cols, 5, 11)
    i, j = np.meshgrid(np.arange(i0, i0 + cols), np.arange(5), indexing="ij")  # (cols, 5)
    lon = 10.0 * i + 0.5 * j
    grid = pyoasis.Grid("pgrd", 11, 5, pyoasis.asarray(lon), pyoasis.asarray(-20.0 + 10.0 * j),
                        part)
    grid.set_corners(pyoasis.asarray(np.stack([lon + k for k in range(4)], axis=2)),
                     pyoasis.asarray(np.stack([-20.0 + 10.0 * j] * 4, axis=2)))
    grid.set_mask(np.asfortranarray(((i + j) % 2).astype(np.int32)))
    grid.write()
    comp.enddef()
    del comp


if __name__ == "__main__":
    if sys.argv[1] == "grid":
        grid_main(sys.argv[2])
    elif sys.argv[1] == "fracwgt":
        fracwgt_main(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "toy":
        toy_main(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "errors":
        errors_main(sys.argv[2])
