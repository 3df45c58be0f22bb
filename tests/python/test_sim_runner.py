"""The simulation runner's choice of SimGrid: options written for 3.32 translated for 4.x (so
that both simulate the same times), the runner's defaults, and a bad prefix named in the error."""

import pytest

from isthmus.sim import runner


def test_options_unchanged_for_332():
    opts = {"smpi/os": "0:5e-07:0", "smpi/bw-factor": "0:1", "smpi/test": "1e-07"}
    assert runner._cfg_for("3.32", opts) == opts
    assert runner._cfg_for("", opts) == opts


def test_options_translated_for_4():
    got = runner._cfg_for("4.1", {"smpi/os": "0:5e-07:0", "smpi/ois": "0:5e-07:0",
                                  "smpi/or": "0:5e-07:1e-9", "smpi/bw-factor": "0:1",
                                  "smpi/lat-factor": "0:1", "smpi/barrier": "ompi_recursivedoubling"})
    # a constant overhead charges every message (4.x exempts 0 bytes from a range starting at 0);
    # a size-dependent one is left as written
    assert got == {"smpi/os": "5e-07", "smpi/ois": "5e-07", "smpi/or": "0:5e-07:1e-9",
                   "network/bandwidth-factor": "0:1", "network/latency-factor": "0:1",
                   "smpi/barrier": "ompi_recursivedoubling"}


def test_logarithmic_collectives_are_defaults():
    # SMPI's linear defaults cost O(P^2) simulator work and stagger a barrier's ranks
    for key, alg in [("smpi/allgather", "rdb"), ("smpi/allreduce", "rdb"),
                     ("smpi/reduce", "binomial"), ("smpi/barrier", "ompi_recursivedoubling")]:
        assert runner.RUN_CFG[key] == alg


def test_bad_prefix_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("ISTHMUS_SIMGRID", raising=False)
    assert runner.simgrid_prefix() is None
    with pytest.raises(FileNotFoundError, match=f"SimGrid prefix '{tmp_path}': no bin/smpirun there"):
        runner.simgrid_prefix(str(tmp_path))
    monkeypatch.setenv("ISTHMUS_SIMGRID", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no bin/smpirun"):
        runner.simgrid_prefix()
