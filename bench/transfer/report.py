#!/usr/bin/env python3
"""Tables (Markdown) and plots (PNG) of bench_transfer results, one per seed-001 experiment.

    python3 bench/transfer/report.py RESULTS.jsonl... [--plots DIR]

Prints Markdown to stdout: per experiment, one row per x value with the median time of p2p,
butterfly and adaptive, the plan adaptive chose, adaptive's speed-up over p2p and its ratio to
the better of p2p and butterfly (the issue asks for <= 1.05), and the message counts and sizes
that explain the figures. Records simulated under a calibration (`isthmus simulate
--calibration`, field sim.calibration) take the place of the preset's 0.5 us overheads; give one
calibration's file at a time (plots are then named transfer-<calibration>-<experiment>.png).
"""
import argparse
import json
import sys
from collections import defaultdict

def nominal(r):
    """Simulated with the preset's 0.5 us overheads or under a calibration (not a sensitivity run)."""
    return r["os_us"] == 0.5 or r["calibration"] != "none"


def toy(r, M=None, msgs=None, fields=None):
    """Records of the toy case (192x480, Algorithm 1 balanced) on the nominal overheads."""
    return (r["case"] == "toy" and r["grid_points"] == 92160 and nominal(r) and
            (M is None or r["ranks_per_model"] == M) and (msgs is None or r["msgs_target"] == msgs) and
            (fields is None or r["fields"] == fields))


GROUPS = [
    # name, title, filter, x key
    ("fig15", "Fig. 15: 1024 ranks per model, 10 fields, messages per sender varied",
     lambda r: toy(r, 1024, fields=10), "msgs_target"),
    ("fig15-256", "Fig. 15 at 256 ranks per model: 10 fields, messages per sender varied",
     lambda r: toy(r, 256, fields=10), "msgs_target"),
    ("fig16-12-256", "Fig. 16a: 256 ranks per model, 12 messages per sender, fields varied",
     lambda r: toy(r, 256, 12), "fields"),
    ("fig16-12-1024", "Fig. 16b: 1024 ranks per model, 12 messages per sender, fields varied",
     lambda r: toy(r, 1024, 12), "fields"),
    ("fig16-48-256", "Fig. 16c: 256 ranks per model, 48 messages per sender, fields varied",
     lambda r: toy(r, 256, 48), "fields"),
    ("fig16-48-1024", "Fig. 16d: 1024 ranks per model, 48 messages per sender, fields varied",
     lambda r: toy(r, 1024, 48), "fields"),
    ("fig17", "Fig. 17: 24 messages per sender (all receivers below 24 ranks), 10 fields, ranks varied",
     lambda r: toy(r, fields=10) and r["msgs_target"] == min(24, r["ranks_per_model"]), "ranks_per_model"),
    ("fig18", "Fig. 18: 96 points per rank, random messages (34 per sender on average), 20 fields",
     lambda r: r["case"] == "random" and nominal(r), "ranks_per_model"),
    ("gamil", "Fig. 20: GAMIL2-CLM3, 128x60, 14 fields, round-robin -> 2-D blocks",
     lambda r: r["case"] == "gamil" and nominal(r), "ranks_per_model"),
    ("cesm", "Fig. 19: CLM4 -> CPL7, 144x96, 32 fields, clumps dealt round-robin -> 1-D blocks",
     lambda r: r["case"] == "cesm" and nominal(r), "ranks_per_model"),
    ("interp", "Fig. 21: rearrangement for interpolation, 144x96, 2-D blocks -> transposed 2-D blocks "
     "on the same ranks", lambda r: r["case"] == "interp" and nominal(r), "ranks_per_model"),
    ("overhead", "Fig. 15's right end (1024 ranks per model, 90 messages, 10 fields) with larger "
     "per-message overheads (os = ois = or, microseconds)",
     lambda r: r["case"] == "toy" and r["grid_points"] == 92160 and r["ranks_per_model"] == 1024 and
     r["msgs_target"] == 90 and r["fields"] == 10 and r["calibration"] == "none", "os_us"),
]


def os_microseconds(r):
    """The per-message send overhead the simulation ran with (smpi/os), in microseconds."""
    for c in r.get("sim", {}).get("cfg", []):
        if c.startswith("--cfg=smpi/os:"):
            return round(float(c.split(":")[2]) * 1e6, 3)
    return 0.5 if r.get("sim") else None


