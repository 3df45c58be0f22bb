"""The SimGrid platform generator and the plot grouping (no simulation; see tests/sim for runs)."""

import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

SOURCE = os.environ.get("ISTHMUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "python"))

from isthmus.sim import plot  # noqa: E402
from isthmus.sim.platform import (PRESETS, parse_bandwidth, parse_time,  # noqa: E402
                                  platform_from_spec)


def cluster(p):
    root = ET.fromstring(p.xml().split("\n", 1)[1].split("\n", 1)[1])  # after <?xml> and DOCTYPE
    (zone,) = root
    (c,) = zone
    return c.attrib


@pytest.mark.parametrize("name,nodes,cores,topo", [
    ("tansuo", 720, 12, "2;18,40;1,18;1,1"),
    ("curie", 5184, 16, "3;18,18,16;1,18,18;1,1,1"),
    ("torus-m", 4096, 16, "16,16,16"),
    ("fattree-m", 65536, 1, "4;16,16,16,16;1,16,16,16;1,1,1,1"),
    ("dragonfly-mm", 65536, 1, "16,1;16,1;16,1;16"),
    ("dragonfly-sl", 65536, 1, "64,1;4,1;64,1;4"),
    ("dragonfly-ls", 65536, 1, "4,1;64,1;64,1;4"),
])
def test_presets(name, nodes, cores, topo):
    p = platform_from_spec(name)
    assert p.nodes() == nodes and p.cores == cores
    a = cluster(p)
    assert a["topo_parameters"] == topo
    assert a["radical"] == f"0-{nodes - 1}"
    assert a["core"] == str(cores)
    assert p.cfg["smpi/ois"] == "0:5e-07:0" and p.cfg["smpi/or"] == "0:5e-07:0"


def test_preset_link_numbers():
    assert cluster(platform_from_spec("tansuo"))["bw"] == "5000000000Bps"
    assert cluster(platform_from_spec("curie"))["bw"] == "4000000000Bps"
    a = cluster(platform_from_spec("torus-m"))
    assert (a["bw"], a["lat"], a["topology"]) == ("10000000000Bps", "1e-07s", "TORUS")


def test_spec_overrides_and_units():
    p = platform_from_spec("crossbar:nodes=2,bw=1GBps,lat=10us,cores=3,loopback_bw=80Gbps")
    a = cluster(p)
    assert "topology" not in a
    assert (a["bw"], a["lat"], a["core"], a["loopback_bw"]) == \
        ("1000000000Bps", "1e-05s", "3", "10000000000Bps")
    assert platform_from_spec("torus:dims=2x3x4").nodes() == 24
    assert platform_from_spec("curie:bw=8GBps").bw == 8e9
    assert parse_bandwidth("5GBps") == 5e9 and parse_bandwidth("40Gbps") == 5e9
    assert parse_time("100ns") == pytest.approx(1e-7) and parse_time(2) == 2.0


@pytest.mark.parametrize("spec,message", [
    ("nosuch", "platform 'nosuch': not a preset (tansuo, curie, torus-m, fattree-m, "
               "dragonfly-mm, dragonfly-sl, dragonfly-ls) nor a topology (crossbar, fattree, "
               "torus, dragonfly)"),
    ("torus:depth=3", "platform 'torus:depth=3': unknown key 'depth' for a torus (known: bw, "
                      "lat, cores, loopback_bw, loopback_lat, dims)"),
    ("torus:dims", "platform 'torus:dims': 'dims' is not key=value"),
    ("torus:dims=4xa", "dims '4xa': expected integers separated by 'x' (e.g. 4x4x4)"),
    ("crossbar:bw=5GB", "bandwidth '5GB': expected a number with a unit among"),
    ("fattree:down=4x4,up=1", "platform 'fattree': fat tree with 2 levels needs 2 'up' and "
                              "'parallel' entries, got 1 and 2"),
    ("dragonfly:groups=5,chassis=5,routers=4", "a dragonfly needs groups <= routers per chassis "
                                               "under SimGrid 3.32"),
])
def test_spec_errors(spec, message):
    with pytest.raises(ValueError) as e:
        platform_from_spec(spec)
    assert message in str(e.value)


def test_placement_fills_nodes_in_order():
    p = platform_from_spec("tansuo")
    hosts = p.placement(30)
    assert hosts[:12] == ["node-0"] * 12 and hosts[12:24] == ["node-1"] * 12
    assert hosts[24:] == ["node-2"] * 6
    assert p.placement(4, ranks_per_node=2) == ["node-0", "node-0", "node-1", "node-1"]
    assert p.hostfile(3, 1) == "node-0\nnode-1\nnode-2\n"
    with pytest.raises(ValueError, match="platform 'crossbar' has 2 nodes; 3 ranks at 1 per "
                                         "node need 3"):
        platform_from_spec("crossbar:nodes=2").placement(3)


def test_trimming_keeps_the_used_part():
    assert platform_from_spec("fattree-m").trimmed(64).topo_parameters() == \
        "4;16,4,1,1;1,16,16,16;1,1,1,1"
    assert platform_from_spec("fattree-m").trimmed(65536).nodes() == 65536
    assert platform_from_spec("fattree-m").trimmed(5000).nodes() == 8192
    assert platform_from_spec("dragonfly-mm").trimmed(5000).topo_parameters() == \
        "2,1;16,1;16,1;16"
    torus = platform_from_spec("torus-m")
    assert torus.trimmed(10) is torus  # a smaller torus would have other routes


def test_plot_lines_split_by_varying_parameters(tmp_path):
    recs = []
    for n in (4, 16, 64):
        for method in ("p2p", "alltoallv"):
            for nbytes in (8, 1024):
                recs.append({"bench": "demo", "method": method, "bytes": nbytes, "px": n // 4,
                             "median_s": 1e-6 * n, "min_s": 1e-6, "max_s": 2e-6 * n,
                             "sim": {"ranks": n, "platform": "tansuo"}})
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    lines = plot.series(plot.load(path), None, "median_s")["demo"]
    assert sorted(lines) == ["alltoallv (bytes=1024)", "alltoallv (bytes=8)",
                             "p2p (bytes=1024)", "p2p (bytes=8)"]
    assert [p[0] for p in lines["p2p (bytes=8)"]] == [4.0, 16.0, 64.0]
    (png,) = plot.plot(path)
    assert png.name == "r-demo.png" and png.read_bytes()[:4] == b"\x89PNG"


def test_plot_rejects_bad_lines(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"bench": "x"}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a JSON object"):
        plot.load(path)
