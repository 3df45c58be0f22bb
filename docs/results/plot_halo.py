"""Plots and tables of docs/results/halo.md from the benchmark records.

    python3 docs/results/plot_halo.py [docs/results/data]

Reads halo-sim.jsonl (bench/halo/simulate.sh, bench/ocean/simulate.sh under `curie`) and
halo-real.jsonl / ocean-real.jsonl (bench/*/run.sh on real MPI), writes halo-*.png next to this
script and prints the markdown tables used in halo.md.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent


def load(path):
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def compute_kind(r):
    args = r.get("sim", {}).get("bench_args", [])
    return "comm only" if "--flops-2d" in args and args[args.index("--flops-2d") + 1] == "0" \
        else "modelled"


def ocean(sim):
    rows = [r for r in sim if r["bench"] == "ocean"]
    if not rows:
        return
    print("\n| ranks | points per rank | computation | variant | open boundaries | messages / step "
          "| exchanges / step | median step (ms) | halo wait / step, max rank (ms) | SYPD |")
    print("|---:|---:|---|---|---|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: (compute_kind(r), r["obc"], r["nx"] // r["ni"], r["ranks"],
                                         r["variant"])):
        sub = r["nx"] // r["ni"]
        wait = (f"{1e3 * r['halo_wait_per_step_max_s']:.4f}" if "halo_wait_per_step_max_s" in r
                else "-")
        print(f"| {r['ranks']} | {sub} x {sub} x {r['nz']} | {compute_kind(r)} | {r['variant']} | "
              f"{r['obc']} | {r['messages_per_step']:.0f} | {r['exchanges_per_step']:.0f} | "
              f"{1e3 * r['step_median_s']:.4f} | {wait} | {r['sypd']:.0f} |")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    series = defaultdict(dict)
    for r in rows:
        if r["obc"] != "none":
            continue
        # Issue 16's experiments (other code or collectives) are not series of their own.
        cfg = " ".join(r.get("sim", {}).get("cfg", []))
        if "git_commit" in r and (r["git_commit"].startswith("f04ee7b") or "allreduce:rdb" not in cfg):
            continue
        kind = compute_kind(r) + (", " + r.get("node_tile", "line") + " per node" if "git_commit" in r
                                  else ", first campaign")
        series[(r["nx"] // r["ni"], kind)].setdefault(r["ranks"], {})[r["variant"]] = r
    for (sub, kind), by_n in sorted(series.items()):
        ns = sorted(n for n, v in by_n.items() if "naive" in v and "optimized" in v)
        if not ns:
            continue
        gain = [100 * (1 - by_n[n]["optimized"]["step_median_s"] / by_n[n]["naive"]["step_median_s"])
                for n in ns]
        axes[0].plot(ns, gain, marker="o", label=f"{sub}x{sub} per rank, {kind}")
        for var, style in (("naive", "--"), ("optimized", "-")):
            axes[1].plot(ns, [by_n[n][var]["messages_per_step"] / n for n in ns], style, marker="o",
                         label=f"{var}, {sub}x{sub}, {kind}")
    axes[0].set_ylabel("step time saved by optimized (% of naive)")
    axes[1].set_ylabel("messages per step per rank")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("simulated ranks (curie)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(HERE / "halo-ocean.png", dpi=110)
    plt.close(fig)


def grouping(sim, real):
    rows = [r for r in sim + real if r["bench"] == "halo" and r["halo"] == 1]
    if not rows:
        return
    print("\n| where | ranks | subdomain | arrays | grouping | method | messages / exchange "
          "(all ranks) | median per exchange (us) | min | max |")
    print("|---|---:|---|---:|---|---|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: ("sim" in r, r.get("sim", {}).get("ranks_per_node", 0),
                                         r["nx"] // r["ni"], r["ranks"], r["method"],
                                         r["arrays"], r["grouping"])):
        where = (f"curie (sim), {r['sim']['ranks_per_node']}/node" if "sim" in r
                 else "real MPI")
        print(f"| {where} | {r['ranks']} | {r['nx'] // r['ni']} x {r['ny'] // r['nj']} | "
              f"{r['arrays']} | {r['grouping']} | {r['method']} | "
              f"{r['messages_per_exchange_total']} | {1e6 * r['per_exchange_median_s']:.2f} | "
              f"{1e6 * r['per_exchange_min_s']:.2f} | {1e6 * r['per_exchange_max_s']:.2f} |")


def wide(sim):
    rows = [r for r in sim if r["bench"] == "halo" and r["halo"] > 1 and "sim" in r]
    if not rows:
        return
    print("\n| ranks | subdomain | halo 3 (us) | halo 10 (us) | halo 20 (us) | messages per rank (h=20) |")
    print("|---:|---|---:|---:|---:|---:|")
    by = defaultdict(dict)
    for r in rows:
        by[r["ranks"]][r["halo"]] = r
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for h, color in [(3, "red"), (10, "green"), (20, "blue")]:
        pts = sorted((n, d[h]["per_exchange_median_s"]) for n, d in by.items() if h in d)
        ax.plot([p[0] for p in pts], [1e6 * p[1] for p in pts], marker="o", color=color,
                label=f"halo {h}")
    for n in sorted(by):
        d = by[n]
        any_r = next(iter(d.values()))
        sub = f"{any_r['nx'] // any_r['ni']} x {any_r['ny'] // any_r['nj']}"
        cells = [f"{1e6 * d[h]['per_exchange_median_s']:.1f}" if h in d else "-" for h in (3, 10, 20)]
        m = d[20]["messages_per_exchange_max_rank"] if 20 in d else "-"
        print(f"| {n} | {sub} | " + " | ".join(cells) + f" | {m} |")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("simulated ranks (curie), 1024 x 1024 grid")
    ax.set_ylabel("time per halo exchange (us, simulated)")
    ax.set_title("wide halos, two-sweep (cf. seed 003 Fig. 9a)", fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(HERE / "halo-wide.png", dpi=110)
    plt.close(fig)


def real_ocean(real):
    rows = [r for r in real if r["bench"] == "ocean"]
    if not rows:
        return
    print("\n| variant | open boundaries | boundary | messages / step | median (s) | mean | min | max | SYPD | checksum |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['variant']} | {r['obc']} | {r['boundary']} | {r['messages_per_step']:.0f} | "
              f"{r['step_median_s']:.4f} | {r['step_mean_s']:.4f} | {r['step_min_s']:.4f} | "
              f"{r['step_max_s']:.4f} | {r['sypd']:.0f} | {r['checksum']:.6g} |")


def real_wide(real):
    rows = [r for r in real if r["bench"] == "halo" and r["halo"] > 1]
    if not rows:
        return
    print("\n| ranks | subdomain | halo | method | messages / exchange (all ranks) | median (us) | min | max |")
    print("|---:|---|---:|---|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: (r["halo"], r["method"])):
        print(f"| {r['ranks']} | {r['nx'] // r['ni']} x {r['ny'] // r['nj']} | {r['halo']} | "
              f"{r['method']} | {r['messages_per_exchange_total']} | "
              f"{1e6 * r['per_exchange_median_s']:.1f} | {1e6 * r['per_exchange_min_s']:.1f} | "
              f"{1e6 * r['per_exchange_max_s']:.1f} |")


def main():
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "data"
    sim, seen = [], set()
    for f in sorted(data.glob("halo-sim*.jsonl")):
        for r in load(f):  # a case run twice (deterministic simulated time) is shown once
            key = json.dumps({k: v for k, v in r.items() if k != "sim"}, sort_keys=True) + \
                str(r["sim"].get("ranks_per_node"))
            if key not in seen:
                seen.add(key)
                sim.append(r)
    real = load(data / "halo-real.jsonl") + load(data / "ocean-real.jsonl")
    ocean(sim)
    real_ocean(real)
    grouping(sim, [r for r in real if r["bench"] == "halo"])
    wide(sim)
    real_wide([r for r in real if r["bench"] == "halo"])


if __name__ == "__main__":
    main()