def load(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    if r.get("bench") == "transfer":
                        r["os_us"] = os_microseconds(r)
                        r["calibration"] = r.get("sim", {}).get("calibration", "none")
                        rows.append(r)
    return rows


def table(rows, xkey):
    by = defaultdict(dict)
    for r in rows:
        if "--plan-cache" in r.get("sim", {}).get("bench_args", []):
            continue  # both runs of a plan-cache demonstration: reported in their own sentence
        by[r[xkey]][r["method"]] = r  # the last record of a configuration wins
    out = ["| %s | p2p (s) | butterfly (s) | adaptive (s) | plan | p2p / adaptive | adaptive / best "
           "| p2p msgs/rank (max) | p2p msg bytes | butterfly msgs/rank (max) | adaptive msgs/rank |"
           % xkey,
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    series = defaultdict(list)
    for x in sorted(by):
        m = by[x]
        p, b, a = (m.get(k) for k in ("p2p", "butterfly", "adaptive"))
        def t(r):
            return "%.3g" % r["median_s"] if r else "-"
        sp = "%.2f" % (p["median_s"] / a["median_s"]) if p and a else "-"
        best = min([r["median_s"] for r in (p, b) if r] or [0])
        ratio = "%.3f" % (a["median_s"] / best) if a and best else "-"
        ref = p or b or a
        out.append("| %s | %s | %s | %s | %s | %s | %s | %.1f (%d) | %.0f | %s | %s |" % (
            x, t(p), t(b), t(a), ("[%s]" % a["plan"]) if a else "-", sp, ratio,
            ref["p2p_msgs_avg"], ref["p2p_msgs_max"], ref["p2p_msg_bytes_avg"],
            ("%.1f (%d)" % (b["msgs_sent_avg"], b["msgs_sent_max"])) if b else "-",
            ("%.1f" % a["msgs_sent_avg"]) if a else "-"))
        for k, r in (("p2p", p), ("butterfly", b), ("adaptive", a)):
            if r:
                series[k].append((x, r["median_s"]))
    return "\n".join(out), series


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="JSON-lines files (later records win)")
    ap.add_argument("--plots", default=None, help="directory for transfer-<experiment>.png")
    ap.add_argument("--flat", action="store_true", help="one row per record (real-MPI runs)")
    a = ap.parse_args()
    rows = load(a.results)
    cals = {r["calibration"] for r in rows}
    prefix = "%s-" % cals.pop().replace("+", "-") if len(cals) == 1 and "none" not in cals else ""
    if a.flat:
        print("| case | ranks/model | msgs | method | plan | median (s) | min (s) | max (s) | profiling exchanges | from cache |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| %s | %d | %g | %s | %s | %.3g | %.3g | %.3g | %d | %s |" % (
                r["case"], r["ranks_per_model"], r["p2p_msgs_avg"], r["label"],
                ("[%s]" % r["plan"]) if r["plan"] else "-", r["median_s"], r["min_s"], r["max_s"],
                r["profiling_exchanges"], "yes" if r["from_cache"] else "no"))
        return 0
    for name, title, keep, xkey in GROUPS:
        sel = [r for r in rows if keep(r)]
        if not sel:
            continue
        text, series = table(sel, xkey)
        print("### %s\n" % title)
        if a.plots:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(5, 3.4))
            for k, pts in series.items():
                ax.plot([p[0] for p in pts], [p[1] * 1e3 for p in pts], marker="o", label=k)
            ax.set_xlabel(xkey.replace("_", " "))
            ax.set_ylabel("time per transfer (ms)")
            if xkey not in ("msgs_target", "fields"):
                ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(title.split(":")[0], fontsize=9)
            ax.legend(fontsize=8)
            fig.tight_layout()
            path = "%s/transfer-%s%s.png" % (a.plots, prefix, name)
            fig.savefig(path, dpi=110)
            plt.close(fig)
            print("![%s](transfer-%s%s.png)\n" % (name, prefix, name))
        print(text + "\n")
    # The plan cache: each cached run follows the first run of the same configuration.
    for i, r in enumerate(rows):
        if r["label"] != "adaptive-cached" or i == 0 or rows[i - 1]["label"] != "adaptive":
            continue
        f = rows[i - 1]
        print("Plan cache (%s, %d ranks per model, %g messages per sender, %d fields): the first run "
              "profiled for %d exchanges (%.3g ms, every one delivering data) and chose [%s], "
              "steady state %.3g ms; the second run with the same cache file took [%s] from the "
              "cache with %d profiling exchanges (its first exchange, which reads the cache, took "
              "%.3g ms; set-up %.3g ms), steady state %.3g ms.\n" % (
                  r["case"], r["ranks_per_model"], r["msgs_target"], r["fields"],
                  f["profiling_exchanges"], f["profiling_s"] * 1e3, f["plan"], f["median_s"] * 1e3,
                  r["plan"], r["profiling_exchanges"], r["profiling_s"] * 1e3, r["setup_s"] * 1e3,
                  r["median_s"] * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
