"""Per-message cost calibrations for SMPI runs: named SimGrid option sets built from measurements.

A calibration replaces the runner's placeholder per-message overheads (platform.BASE_CFG: 0.5 us
charged to MPI_Isend only) by figures measured on a real MPI, and makes SimGrid charge them where a
real MPI pays them. Every number comes from a measurement named in ``sources``; none was chosen to
produce a particular simulated result. docs/simulation.md ("Calibration") explains each one.

How SMPI 3.32 charges per-message costs (src/smpi/mpi/smpi_request.cpp, smpi_host.cpp):
 - ``smpi/ois`` on every MPI_Isend (and MPI_Issend), ``smpi/os`` on a blocking send only when it is
   *detached* (eager: size < ``smpi/send-is-detached-thresh``);
 - ``smpi/or`` when a receive completes whose sender was detached, i.e. only for eager messages.
The runner's default ``smpi/send-is-detached-thresh:0`` (runner.RUN_CFG) makes no message eager,
so receivers pay nothing. A calibration therefore sets that threshold to the real MPI's eager
limit: below it, sender and receiver each pay their measured overhead.

Piecewise values are SMPI's ``size:base:per_byte;...`` form; the section starting at size F
applies to messages of more than F bytes (the first one also to smaller ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List


@dataclass(frozen=True)
class Calibration:
    name: str
    description: str
    cfg: Dict[str, str]
    sources: List[str] = field(default_factory=list)


CALIBRATIONS: Dict[str, Calibration] = {
    # Grid'5000 dahu (2 x Xeon Gold 6130 per node, Omni-Path 100 Gb/s), calibrated with SimGrid's
    # platform-calibration procedure and published in SimGrid's documentation, "MPI Network
    # calibration" (docs/source/tuto_network_calibration/, from T. Cornebize's PhD thesis,
    # Univ. Grenoble Alpes, 2021). Per size segment the files send_/isend_/recv_ckmeans.json give
    # a mixture of modes (mean, probability) and a per-byte coefficient; the base below is the
    # mixture's expected value, so rare slow modes (OS noise, 1-2 % at 20-50 us) count with their
    # weight. MPI_Send -> smpi/os, MPI_Isend -> smpi/ois, MPI_Recv -> smpi/or, as the tutorial
    # maps them; the eager/rendezvous threshold is the tutorial's 64000 bytes.
    "dahu": Calibration(
        name="dahu",
        description="SMPI calibration of Grid'5000 dahu (Omni-Path, MPI): per-message os 0.34 us, "
                    "ois 0.73 us, or 1.44 us for small messages; eager below 64000 B",
        cfg={
            "smpi/os": "0:3.36e-07:5.70e-11;4778:2.06e-07:1.14e-10;8133:4.13e-06:1.00e-10;"
                       "33956:8.92e-06:1.19e-10",
            "smpi/ois": "0:7.31e-07:4.99e-11;10079:1.44e-06:4.43e-11;15831:3.42e-06:2.56e-11;"
                        "63305:6.82e-07:6.68e-14",
            "smpi/or": "0:1.44e-06:5.17e-11;8319:2.53e-06:5.82e-11",
            "smpi/send-is-detached-thresh": "64000",
        },
        sources=["SimGrid documentation, 'MPI Network calibration' tutorial "
                 "(docs/source/tuto_network_calibration/{send,isend,recv}_ckmeans.json), "
                 "based on T. Cornebize, PhD thesis, Univ. Grenoble Alpes, 2021 "
                 "(tel-03328956): Grid'5000 dahu cluster"]),
    # This machine: Open MPI 4.1.4 over shared memory (vader), 2 ranks, 80-byte messages,
    # bench/ping/msgcost.sh on 2026-11-26 (docs/results/msgcost-real.jsonl): posting an MPI_Isend
    # 36.8 ns (median of 3 runs' medians of 21 repetitions of 90 messages), receiving a message
    # already arrived 30.2 ns (1 or 8 peers alike); no blocking send was measured, os = ois.
    # Eager limit: vader's btl_vader_eager_limit, 4096 bytes (ompi_info).
    "local-shm": Calibration(
        name="local-shm",
        description="this machine's Open MPI 4.1.4 over shared memory: os = ois 37 ns, or 30 ns "
                    "per message; eager below 4096 B",
        cfg={
            "smpi/os": "0:3.68e-08:0",
            "smpi/ois": "0:3.68e-08:0",
            "smpi/or": "0:3.02e-08:0",
            "smpi/send-is-detached-thresh": "4096",
        },
        sources=["bench/ping/msgcost.sh, docs/results/msgcost-real.jsonl (2026-11-26)"]),
}

# Added to a calibration by the suffix "+ib": SimGrid's InfiniBand contention model (Vienne,
# PhD thesis, Grenoble 2010), whose bandwidth penalties for several flows leaving or entering one
# node use SimGrid's default factors, "based on Stampede cluster profiling" (SimGrid
# documentation, "Infiniband model"; 0.965;0.925;1.35 = beta_e;beta_s;gamma_r).
IB_CFG: Dict[str, str] = {
    "network/model": "IB",
    "smpi/IB-penalty-factors": "0.965;0.925;1.35",
}


def names() -> List[str]:
    return sorted(CALIBRATIONS) + [f"{n}+ib" for n in sorted(CALIBRATIONS)]


def calibration_cfg(name: str) -> Dict[str, str]:
    """The SimGrid options of calibration `name` ('dahu', 'local-shm', 'dahu+ib', ...)."""
    base, plus, extra = name.partition("+")
    if base not in CALIBRATIONS or (plus and extra != "ib"):
        raise ValueError(f"calibration '{name}': unknown (known: {', '.join(names())})")
    cfg = dict(CALIBRATIONS[base].cfg)
    if plus:
        cfg.update(IB_CFG)
    return cfg
