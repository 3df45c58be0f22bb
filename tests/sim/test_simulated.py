"""Small simulated cases under SimGrid SMPI (run by ctest after the sim_build_smpi fixture).

They check that the simulated network behaves as its platform says (ping time = the model's
prediction), that simulation is deterministic, that data moved under SMPI are bit-identical to
a real-MPI run, and that the command line records and plots results.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("ISTHMUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("ISTHMUS_BUILD_DIR", SOURCE / "build"))
SMPI_BUILD = Path(os.environ.get("ISTHMUS_SMPI_BUILD_DIR", SOURCE / "build-smpi"))
sys.path.insert(0, str(SOURCE / "python"))

from isthmus.sim import runner  # noqa: E402
from isthmus.sim.platform import platform_from_spec  # noqa: E402

PRIVATE = {"ISTHMUS_BENCH_PRIVATE_BUFFERS": "1"}  # real buffers, so that data can be checked


def simulate(bench, platform, ranks, args, **kw):
    kw.setdefault("build", False)  # the fixture built build-smpi
    kw.setdefault("build_dir", SMPI_BUILD)
    kw.setdefault("progress", False)
    res = runner.run(bench, platform, ranks, args, **kw)
    assert res.returncode == 0, f"smpirun failed:\n{res.log_tail}"
    assert res.records, f"no JSON record:\n{res.log_tail}"
    return res


def measured(rec):
    """The benchmark's own fields (the runner's metadata holds wall time and dates)."""
    return {k: v for k, v in rec.items() if k != "sim"}


# ---- the platform model ---------------------------------------------------------------------
@pytest.mark.parametrize("bw,lat", [(1e9, 10e-6), (10e9, 1e-6)])
def test_ping_model(bw, lat):
    """Two nodes of a crossbar: a message crosses the sender's and the receiver's link, so the
    one-way time of B bytes is 2 L + (B + 16) / W (SMPI 3.32 moves 16 bytes more than the
    payload; bandwidth and latency factors are 1; a blocking send under
    send-is-detached-thresh:0 pays no per-message overhead)."""
    spec = f"crossbar:nodes=2,bw={bw:g}Bps,lat={lat:g}s"
    sizes = [0, 1000, 1000000]
    res = simulate("ping", spec, 2, ["--sizes", ",".join(map(str, sizes)), "--reps", "3",
                                     "--iters", "2"], env=PRIVATE)
    got = {r["bytes"]: r for r in res.records}
    assert sorted(got) == sizes
    for b in sizes:
        predicted = 2 * lat + (b + 16) / bw
        assert got[b]["median_s"] == pytest.approx(predicted, rel=1e-9, abs=1e-15), b
        assert got[b]["min_s"] == got[b]["max_s"]  # every repetition simulates the same
        assert got[b]["data_checked"] is True and got[b]["errors"] == 0


def test_ping_model_isend_overhead():
    """The presets' per-message overhead (smpi/ois 0.5 us) delays each MPI_Isend: the neighbour
    skeleton posts 4 per exchange, so removing it must save at least 4 x 0.5 us minus the
    overlap with the previous message, and never more than 4 x 0.5 us."""
    spec = "crossbar:nodes=2,bw=10GBps,lat=1us"
    args = ["--bytes", "8", "--iters", "10", "--reps", "3"]
    with_o = simulate("neighbour", spec, 2, args).records[0]["per_exchange_median_s"]
    without = simulate("neighbour", spec, 2, args,
                       cfg=["smpi/ois:0:0:0"]).records[0]["per_exchange_median_s"]
    assert 0.5e-6 <= with_o - without <= 2.0e-6 + 1e-12


def test_calibration_charged():
    """A calibration charges every small message where a real MPI pays: bench_msgcost simulated
    under `dahu` measures the calibration's own figures back (posting an MPI_Isend: smpi/ois;
    receiving a message already arrived: smpi/or, which SMPI charges only to eager messages, so
    without the calibration's detached threshold it would be 0), from 1 and from 8 peers."""
    from isthmus.sim.calibration import calibration_cfg
    cfg = calibration_cfg("dahu")
    ois = float(cfg["smpi/ois"].split(";")[0].split(":")[1]) + 80 * 4.99e-11
    orecv = float(cfg["smpi/or"].split(";")[0].split(":")[1]) + 80 * 5.17e-11
    got = {}
    for ranks in (2, 9):
        res = simulate(str(SMPI_BUILD / "bench" / "ping" / "bench_msgcost"), "crossbar:nodes=9",
                       ranks, ["--bytes", "80", "--n", "90", "--reps", "3"], ranks_per_node=1,
                       calibration="dahu")
        for r in res.records:
            got[(r["measure"], r["per"], r["peers"])] = r["median_s"]
            assert r["sim"]["calibration"] == "dahu"
    assert got[("isend_post", "post", 1)] == pytest.approx(ois, rel=1e-3)
    for peers in (1, 8):
        # the receive also waits for the last message's latency, spread over 90 messages
        assert orecv <= got[("recv_pending", "recv", peers)] <= orecv * 1.05


