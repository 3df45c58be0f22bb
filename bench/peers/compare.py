#!/usr/bin/env python3
"""Summarizes bench/peers runs: the toy built against Debian's OASIS3-MCT ("oasis") and against
isthmus's mod_oasis ("isthmus"), interleaved, at N+N ranks.

Reads RUNS/<lib>-<n>-<rep>/{timings.txt,recv_<comp>_<first|last>.bin}; per rank count prints one
JSON object (stdout) and a table (stderr): set-up and ping-pong medians over the repetitions (a
run's ping-pong figure is the median of its round trips after the first WARMUP), the ratios
isthmus/OASIS, and the largest point-by-point difference of the received fields between the two
libraries (each repetition against the same repetition of the other library)."""
import argparse
import datetime
import json
import os
import statistics
import sys

import numpy as np

DUMPS = ["recv_atmos_first", "recv_atmos_last", "recv_ocean_first", "recv_ocean_last"]
WARMUP = 10
TOL = 1e-12


def read_timings(d):
    setup, samples, phases = None, [], {}
    with open(os.path.join(d, "timings.txt")) as f:
        for line in f:
            key, val = line.split()
            if key == "setup_s":
                setup = float(val)
            elif key.startswith("setup_"):
                phases[key] = float(val)
            elif key == "pingpong_s":
                samples.append(float(val))
    return setup, samples, phases


def read_dumps(d):
    return {k: np.fromfile(os.path.join(d, k + ".bin"), dtype="<f8") for k in DUMPS}


