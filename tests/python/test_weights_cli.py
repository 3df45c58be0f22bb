"""``isthmus weights``: generate ORCA2 <-> LMDZ weights from the shared grid files on several
ranks, compare them with the SCRIP files OASIS made for the same grids (the interpolation error
of a smooth function no worse), check that the rank count does not change a bit, and that bad
input gets a message naming it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from netCDF4 import Dataset

SOURCE = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("ISTHMUS_BUILD_DIR", str(SOURCE / "build")))
TOOL = BUILD / "tools" / "weights" / "isthmus_weights"
DATA = SOURCE / "tests" / "data" / "orca2-lmdz"

pytestmark = pytest.mark.skipif(not TOOL.is_file(), reason=f"no {TOOL}")


def run(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), ISTHMUS_BUILD_DIR=str(BUILD),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    return subprocess.run([sys.executable, "-m", "isthmus", "weights", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def generate(tmp_path, src, dst, method, ranks, *extra):
    out = tmp_path / f"w_{src}_{dst}_{method.replace(',', '+')}_{ranks}.nc"
    r = run("--src", str(DATA / f"grid_{src}.nc"), "--dst", str(DATA / f"grid_{dst}.nc"),
            "--method", method, "--ranks", str(ranks), "--out", str(out), *extra)
    assert r.returncode == 0, r.stderr + r.stdout
    return out, r.stdout


def check(path):
    r = run("--check", str(path), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def links(path):
    with Dataset(path) as nc:
        return (np.asarray(nc["src_address"][:]), np.asarray(nc["dst_address"][:]),
                np.asarray(nc["remap_matrix"][:]))


@pytest.mark.parametrize("method,options,oasis", [
    ("conservative", ["--normalization", "fracnnei"], "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"),
    ("bilinear,nearest", ["--neighbours", "1"], "rmp_torc_to_lmdz_BILINEAR.nc"),
])
def test_orca2_to_lmdz_is_as_accurate_as_oasis(tmp_path, method, options, oasis):
    out, text = generate(tmp_path, "torc", "lmdz", method, 2, *options)
    assert "unserved                      0 active destination points (1947 masked)" in text
    ours, theirs = check(out), check(DATA / oasis)
    # Every active LMDZ point mapped, as in OASIS's file.
    assert ours["dst_mapped"] == theirs["dst_mapped"] == 4965
    for name in ("smooth", "harmonic16", "vortex"):
        a, b = ours["functions"][name], theirs["functions"][name]
        assert a["rms_rel_error"] <= b["rms_rel_error"] * 1.02, (name, a, b)
        assert a["max_rel_error"] <= b["max_rel_error"] * 1.02, (name, a, b)


def test_destination_fractions_are_right_at_the_pole(tmp_path):
    """LMDZ's north pole row lies wholly under ORCA2's active Arctic cells: its covered fraction
    is 1 (CDO 2.1.1 writes 0.5 there, OASIS 2.0's SCRIP negative values)."""
    out, _ = generate(tmp_path, "torc", "lmdz", "conservative", 2, "--normalization", "fracarea")
    with Dataset(out) as nc:
        frac = np.asarray(nc["dst_grid_frac"][:]).reshape(72, 96)
        imask = np.asarray(nc["dst_grid_imask"][:]).reshape(72, 96)
    assert imask[-1].all()
    assert np.all(np.abs(frac[-1] - 1.0) < 1e-12), frac[-1]
    assert (frac >= 0).all() and (frac <= 1).all()
    assert (frac[imask == 0] == 0).all()


def test_the_rank_count_changes_no_bit(tmp_path):
    one, _ = generate(tmp_path, "lmdz", "torc", "conservative,bilinear,nearest", 1)
    three, _ = generate(tmp_path, "lmdz", "torc", "conservative,bilinear,nearest", 3)
    for a, b in zip(links(one), links(three)):
        assert a.shape == b.shape and np.array_equal(a, b)
    with Dataset(three) as nc:
        method = np.asarray(nc["dst_grid_method"][:])
        assert nc["dst_grid_method"].methods == "conservative,bilinear,nearest"
        imask = np.asarray(nc["dst_grid_imask"][:])
    # every active ORCA2 point served by one of the three steps, masked ones by none
    assert (method[imask == 1] >= 0).all() and (method[imask == 0] == -1).all()


@pytest.mark.parametrize("method,options", [
    ("conservative", []),
    ("conservative", ["--normalization", "fracnnei"]),
    ("nearest", ["--masks", "oasis"]),
    ("bilinear,creep", []),
])
def test_grids_read_in_parts_write_the_file_of_the_grids_held_whole(tmp_path, method, options):
    """On more than one rank the grids are read in parts (each rank
    its block of ORCA2 and the LMDZ rows that block can reach, more for points whose nearest
    lie beyond them): the file is byte for byte the one written with both grids held whole,
    and no rank held the whole source."""
    parts, text = generate(tmp_path, "lmdz", "torc", method, 3, *options)
    record = json.loads(text.strip().splitlines()[-1])
    assert record["grids"] == "parts" and 0 < record["src_points_held"] < 96 * 72
    whole = tmp_path / "whole.nc"
    r = run("--src", str(DATA / "grid_lmdz.nc"), "--dst", str(DATA / "grid_torc.nc"),
            "--method", method, "--ranks", "3", "--out", str(whole), "--grids", "whole", *options)
    assert r.returncode == 0, r.stderr + r.stdout
    assert json.loads(r.stdout.strip().splitlines()[-1])["grids"] == "whole"
    assert parts.read_bytes() == whole.read_bytes()


def test_a_source_in_the_shared_layout_streams_to_the_weights_held_whole(tmp_path):
    """--stream-source reads the source in slabs from any grid format: here the shared data's
    ORCA2 layout ((crn, y, x) corners, imask), which streaming once refused (SCRIP files only).
    The streamed links are the held ones (in source order), weights within 1e-12."""
    streamed, text = generate(tmp_path, "torc", "lmdz", "conservative", 2, "--stream-source",
                              "--slab-points", "5000")
    assert json.loads(text.strip().splitlines()[-1])["streamed"] is True
    held, _ = generate(tmp_path, "torc", "lmdz", "conservative", 1)
    (s1, d1, w1), (s2, d2, w2) = links(streamed), links(held)
    a, b = np.lexsort((d1, s1)), np.lexsort((d2, s2))
    assert np.array_equal(s1[a], s2[b]) and np.array_equal(d1[a], d2[b])
    assert np.max(np.abs(w1[a] - w2[b])) < 1e-12


def test_oasis_masks_drop_the_masked_among_the_nearest(tmp_path):
    """--masks oasis: SCRIP's DISTWGT rule. Near LMDZ's coasts some of an ORCA2 point's 4 nearest
    LMDZ points are land: they are dropped, not replaced by the next ocean points (the default);
    the links that remain are the same points with renormalised weights."""
    (tmp_path / "oasis").mkdir()
    ours, _ = generate(tmp_path, "lmdz", "torc", "nearest", 2)
    oasis, _ = generate(tmp_path / "oasis", "lmdz", "torc", "nearest", 2, "--masks", "oasis")
    with Dataset(DATA / "grid_lmdz.nc") as nc:
        active = np.asarray(nc["imask"][:]).ravel() == 1  # this file: 1 = active
    (s0, d0, w0), (s1, d1, w1) = links(ours), links(oasis)
    assert active[s0 - 1].all() and active[s1 - 1].all()
    n0 = np.bincount(d0, minlength=d0.max() + 1)
    n1 = np.bincount(d1, minlength=d0.max() + 1)
    served = n0 > 0
    # fewer than 4 links: by default only where a source point coincides (weight 1 alone)
    assert (n1[served] >= 1).all() and (n1[served] <= 4).all()
    assert (n1[served] < 4).sum() > (n0[served] < 4).sum() + 100
    # every weight sums to 1 per destination point either way
    assert np.allclose(np.bincount(d1, weights=w1.ravel())[served], 1.0, atol=1e-13)
    r = run("--src", str(DATA / "grid_lmdz.nc"), "--dst", str(DATA / "grid_torc.nc"),
            "--method", "nearest", "--masks", "scrip", "--out", str(tmp_path / "x.nc"))
    assert r.returncode == 2 and "invalid choice: 'scrip'" in r.stderr


def test_bad_input_names_what_is_wrong(tmp_path):
    r = run("--src", str(DATA / "grid_torc.nc"), "--dst", str(DATA / "grid_lmdz.nc"),
            "--method", "bilinear,spline", "--out", str(tmp_path / "x.nc"))
    assert r.returncode == 1
    assert '"spline" is not a method' in r.stderr
    r = run("--src", str(tmp_path / "none.nc"), "--dst", str(DATA / "grid_lmdz.nc"),
            "--method", "nearest", "--out", str(tmp_path / "x.nc"))
    assert r.returncode == 1 and "none.nc" in r.stderr
    r = run("--src", str(DATA / "grid_torc.nc"), "--method", "nearest")
    assert r.returncode == 2 and "--dst, --out required" in r.stderr
    assert not (tmp_path / "x.nc").exists()


def write_oasis_grids(run_dir, grids=("torc", "lmdz")):
    """The shared grids as OASIS's grids.nc (lon, lat, clo, cla), masks.nc (1 = masked) and
    areas.nc in run_dir, as a model's oasis_write_grid calls leave them."""
    with Dataset(run_dir / "grids.nc", "w") as g, Dataset(run_dir / "masks.nc", "w") as m, \
            Dataset(run_dir / "areas.nc", "w") as a:
        for name in grids:
            with Dataset(DATA / f"grid_{name}.nc") as src:
                for f in (g, m, a):
                    for dim in (f"y_{name}", f"x_{name}"):
                        f.createDimension(dim, src.dimensions[dim].size)
                g.createDimension(f"crn_{name}", src.dimensions[f"crn_{name}"].size)
                for v in ("lon", "lat", "clo", "cla"):
                    g.createVariable(f"{name}.{v}", "f8", src[v].dimensions)[:] = src[v][:]
                m.createVariable(f"{name}.msk", "i4", src["imask"].dimensions)[:] = 1 - src["imask"][:]
                a.createVariable(f"{name}.srf", "f8", src["srf"].dimensions)[:] = src["srf"][:]


NAMCOUPLE = """ $NFIELDS
   4
 $END
 $NBMODEL
   2  ocean  atmos
 $END
 $RUNTIME
   86400
 $END
 $NLOGPRT
   0
 $END
 $STRINGS
O_SST A_SST 1 3600 1 r.nc EXPORTED
182 149 96 72 torc lmdz LAG=0
P 2 P 0
SCRIPR
CONSERV LR SCALAR LATLON 1 FRACNNEI FIRST
O_ICE A_ICE 1 3600 1 r.nc EXPORTED
182 149 96 72 torc lmdz LAG=0
P 2 P 0
SCRIPR
CONSERV LR SCALAR LATLON 1 FRACNNEI FIRST
A_FLX O_FLX 1 3600 1 r.nc EXPORTED
96 72 182 149 lmdz torc LAG=0
P 0 P 2
SCRIPR
BILINEAR LR SCALAR LATLON 1
A_TAU O_TAU 1 3600 1 r.nc EXPORTED
96 72 182 149 lmdz torc LAG=0
P 0 P 2
MAPPING
rmp_given.nc
 $END
"""


def test_a_namcouple_gets_its_scripr_weights_made_ahead(tmp_path):
    """--namcouple: every SCRIPR entry's file, as the coupler names and makes it (one file for the
    two entries that share it; none for the MAPPING entry), kept on a second run as the coupler
    keeps it at its start; the conservative file is the bits of the same weights asked for by
    hand with OASIS's mask rules."""
    write_oasis_grids(tmp_path)
    (tmp_path / "namcouple").write_text(NAMCOUPLE)
    made = run("--namcouple", str(tmp_path / "namcouple"), "--ranks", "2")
    assert made.returncode == 0, made.stderr + made.stdout
    files = json.loads(made.stdout.strip().splitlines()[-1])["files"]
    names = [Path(f["file"]).name for f in files]
    assert names == ["rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc", "rmp_lmdz_to_torc_BILINEAR.nc"]
    assert all(f["generated"] for f in files)
    assert not (tmp_path / "rmp_given.nc").exists()
    again = run("--namcouple", str(tmp_path / "namcouple"))
    assert again.returncode == 0, again.stderr
    assert not any(f["generated"] for f in json.loads(again.stdout.strip().splitlines()[-1])["files"])
    assert "kept" in again.stdout
    by_hand = tmp_path / "by_hand.nc"
    r = run("--src", f"{tmp_path}/grids.nc:torc", "--dst", f"{tmp_path}/grids.nc:lmdz",
            "--method", "conservative", "--normalization", "fracnnei", "--masks", "oasis",
            "--out", str(by_hand))
    assert r.returncode == 0, r.stderr
    for a, b in zip(links(tmp_path / names[0]), links(by_hand)):
        assert a.shape == b.shape and np.array_equal(a, b)
    # a grid missing from grids.nc: the first entry that needs it named, and why; nothing written
    (tmp_path / names[1]).unlink()
    write_oasis_grids(tmp_path, grids=("torc",))
    r = run("--namcouple", str(tmp_path / "namcouple"))
    assert r.returncode == 1
    assert ("entry O_SST (line 14): SCRIPR: the grids of weights file "
            "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc (made by isthmus) cannot be read") in r.stderr, r.stderr
    assert "no grid lmdz in the file; it holds torc" in r.stderr
    assert not (tmp_path / names[1]).exists()
    r = run("--namcouple", str(tmp_path / "namcouple"), "--src", "x")
    assert r.returncode == 2 and "not with --src" in r.stderr


def test_python_api_writes_the_same_bits_and_caches(tmp_path):
    import isthmus
    from isthmus import IsthmusError
    lib = BUILD / "libisthmus.so"
    out = tmp_path / "api.nc"
    args = (DATA / "grid_torc.nc", DATA / "grid_lmdz.nc", "bilinear,creep", out)
    assert isthmus.generate_weights(*args, options={"neighbours": 1}, library=lib) is True
    assert isthmus.generate_weights(*args, options={"neighbours": 1}, library=lib) is False
    cli, _ = generate(tmp_path, "torc", "lmdz", "bilinear,creep", 2)
    for a, b in zip(links(out), links(cli)):
        assert np.array_equal(a, b)
    with pytest.raises(IsthmusError, match='"spline" is not a method'):
        isthmus.generate_weights(DATA / "grid_torc.nc", DATA / "grid_lmdz.nc", "spline",
                                 tmp_path / "x.nc", library=lib)


def test_the_launcher_starts_open_mpi_without_its_network_search_only_on_this_node(monkeypatch):
    """launch(): a singleton runs the program alone (which then sets its own Open MPI options);
    mpirun outside a batch allocation gets the shared-memory PML (the cm PML's probing of
    libfabric and PSM costs 0.2 s a process); inside one, or with $MPIRUN, or with the user's
    own setting, nothing is changed."""
    sys.path.insert(0, str(SOURCE / "python"))
    from isthmus.commands.weights import launch

    for var in ("OMPI_MCA_pml", "MPIRUN", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID",
                "COBALT_JOBID", "FLUX_JOB_ID", "PE_HOSTFILE", "OMPI_MCA_orte_default_hostfile"):
        monkeypatch.delenv(var, raising=False)
    cmd, env = launch(["tool", "--x"], 1)
    assert cmd == ["tool", "--x"] and "OMPI_MCA_pml" not in env
    cmd, env = launch(["tool"], 2)
    assert cmd[0] == "mpirun" and cmd[-1] == "tool" and env["OMPI_MCA_pml"] == "ob1"
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    cmd, env = launch(["tool"], 2)
    assert cmd[0] == "mpirun" and "OMPI_MCA_pml" not in env
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv("OMPI_MCA_pml", "ucx")
    assert launch(["tool"], 2)[1]["OMPI_MCA_pml"] == "ucx"
    monkeypatch.delenv("OMPI_MCA_pml")
    monkeypatch.setenv("MPIRUN", "mpiexec.mpich")
    cmd, env = launch(["tool"], 3)
    assert cmd[:3] == ["mpiexec.mpich", "-n", "3"] and "OMPI_MCA_pml" not in env
