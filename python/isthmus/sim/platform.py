"""SimGrid platform descriptions for SMPI runs: fat tree, 3-D torus, dragonfly and crossbar.

A platform is one SimGrid ``<cluster>`` whose ``topology`` attribute selects SimGrid's own
routing (fat tree: d-mod-k; torus: dimension order; dragonfly: minimal; crossbar: one private
link per node and a non-blocking switch), so that no network model is written here: this module
only chooses numbers and writes the XML and the host file.

A platform is named by a spec string ``NAME[:key=value,key=value...]`` where NAME is a preset
(``tansuo``, ``curie``, ``torus-m``, ``fattree-m``, ``dragonfly-mm``, ``dragonfly-sl``,
``dragonfly-ls``) or a topology (``crossbar``, ``fattree``, ``torus``, ``dragonfly``), and the
keys override the preset's or topology's values. List values are written with ``x``
(``dims=4x4x4``). See sim/README.md for how each preset's numbers were chosen.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Dict, List

TOPOLOGIES = ("crossbar", "fattree", "torus", "dragonfly")

# Model settings every platform gets (overridable per preset or on the command line).
#  - bandwidth/latency factors 1: a link's bw is the bandwidth a message sees, its lat the delay;
#    SimGrid's default factors are a calibration of another cluster's TCP/MPI stack.
#  - 0.5 us per-message overhead (os: eager sends, ois: MPI_Isend, or: eager receives) so that
#    a burst of small messages costs injection time; without it 255 messages per rank took 7 us.
#  - no cross traffic: InfiniBand links are full duplex and carry no TCP acknowledgements.
#  - MPI_Wtime injects no simulated time, so that timers read the network time only.
#  - MPI_Test*/MPI_Iprobe inject 0.1 us (SMPI's default is 100 us per call, which made one p2p
#    exchange of the redistribution benchmark 40x slower than alltoallv and its set-up 200x
#    slower); a non-zero value keeps polling loops advancing the simulated clock.
BASE_CFG: Dict[str, str] = {
    "smpi/bw-factor": "0:1",
    "smpi/lat-factor": "0:1",
    "smpi/os": "0:5e-07:0",
    "smpi/ois": "0:5e-07:0",
    "smpi/or": "0:5e-07:0",
    "network/crosstraffic": "0",
    "smpi/wtime": "0",
    "smpi/test": "1e-07",
    "smpi/iprobe": "1e-07",
}

_UNITS_BW = {"bps": 1 / 8, "kbps": 1e3 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
             "Tbps": 1e12 / 8, "Bps": 1.0, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9,
             "TBps": 1e12,
             "KiBps": 1024.0, "MiBps": 1024.0 ** 2, "GiBps": 1024.0 ** 3}
_UNITS_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}


def parse_bandwidth(text) -> float:
    """'5GBps' -> 5e9 bytes/s; a bare number is bytes/s."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or (m.group(2) and m.group(2) not in _UNITS_BW):
        raise ValueError(f"bandwidth '{text}': expected a number with a unit among "
                         f"{', '.join(_UNITS_BW)} (e.g. 5GBps)")
    return float(m.group(1)) * (_UNITS_BW[m.group(2)] if m.group(2) else 1.0)