# ---- determinism ----------------------------------------------------------------------------
def test_determinism():
    args = ["--bytes", "65536", "--reps", "3"]
    a = simulate("neighbour", "fattree:down=4x4x4", 16, args).records
    b = simulate("neighbour", "fattree:down=4x4x4", 16, args).records
    assert [measured(r) for r in a] == [measured(r) for r in b]
    if (SOURCE / "bench" / "redist").is_dir():
        rargs = ["--nx", "48", "--ny", "40", "--fields", "2", "--src-ranks", "6",
                 "--dst-ranks", "10", "--reps", "3", "--method", "all"]
        a = simulate("redist", "tansuo", 16, rargs, ranks_per_node=4).records
        b = simulate("redist", "tansuo", 16, rargs, ranks_per_node=4).records
        assert len(a) >= 3
        assert [measured(r) for r in a] == [measured(r) for r in b]


# ---- data under SMPI ------------------------------------------------------------------------
@pytest.mark.parametrize("platform,ranks,per", [("crossbar:nodes=6", 6, 1), ("tansuo", 24, 12),
                                                ("torus:dims=2x2x2,cores=2", 10, 2)])
def test_neighbour_data(platform, ranks, per):
    res = simulate("neighbour", platform, ranks, ["--bytes", "800", "--reps", "2"],
                   ranks_per_node=per, env=PRIVATE)
    rec = res.records[0]
    assert rec["data_checked"] is True
    assert rec["errors"] == 0
    assert rec["px"] * rec["py"] == ranks
    assert rec["sim"]["ranks"] == ranks and rec["sim"]["ranks_per_node"] == per


def test_neighbour_data_rejects_a_bad_grid():
    """A benchmark that aborts is a failed run (SMPI itself exits with 0 after MPI_Abort)."""
    res = runner.run("neighbour", "crossbar:nodes=6", 6, ["--px", "4", "--py", "4"],
                     build=False, build_dir=SMPI_BUILD, progress=False)
    assert res.returncode != 0 and not res.records
    assert "bench_neighbour: bad arguments: process grid 4 x 4 for 6 ranks" in \
        (res.workdir / "smpirun.log").read_text()


def test_trimmed_platform():
    """Leaving out the fat tree levels and dragonfly groups no rank reaches changes no time."""
    args = ["--bytes", "65536", "--reps", "3"]
    for spec, ranks in [("fattree:down=4x4x4", 24),
                        ("dragonfly:groups=4,chassis=2,routers=4,nodes_per_router=2", 20)]:
        cut = simulate("neighbour", spec, ranks, args)
        whole = simulate("neighbour", spec, ranks, args, full_platform=True)
        assert cut.meta["nodes_instantiated"] < whole.meta["nodes_instantiated"], spec
        assert [measured(r) for r in cut.records] == [measured(r) for r in whole.records], spec