def diff(a, b):
    """largest absolute and relative difference; relative to max(|a|,|b|), 0 where both are 0"""
    out = {"max_abs_diff": 0.0, "max_rel_diff": 0.0, "points": 0, "unequal_points": 0}
    for k in DUMPS:
        x, y = a[k], b[k]
        if x.shape != y.shape:
            out["shape_mismatch"] = f"{k}: {x.shape} vs {y.shape}"
            out["max_rel_diff"] = float("inf")
            continue
        d = np.abs(x - y)
        scale = np.maximum(np.abs(x), np.abs(y))
        rel = np.where(scale > 0, d / np.where(scale > 0, scale, 1), 0.0)
        out["max_abs_diff"] = max(out["max_abs_diff"], float(d.max()))
        out["max_rel_diff"] = max(out["max_rel_diff"], float(rel.max()))
        out["points"] += int(x.size)
        out["unequal_points"] += int((x != y).sum())
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("runs")
    p.add_argument("--ranks", default="1 2 4")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--nrt", type=int, default=500)
    p.add_argument("--oasis-version", default="unknown")
    p.add_argument("--libs", default="oasis isthmus",
                   help="variants run: oasis, isthmus, isthmus-timeout (isthmus with "
                        "ISTHMUS_COUPLER_TIMEOUT set)")
    p.add_argument("--binding", default="none",
                   help="the processes' placement: none (the kernel's) or core (each bound to a "
                        "core, round robin)")
    a = p.parse_args()
    libs = a.libs.split()
    commit = os.environ.get("ISTHMUS_GIT_COMMIT", "unknown")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ref11 = None  # 1+1 OASIS dumps (or isthmus's without OASIS): the decomposition-invariance reference
    table = []
    for n in [int(x) for x in a.ranks.split()]:
        rec = {"bench": "peers", "case": "orca2-lmdz-bilinear", "toy": "bench/peers/toy_peers.F90",
               "ranks_ocean": n, "ranks_atmos": n, "ocean_points": 182 * 149, "atmos_points": 96 * 72,
               "partition": "apple", "mapping": "MAPPING dst bfb (OASIS bilinear files)",
               "reps": a.reps, "roundtrips": a.nrt, "warmup": WARMUP, "interleaved": True,
               "binding": a.binding}
        dumps = {}
        for lib in libs:
            setups, pps, pmins, failed, phases = [], [], [], 0, {}
            dumps[lib] = {}
            for r in range(1, a.reps + 1):
                d = os.path.join(a.runs, f"{lib}-{n}-{r}")
                if os.path.exists(os.path.join(d, "FAILED")) or not os.path.exists(os.path.join(d, "timings.txt")):
                    failed += 1
                    continue
                s, samples, ph = read_timings(d)
                setups.append(s)
                for k, v in ph.items():
                    phases.setdefault(k, []).append(v)
                body = samples[WARMUP:] if len(samples) > WARMUP else samples
                pps.append(statistics.median(body))
                pmins.append(min(body))
                dumps[lib][r] = read_dumps(d)
            rec[lib] = {"runs_ok": len(setups), "runs_failed": failed}
            if setups:
                rec[lib].update({
                    "setup_median_s": statistics.median(setups), "setup_s": setups,
                    "pingpong_median_s": statistics.median(pps), "pingpong_run_medians_s": pps,
                    "pingpong_min_s": min(pmins),
                    # the set-up clock after get_localcomm, the definitions and enddef (max over
                    # ranks each; medians over the repetitions)
                    "setup_phases_median_s": {k[len("setup_"):-2]: statistics.median(v)
                                              for k, v in phases.items()}})
        rec["oasis"] = rec.get("oasis", {"runs_ok": 0, "not_run": "Debian's OASIS3-MCT unavailable"})
        rec["oasis"]["library"] = f"Debian liboasis3-dev {a.oasis_version} (OASIS3-MCT 2.0)"
        for lib in libs:
            if lib.startswith("isthmus"):
                rec[lib]["library"] = f"isthmus mod_oasis {commit}"
        if "isthmus-timeout" in rec:
            rec["isthmus-timeout"]["env"] = "ISTHMUS_COUPLER_TIMEOUT=300"
        rec["ratios_to_oasis"] = {}
        for lib in libs:
            if lib != "oasis" and "setup_median_s" in rec["oasis"] and "setup_median_s" in rec[lib]:
                rec["ratios_to_oasis"][lib] = {
                    "setup": rec[lib]["setup_median_s"] / rec["oasis"]["setup_median_s"],
                    "pingpong": rec[lib]["pingpong_median_s"] / rec["oasis"]["pingpong_median_s"]}
        if "isthmus" in rec["ratios_to_oasis"]:
            rec["ratio_setup"] = rec["ratios_to_oasis"]["isthmus"]["setup"]
            rec["ratio_pingpong"] = rec["ratios_to_oasis"]["isthmus"]["pingpong"]
            rec["goal_ratio"] = 0.5
            rec["goal_setup_met"] = rec["ratio_setup"] <= 0.5
            rec["goal_pingpong_met"] = rec["ratio_pingpong"] <= 0.5
        # fields: each isthmus variant's rep r against OASIS's rep r
        for lib in libs:
            if lib == "oasis" or not dumps.get("oasis") or not dumps.get(lib):
                continue
            worst = None
            for r, dis in dumps[lib].items():
                if r in dumps["oasis"]:
                    c = diff(dumps["oasis"][r], dis)
                    if worst is None or c["max_rel_diff"] > worst["max_rel_diff"]:
                        worst = c
            if worst is not None:
                worst["equal_within_1e-12"] = worst["max_rel_diff"] <= TOL
                rec[f"fields_{lib}_vs_oasis"] = worst
        # across decompositions: this rank count against 1+1 (first repetition)
        firsts = {lib: next(iter(dumps[lib].values())) for lib in dumps if dumps[lib]}
        if ref11 is None and firsts:
            ref11 = firsts.get("oasis", firsts.get("isthmus"))
        if ref11 is not None:
            rec["fields_vs_1p1"] = {lib: diff(ref11, f) for lib, f in firsts.items()}
        rec["commit"] = commit
        rec["date"] = date
        print(json.dumps(rec), flush=True)
        table.append(rec)
    # the table
    w = sys.stderr.write
    sys.stdout.flush()
    w(f"\nbinding {a.binding}\n")
    w("ranks  lib             setup(s)  pingpong(ms)  ratio setup  ratio pingpong  fields max rel diff\n")
    for rec in table:
        for lib in libs:
            l = rec[lib]
            if "setup_median_s" not in l:
                w(f"{rec['ranks_ocean']}+{rec['ranks_atmos']}    {lib:15s} failed\n")
                continue
            extra = ""
            if lib in rec["ratios_to_oasis"]:
                f = rec.get(f"fields_{lib}_vs_oasis", {})
                q = rec["ratios_to_oasis"][lib]
                extra = (f"  {q['setup']:11.2f}  {q['pingpong']:14.2f}  "
                         f"{f.get('max_rel_diff', float('nan')):.3g}")
            w(f"{rec['ranks_ocean']}+{rec['ranks_atmos']}    {lib:15s} {l['setup_median_s']:8.4f}  "
              f"{1e3 * l['pingpong_median_s']:12.3f}{extra}\n")


if __name__ == "__main__":
    main()