def parse_time(text) -> float:
    """'100ns' -> 1e-7 seconds; a bare number is seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]*)\s*", str(text))
    if not m or (m.group(2) and m.group(2) not in _UNITS_TIME):
        raise ValueError(f"time '{text}': expected a number with a unit among "
                         f"{', '.join(_UNITS_TIME)} (e.g. 100ns)")
    return float(m.group(1)) * (_UNITS_TIME[m.group(2)] if m.group(2) else 1.0)


def _ints(value, what: str) -> List[int]:
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)):
        out = [int(v) for v in value]
    else:
        try:
            out = [int(v) for v in str(value).split("x")]
        except ValueError:
            raise ValueError(f"{what} '{value}': expected integers separated by 'x' "
                             f"(e.g. 4x4x4)") from None
    if not out or any(v < 1 for v in out):
        raise ValueError(f"{what} '{value}': every entry must be >= 1")
    return out


@dataclass
class Platform:
    """One cluster: topology parameters, link model, cores (ranks) per node, SMPI settings."""

    name: str
    topology: str
    params: Dict[str, object]
    bw: float  # bytes/s of every network link
    lat: float  # seconds per network link
    cores: int = 1  # cores per node: the default number of ranks placed on a node
    loopback_bw: float = 10e9  # ranks on the same node talk through this link
    loopback_lat: float = 3e-7
    cfg: Dict[str, str] = field(default_factory=lambda: dict(BASE_CFG))
    description: str = ""

    def __post_init__(self):
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"platform '{self.name}': unknown topology '{self.topology}' "
                             f"(known: {', '.join(TOPOLOGIES)})")
        if self.bw <= 0 or self.lat < 0 or self.loopback_bw <= 0 or self.loopback_lat < 0:
            raise ValueError(f"platform '{self.name}': bandwidths must be > 0 and latencies >= 0")
        if self.cores < 1:
            raise ValueError(f"platform '{self.name}': cores must be >= 1, got {self.cores}")
        self.topo_parameters()  # validates the topology parameters

    # ---- topology -----------------------------------------------------------------------------
    def topo_parameters(self) -> str:
        """SimGrid's topo_parameters attribute ('' for the crossbar)."""
        p = self.params
        if self.topology == "crossbar":
            _ints(p.get("nodes", 1), "nodes")
            return ""
        if self.topology == "torus":
            return ",".join(map(str, _ints(p["dims"], "dims")))
        if self.topology == "fattree":
            down = _ints(p["down"], "down")
            levels = len(down)
            up = _ints(p.get("up", [1] + [down[0]] * (levels - 1)), "up")
            par = _ints(p.get("parallel", [1] * levels), "parallel")
            if len(up) != levels or len(par) != levels:
                raise ValueError(f"platform '{self.name}': fat tree with {levels} levels needs "
                                 f"{levels} 'up' and 'parallel' entries, got {len(up)} and "
                                 f"{len(par)}")
            return f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};" \
                   f"{','.join(map(str, par))}"
        # dragonfly: groups,links between two groups; chassis per group,links; routers per
        # chassis,links; nodes per router
        keys = ("groups", "group_links", "chassis", "chassis_links", "routers", "router_links",
                "nodes_per_router")
        v = {k: _ints(p.get(k, 1), k)[0] for k in keys}
        if v["groups"] > v["routers"]:
            # Measured: SimGrid 3.32's dragonfly segfaults on the first message between groups
            # when there are more groups than routers per chassis.
            raise ValueError(f"platform '{self.name}': a dragonfly needs groups <= routers per "
                             f"chassis under SimGrid 3.32 (it crashes otherwise), got "
                             f"{v['groups']} groups and {v['routers']} routers")
        return (f"{v['groups']},{v['group_links']};{v['chassis']},{v['chassis_links']};"
                f"{v['routers']},{v['router_links']};{v['nodes_per_router']}")

    def nodes(self) -> int:
        p = self.params
        if self.topology == "crossbar":
            return _ints(p.get("nodes", 1), "nodes")[0]
        if self.topology == "torus":
            return math.prod(_ints(p["dims"], "dims"))
        if self.topology == "fattree":
            return math.prod(_ints(p["down"], "down"))
        return math.prod(_ints(p.get(k, 1), k)[0]
                         for k in ("groups", "chassis", "routers", "nodes_per_router"))

    def trimmed(self, nodes_needed: int) -> "Platform":
        """The same platform cut down to the first nodes_needed nodes where that leaves every
        route between them unchanged: a fat tree's upper levels and a dragonfly's groups that no
        used node reaches are left out (the torus and the crossbar are kept whole, since their
        size changes routes). Building SimGrid's 65,536-node fat tree alone takes ~95 s here."""
        p = dict(self.params)
        if self.topology == "fattree":
            down = _ints(p["down"], "down")
            below = 1
            for i, m in enumerate(down):
                if below * m >= nodes_needed:
                    down = down[:i] + [max(1, -(-nodes_needed // below))] + [1] * (len(down) - i - 1)
                    break
                below *= m
            p["down"] = down
        elif self.topology == "dragonfly":
            per_group = math.prod(_ints(p.get(k, 1), k)[0]
                                  for k in ("chassis", "routers", "nodes_per_router"))
            groups = _ints(p.get("groups", 1), "groups")[0]
            p["groups"] = min(groups, max(1, -(-nodes_needed // per_group)))
        else:
            return self
        return dataclasses.replace(self, params=p, cfg=dict(self.cfg))

    def host(self, node: int) -> str:
        return f"node-{node}"

    # ---- files --------------------------------------------------------------------------------
    def xml(self) -> str:
        topo = ""
        if self.topology != "crossbar":
            topo = f' topology="{self.topology_attr()}" topo_parameters="{self.topo_parameters()}"'
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f"  <!-- isthmus platform '{self.name}': {self.describe()} -->\n"
            '  <zone id="world" routing="Full">\n'
            f'    <cluster id="{self.name}" prefix="node-" suffix="" radical="0-{self.nodes() - 1}"'
            f' speed="1Gf" core="{self.cores}" bw="{self.bw:.12g}Bps" lat="{self.lat:.12g}s"'
            f' loopback_bw="{self.loopback_bw:.12g}Bps" loopback_lat="{self.loopback_lat:.12g}s"'
            f' sharing_policy="SPLITDUPLEX"{topo}/>\n'
            "  </zone>\n"
            "</platform>\n")

    def topology_attr(self) -> str:
        return {"fattree": "FAT_TREE", "torus": "TORUS", "dragonfly": "DRAGONFLY"}[self.topology]

    def placement(self, ranks: int, ranks_per_node: int | None = None) -> List[str]:
        """Host of each rank: consecutive ranks fill a node (ranks_per_node, default the cores)
        before the next node is used, as a batch scheduler places a job."""
        per = ranks_per_node or self.cores
        if ranks < 1 or per < 1:
            raise ValueError(f"need ranks >= 1 and ranks per node >= 1, got {ranks} and {per}")
        needed = -(-ranks // per)
        if needed > self.nodes():
            raise ValueError(f"platform '{self.name}' has {self.nodes()} nodes; {ranks} ranks at "
                             f"{per} per node need {needed}")
        return [self.host(r // per) for r in range(ranks)]

    def hostfile(self, ranks: int, ranks_per_node: int | None = None) -> str:
        return "\n".join(self.placement(ranks, ranks_per_node)) + "\n"

    def cfg_args(self) -> List[str]:
        return [f"--cfg={k}:{v}" for k, v in self.cfg.items()]

    def describe(self) -> str:
        topo = self.topology if self.topology == "crossbar" else \
            f"{self.topology} {self.topo_parameters()}"
        return (f"{topo}, {self.nodes()} nodes x {self.cores} cores, links {self.bw / 1e9:g} GB/s "
                f"{self.lat * 1e6:g} us, node-local {self.loopback_bw / 1e9:g} GB/s "
                f"{self.loopback_lat * 1e6:g} us")

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["nodes"] = self.nodes()
        d["topo_parameters"] = self.topo_parameters()
        return d


# ---- presets (numbers and their sources: sim/README.md) ----------------------------------------
def _preset(name, topology, params, bw, lat, cores, loopback_bw, loopback_lat, description):
    return dict(name=name, topology=topology, params=params, bw=bw, lat=lat, cores=cores,
                loopback_bw=loopback_bw, loopback_lat=loopback_lat, description=description)


PRESETS: Dict[str, dict] = {
    # Seed 001 sect. 2.2/5: Tansuo100, 700 nodes of 2 six-core X5670, InfiniBand 5 GB/s peak.
    "tansuo": _preset("tansuo", "fattree", {"down": [18, 40], "up": [1, 18], "parallel": [1, 1]},
                      5e9, 2.5e-7, 12, 8e9, 3e-7,
                      "Tansuo100 (C-Coupler experiments): 720 nodes x 12 cores, 2-level "
                      "InfiniBand fat tree, 5 GB/s"),
    # Seed 000 sect. 3: Curie thin nodes, 5040 nodes of 2 eight-core E5-2680, IB QDR full fat tree.
    "curie": _preset("curie", "fattree",
                     {"down": [18, 18, 16], "up": [1, 18, 18], "parallel": [1, 1, 1]},
                     4e9, 2e-7, 16, 10e9, 3e-7,
                     "Curie (OASIS3-MCT experiments): 5184 nodes x 16 cores, 3-level InfiniBand "
                     "QDR full fat tree, 4 GB/s"),
    # Seed 003 Table 1 scaled from 25^4 = 390,625 to 16^4 = 65,536 single-core nodes; links
    # 10 GB/s and 100 ns, the middle of the seed's sweeps where its results no longer changed.
    "torus-m": _preset("torus-m", "torus", {"dims": [16, 16, 16]}, 10e9, 1e-7, 16, 10e9, 2e-7,
                       "seed 003 torus-M scaled down: 16x16x16 torus, 16 nodes per switch"),
    "fattree-m": _preset("fattree-m", "fattree",
                         {"down": [16, 16, 16, 16], "up": [1, 16, 16, 16],
                          "parallel": [1, 1, 1, 1]}, 10e9, 1e-7, 1, 10e9, 2e-7,
                         "seed 003 fattree-M scaled down: 4 switch levels of 16 down ports"),
    "dragonfly-mm": _preset("dragonfly-mm", "dragonfly",
                            {"groups": 16, "group_links": 1, "chassis": 16, "chassis_links": 1,
                             "routers": 16, "router_links": 1, "nodes_per_router": 16},
                            10e9, 1e-7, 1, 10e9, 2e-7,
                            "seed 003 dragonfly-MM scaled down: 16 groups of 16x16 routers, "
                            "16 nodes per router"),
    # SL keeps MM's 256 routers per group as 4 chassis x 64 routers, since SimGrid 3.32 needs
    # groups <= routers per chassis.
    "dragonfly-sl": _preset("dragonfly-sl", "dragonfly",
                            {"groups": 64, "group_links": 1, "chassis": 4, "chassis_links": 1,
                             "routers": 64, "router_links": 1, "nodes_per_router": 4},
                            10e9, 1e-7, 1, 10e9, 2e-7,
                            "seed 003 dragonfly-SL scaled down: 64 groups of 4x64 routers, "
                            "4 nodes per router"),
    "dragonfly-ls": _preset("dragonfly-ls", "dragonfly",
                            {"groups": 4, "group_links": 1, "chassis": 64, "chassis_links": 1,
                             "routers": 64, "router_links": 1, "nodes_per_router": 4},
                            10e9, 1e-7, 1, 10e9, 2e-7,
                            "seed 003 dragonfly-LS scaled down: 4 groups of 64x64 routers, "
                            "4 nodes per router"),
}

# Defaults for a bare topology name ("crossbar:nodes=64").
_TOPOLOGY_DEFAULTS = {
    "crossbar": {"nodes": 64},
    "fattree": {"down": [4, 4]},
    "torus": {"dims": [4, 4, 4]},
    "dragonfly": {"groups": 4, "chassis": 2, "routers": 4, "nodes_per_router": 2},
}
_PARAM_KEYS = {
    "crossbar": ("nodes",),
    "fattree": ("down", "up", "parallel"),
    "torus": ("dims",),
    "dragonfly": ("groups", "group_links", "chassis", "chassis_links", "routers",
                  "router_links", "nodes_per_router"),
}


def platform_from_spec(spec: str) -> Platform:
    """'tansuo', 'curie:bw=8GBps', 'torus:dims=4x4x4,cores=2', 'crossbar:nodes=2,lat=10us'."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if name in PRESETS:
        kw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PRESETS[name].items()}
    elif name in TOPOLOGIES:
        kw = dict(name=name, topology=name, params=dict(_TOPOLOGY_DEFAULTS[name]), bw=10e9,
                  lat=1e-7, cores=1, loopback_bw=10e9, loopback_lat=2e-7,
                  description=f"generic {name}")
    else:
        raise ValueError(f"platform '{name}': not a preset ({', '.join(PRESETS)}) nor a "
                         f"topology ({', '.join(TOPOLOGIES)})")
    cfg = dict(BASE_CFG)
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"platform '{spec}': '{item}' is not key=value")
        key = key.strip()
        if key in ("bw", "loopback_bw"):
            kw[key] = parse_bandwidth(value)
        elif key in ("lat", "loopback_lat"):
            kw[key] = parse_time(value)
        elif key == "cores":
            kw[key] = int(value)
        elif key in _PARAM_KEYS[kw["topology"]]:
            kw["params"][key] = value
        else:
            raise ValueError(f"platform '{spec}': unknown key '{key}' for a {kw['topology']} "
                             f"(known: bw, lat, cores, loopback_bw, loopback_lat, "
                             f"{', '.join(_PARAM_KEYS[kw['topology']])})")
    kw["cfg"] = cfg
    return Platform(**kw)