# ---- bit-identical to real MPI --------------------------------------------------------------
REDIST_CASES = [
    ["--nx", "48", "--ny", "40", "--fields", "3", "--src-ranks", "5", "--dst-ranks", "7"],
    ["--nx", "30", "--ny", "22", "--fields", "2", "--levels", "3", "--src-ranks", "8",
     "--dst-ranks", "8", "--pattern", "random"],
]


@pytest.mark.parametrize("case", REDIST_CASES)
def test_redist_bit_identical(case):
    if not (SOURCE / "bench" / "redist").is_dir():
        pytest.skip("bench/redist does not exist yet")
    real_exe = BUILD / "bench" / "redist" / "bench_redist"
    assert real_exe.exists(), f"{real_exe} is not built (build the real-MPI tree first)"
    args = case + ["--method", "all", "--reps", "2"]
    real = subprocess.run([str(SOURCE / "tests" / "mpirun.sh"), "12", str(real_exe), *args],
                          capture_output=True, text=True, timeout=240)
    assert real.returncode == 0, real.stderr[-2000:]
    real_recs = {r["method"]: r for r in map(json.loads, filter(
        lambda l: l.startswith("{"), real.stdout.splitlines())) if r.get("case") == "exchange"}
    sim_recs = {r["method"]: r for r in simulate("redist", "tansuo", 12, args,
                                                 ranks_per_node=4, env=PRIVATE).records
                if r.get("case") == "exchange"}
    common = sorted(set(real_recs) & set(sim_recs))
    assert {"p2p", "alltoallv"} <= set(common), common
    for m in common:
        assert sim_recs[m]["errors"] == 0 and real_recs[m]["errors"] == 0, m
        assert len(sim_recs[m]["checksum"]) == 16, sim_recs[m]["checksum"]
        assert sim_recs[m]["checksum"] == real_recs[m]["checksum"], m
        assert sim_recs[m]["bytes_per_exchange"] == real_recs[m]["bytes_per_exchange"], m
        assert sim_recs[m]["messages_per_exchange"] == real_recs[m]["messages_per_exchange"], m


# ---- command line ---------------------------------------------------------------------------
def cli(*args):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"),
               ISTHMUS_SMPI_BUILD_DIR=str(SMPI_BUILD))
    return subprocess.run([sys.executable, "-m", "isthmus", *args], capture_output=True,
                          text=True, env=env, timeout=240)


def test_cli_simulate_and_plot(tmp_path):
    results = tmp_path / "results.jsonl"
    for n in (2, 4, 8):
        # our options after BENCH and around the benchmark's own (--bytes, --reps)
        r = cli("simulate", "neighbour", "--platform", "crossbar:nodes=8", "--bytes", "1024",
                "--ranks", str(n), "--no-build", "--results", str(results), "--no-progress",
                "--reps", "3")
        assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["sim"]["ranks"] for r in recs] == [2, 4, 8]
    assert all(r["reps"] == 3 and r["bytes"] == 1024 for r in recs)
    assert all(r["sim"]["platform"] == "crossbar" and r["sim"]["simulated_end_s"] > 0
               for r in recs)
    assert "--cfg=smpi/send-is-detached-thresh:0" in recs[0]["sim"]["cfg"]
    png = tmp_path / "scaling.png"
    r = cli("plot", str(results), "-o", str(png))
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    r = cli("simulate", "neighbour", "--platform", "nosuch", "--ranks", "2", "--no-build")
    assert r.returncode == 1
    assert "isthmus simulate: platform 'nosuch': not a preset (tansuo, curie" in r.stderr
    r = cli("simulate", "neighbour", "--platform", "crossbar:nodes=2", "--ranks", "3",
            "--no-build")
    assert r.returncode == 1
    assert ("platform 'crossbar' has 2 nodes; 3 ranks at 1 per node need 3") in r.stderr
