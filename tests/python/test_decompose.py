"""``isthmus decompose``: NEMO's optimal decomposition of the real ORCA2 grid through the C
library, the layout picture, square-node placement, and clear errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = os.environ.get("ISTHMUS_BUILD_DIR", str(SOURCE / "build"))
MASK = SOURCE / "tests" / "data" / "orca2-lmdz" / "torc_imask.nc"

pytestmark = pytest.mark.skipif(not (Path(BUILD) / "libisthmus.so").is_file(),
                                reason=f"no libisthmus.so in {BUILD}")


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), ISTHMUS_BUILD_DIR=BUILD,
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([sys.executable, "-m", "isthmus", "decompose", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_orca2_with_land_removal_fold_and_square_nodes(tmp_path):
    png = tmp_path / "layout.png"
    r = run("--grid", "182", "149", "--procs", "128", "--mask", f"{MASK}:imask", "--fold", "F",
            "--cores-per-node", "16", "--png", str(png), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # 14 x 10 blocks, 17 of them land only: 123 ocean subdomains fit 128 processes, while the
    # next finer optimal layout would need more than 128.
    assert (out["ni"], out["nj"], out["land_removed"], out["subdomains"]) == (14, 10, 17, 123)
    assert out["largest_subdomain_shape"] == [15, 17]
    assert out["largest_subdomain_points"] == 15 * 17
    # North-fold sizing: every j part 15 rows but the northern one (149 = 9 * 15 + 14).
    assert out["j_sizes"] == [15] * 9 + [14]
    assert out["warning"].startswith("decomposition: 128 processes given but only 123 ocean")
    assert out["internode_fraction_square"] < out["internode_fraction_line"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_text_output_names_layout_and_largest_subdomain(tmp_path):
    r = run("--grid", "100", "60", "--procs", "12", "--boundary", "periodic", "--png",
            str(tmp_path / "p.png"))
    assert r.returncode == 0, r.stderr
    # 12 processes on 100 x 60: 4 x 3 gives 25+2 by 20+2 points.
    assert "layout: 4 x 3 = 12 subdomains, 0 land-only removed, 12 used" in r.stdout
    assert "largest subdomain: 27 x 22 = 594 points (with halo)" in r.stdout


def test_bad_mask_shape_is_explained(tmp_path):
    r = run("--grid", "180", "149", "--procs", "8", "--mask", f"{MASK}:imask", "--no-png")
    assert r.returncode == 1
    assert "does not match --grid 180 149 (need (149, 180))" in r.stderr


def test_odd_grid_with_fold_is_rejected_by_the_library():
    r = run("--grid", "181", "149", "--procs", "8", "--fold", "T", "--no-png")
    assert r.returncode == 1
    assert ("isthmus_layout_create_optimal: decomposition: a north fold needs an even nx "
            "(got 181)") in r.stderr
