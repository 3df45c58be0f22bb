"""Per-message cost calibrations (isthmus.sim.calibration): their options, where they go among
the runner's, and that they make SimGrid charge the receiver (eager messages)."""

import pytest

from isthmus.sim import calibration, runner
from isthmus.sim.platform import platform_from_spec


def test_every_calibration_charges_sender_and_receiver():
    for name in calibration.CALIBRATIONS:
        cfg = calibration.calibration_cfg(name)
        for key in ("smpi/os", "smpi/ois", "smpi/or"):
            first = cfg[key].split(";")[0].split(":")
            assert first[0] == "0" and float(first[1]) > 0, (name, key)
        # smpi/or is charged only for detached (eager) messages: the threshold must let the
        # small messages of the transfer benchmarks through
        assert int(cfg["smpi/send-is-detached-thresh"]) >= 4096, name
        assert calibration.CALIBRATIONS[name].sources, name


def test_dahu_figures():
    """The expected values of SimGrid's published dahu calibration (mixture means) at 80 bytes."""
    cfg = calibration.calibration_cfg("dahu")

    def at(key, size):
        cost = None
        for section in cfg[key].split(";"):
            start, base, per_byte = (float(v) for v in section.split(":"))
            if cost is None or size > start:
                cost = base + per_byte * size
        return cost

    assert at("smpi/os", 80) == pytest.approx(3.40e-7, rel=0.01)
    assert at("smpi/ois", 80) == pytest.approx(7.35e-7, rel=0.01)
    assert at("smpi/or", 80) == pytest.approx(1.44e-6, rel=0.01)
    assert cfg["smpi/send-is-detached-thresh"] == "64000"


def test_ib_suffix_adds_the_contention_model():
    cfg = calibration.calibration_cfg("dahu+ib")
    assert cfg["network/model"] == "IB"
    assert cfg["smpi/IB-penalty-factors"] == "0.965;0.925;1.35"
    assert "network/model" not in calibration.calibration_cfg("dahu")


@pytest.mark.parametrize("name", ["nope", "dahu+x", "+ib", ""])
def test_unknown_calibration_is_refused(name):
    with pytest.raises(ValueError, match="calibration"):
        calibration.calibration_cfg(name)


def test_order_of_options():
    plat = platform_from_spec("tansuo")
    # without a calibration: the platform's placeholder overhead and no eager messages
    base = runner.simgrid_options(plat.cfg)
    assert base["smpi/ois"] == "0:5e-07:0" and base["smpi/send-is-detached-thresh"] == "0"
    # the calibration overrides the platform and the runner ...
    cal = runner.simgrid_options(plat.cfg, "dahu")
    assert cal["smpi/send-is-detached-thresh"] == "64000"
    assert cal["smpi/or"].startswith("0:1.44e-06")
    assert cal["smpi/barrier"] == runner.RUN_CFG["smpi/barrier"]
    # ... and --cfg overrides the calibration
    over = runner.simgrid_options(plat.cfg, "dahu", ["smpi/or:0:0:0"])
    assert over["smpi/or"] == "0:0:0"


def test_run_refuses_an_unknown_calibration_before_building(tmp_path):
    with pytest.raises(ValueError, match="calibration 'nope'"):
        runner.run("ping", "crossbar:nodes=2", 2, build_dir=tmp_path, calibration="nope")
