"""Plots and tables of docs/results/collectives.md from the benchmark records.

    python3 docs/results/plot_collectives.py [docs/results/data]

Reads collectives-sim.jsonl (`isthmus simulate` runs of bench/transpose and bench/gcr, see
collectives.md for the commands) and collectives-real.jsonl (bench/*/run.sh of transpose, gcr
and globalsum on real MPI); writes collectives-*.png next to this script and prints the
markdown tables used in collectives.md.
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


def platform(r):
    """The platform name, with the per-message overhead when a run overrode it."""
    sim = r.get("sim")
    if not sim:
        return "real"
    name = sim["platform"]
    for c in sim.get("cfg", []):
        if c.startswith("--cfg=smpi/os:"):
            o = float(c.split(":")[2])
            if o != 5e-07:
                name += f"-o{o * 1e6:g}us"
    return name


def transpose(sim):
    rows = [r for r in sim if r["bench"] == "transpose"]
    by = defaultdict(dict)  # (platform, grid) -> algorithm -> ranks -> seconds
    for r in rows:
        key = (platform(r), f'{r["nx"]}x{r["ny"]}x{r["nz"]}')
        by[key].setdefault(r["algorithm"], {})[r["ranks"]] = r["median_s"]
    for (plat, grid), algs in sorted(by.items()):
        fig, ax = plt.subplots(figsize=(6, 4.2))
        for alg, pts in sorted(algs.items()):
            xs = sorted(pts)
            ax.plot(xs, [pts[x] * 1e3 for x in xs], marker="o", label=alg)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("MPI ranks")
        ax.set_ylabel("forward + backward transform (ms, simulated)")
        ax.set_title(f"spectral transposition {grid}, {plat}")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        out = HERE / f"collectives-transpose-{plat}.png"
        fig.savefig(out, dpi=110)
        plt.close(fig)
        ranks = sorted({n for pts in algs.values() for n in pts})
        print(f"\n### transposition {grid} on {plat} (ms)\n")
        print("| ranks | " + " | ".join(sorted(algs)) + " | best |")
        print("|---" * (len(algs) + 2) + "|")
        for n in ranks:
            vals = {a: algs[a].get(n) for a in sorted(algs)}
            have = {a: v for a, v in vals.items() if v is not None}
            best = min(have, key=have.get) if have else "-"
            cells = [f"{v * 1e3:.3f}" if v is not None else "-" for v in vals.values()]
            print(f"| {n} | " + " | ".join(cells) + f" | {best} |")


def gcr(sim):
    # Records of issue 16 include the per-call argument agreement (docs/errors.md) and are
    # tabulated against the model by bench/gcr/model.py report; these plots predate it.
    rows = [r for r in sim if r["bench"] == "gcr" and not r.get("includes_agreement")]
    by = defaultdict(lambda: defaultdict(dict))  # platform -> ranks -> case -> seconds
    for r in rows:
        # a full solve (50 allreduces) wins over one iteration scaled to 50
        cur = by[platform(r)][r["ranks"]]
        if r["allreduces"] == 50 or r["case"] not in cur:
            cur[r["case"]] = r["median_s"] * 50 / r["allreduces"]
    for plat, per_n in sorted(by.items()):
        ranks = sorted(per_n)
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
        # "auto" records predate the current rule (they ran k = 16): left out.
        series = {"native": {}, "recursive-doubling": {}, "best recursive-k": {}}
        best_k = {}
        for n in ranks:
            cases = per_n[n]
            for c in ("native", "recursive-doubling"):
                if c in cases:
                    series[c][n] = cases[c]
            ks = {int(c.split(":")[1]): v for c, v in cases.items() if c.startswith("recursive-k:")}
            if "recursive-doubling" in cases:
                ks.setdefault(2, cases["recursive-doubling"])
            if ks:
                k = min(ks, key=ks.get)
                best_k[n] = (k, ks[k], ks)
                series["best recursive-k"][n] = ks[k]
        for name, pts in series.items():
            if pts:
                xs = sorted(pts)
                ax.plot(xs, [pts[x] * 1e3 for x in xs], marker="o", label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("MPI ranks")
        ax.set_ylabel("50 allreduces of 2-3 doubles (ms, simulated)")
        ax.set_title(f"GCR allreduces, {plat}")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        for n in ranks:
            if n in best_k:
                ks = best_k[n][2]
                xs = sorted(ks)
                bx.plot(xs, [ks[k] * 1e3 for k in xs], marker=".", label=f"{n} ranks")
        bx.set_xlabel("radix k")
        bx.set_ylabel("ms (simulated)")
        bx.set_yscale("log")
        bx.set_title("recursive-k: time against radix")
        bx.legend(fontsize=7)
        bx.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(HERE / f"collectives-gcr-{plat}.png", dpi=110)
        plt.close(fig)
        print(f"\n### GCR allreduces on {plat} (ms for 50 allreduces)\n")
        print("| ranks | native | recursive-doubling (k=2) | k=4 | best k | recursive-k best | doubling / best k |")
        print("|---|---|---|---|---|---|---|")
        for n in ranks:
            c = per_n[n]
            k, v, _ = best_k.get(n, ("-", None, None))

            def f(x):
                return f"{x * 1e3:.3f}" if x is not None else "-"

            rd = c.get("recursive-doubling")
            ratio = f"{rd / v:.2f}" if rd and v else "-"
            print(f"| {n} | {f(c.get('native'))} | {f(rd)} | {f(c.get('recursive-k:4'))} | {k} | {f(v)} | {ratio} |")


def real(rows):
    gs = [r for r in rows if r["bench"] == "globalsum"]
    if gs:
        print("\n### global sums, real MPI (ms, median)\n")
        print("| ranks | points | fields | method | median | min | max | / lsum8 | CPU median | CPU / lsum8 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in gs:
            print(f'| {r["ranks"]} | {r["points"]} | {r["fields"]} | {r["method"]} | {r["median_s"] * 1e3:.3f} | '
                  f'{r["min_s"] * 1e3:.3f} | {r["max_s"] * 1e3:.3f} | {r.get("ratio_to_lsum8", 0):.2f} | '
                  f'{r.get("cpu_median_s", 0) * 1e3:.3f} | {r.get("cpu_ratio_to_lsum8", 0):.2f} |')
    for bench, key in (("transpose", "algorithm"), ("gcr", "case")):
        rs = [r for r in rows if r["bench"] == bench]
        if rs:
            print(f"\n### {bench}, real MPI (ms, median / min / max)\n")
            print("| ranks | case | median | min | max |")
            print("|---|---|---|---|---|")
            for r in rs:
                grid = f' {r["nx"]}x{r["ny"]}x{r["nz"]}' if bench == "transpose" else ""
                print(f'| {r["ranks"]} | {r[key]}{grid} | {r["median_s"] * 1e3:.3f} | {r["min_s"] * 1e3:.3f} | '
                      f'{r["max_s"] * 1e3:.3f} |')


def main():
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "data"
    sim = load(data / "collectives-sim.jsonl")
    transpose(sim)
    gcr(sim)
    gs_sim = [r for r in sim if r["bench"] == "globalsum"]
    if gs_sim:
        print("\n### global sums, simulated (ms)\n")
        print("| platform | ranks | fields | method | time | / lsum8 |")
        print("|---|---|---|---|---|---|")
        for r in gs_sim:
            print(f'| {platform(r)} | {r["ranks"]} | {r["fields"]} | {r["method"]} | {r["median_s"] * 1e3:.3f} | '
                  f'{r.get("ratio_to_lsum8", 0):.2f} |')
    real(load(data / "collectives-real.jsonl"))


if __name__ == "__main__":
    main()
