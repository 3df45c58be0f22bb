#!/usr/bin/env python3
"""Markdown tables of bench_coupling's JSON lines: per case and rank count, the coupler's
ping-pong and set-up beside the reference mappings (remap layer fused and unfused), the
mapping/transfer split, and the ratios coupler / fused mapping and fused / unfused.

    python3 bench/coupling/summarize.py docs/results/coupling.jsonl [more.jsonl ...]
"""
import json
import sys


def ms(x):
    return "-" if x is None else f"{1e3 * x:.3g}"


def main(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(line) for line in f if line.strip().startswith("{")]
    groups = {}
    for r in recs:
        sim = r.get("sim", {})
        key = (r["case"], r["ranks_src"], r["ranks_dst"], r.get("partition", "apple"),
               r.get("simulated", False), sim.get("platform", ""))
        groups.setdefault(key, []).append(r)
    for key, rs in groups.items():
        case, ns, nd, part, simulated, platform = key
        print(f"\n#### {case}, {ns} + {nd} ranks, {part} partitions"
              + (f", simulated ({platform})" if simulated else ", real MPI"))
        print()
        print("| side | fields (grouping) | variant | set-up s | ping-pong median ms (min-max) | CPU ms | "
              "back to back ms | mapping / transfer ms | vs fused mapping | fused / unfused | checks |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        # the reference of each (side, fields, grouping) run, for the ratios
        ref = {}
        for r in rs:
            k = (r["side"], r["fields"], r["grouping"])
            ref.setdefault(k, {})[r["variant"]] = r
        for r in rs:
            k = (r["side"], r["fields"], r["grouping"])
            grouping = {"single": "", "colon (one entry per direction)": " colon",
                        "one entry per field": " entries"}.get(r["grouping"], r["grouping"])
            head = f"| {r['side']} | {r['fields']}{grouping} | {r['variant']} |"
            if "error" in r:
                print(f"{head} error: {r['error']} | | | | | | | |")
                continue
            pp = r.get("pingpong_median_s")
            fused = ref[k].get("mapping-fused", {}).get("pingpong_median_s")
            unfused = ref[k].get("mapping-unfused", {}).get("pingpong_median_s")
            vs_fused = f"{pp / fused:.2f}" if pp and fused and r["variant"] == "coupler" else ""
            fu = f"{fused / unfused:.2f}" if fused and unfused and r["variant"] == "mapping-unfused" else ""
            split = (f"{ms(r['mapping_s'])} / {ms(r['transfer_s'])}" if "mapping_s" in r else "")
            checks = []
            if r.get("info_errors"):
                checks.append(f"{r['info_errors']} wrong info codes")
            if "same_bits_as_mapping" in r:
                checks.append("same bits as mapping" if r["same_bits_as_mapping"] else "BITS DIFFER")
            if "same_bits_as_fused" in r:
                checks.append("same bits as fused" if r["same_bits_as_fused"] else "BITS DIFFER")
            rng = f" ({ms(r.get('pingpong_min_s'))}-{ms(r.get('pingpong_max_s'))})" if pp is not None else ""
            print(f"{head} {r['setup_s']:.3g} | {ms(pp)}{rng} | {'n/a' if simulated else ms(r.get('pingpong_cpu_median_s'))} | "
                  f"{ms(r.get('pingpong_unbarriered_mean_s'))} | "
                  f"{split} | {vs_fused} | {fu} | {', '.join(checks)} |")
        if simulated:
            s = rs[-1].get("sim", {})
            print(f"\nHost: {s.get('wall_s', '?')} s wall, {s.get('cpu_s', '?')} s CPU, "
                  f"peak PSS {s.get('peak_pss_bytes', 0) / 2**30:.2f} GiB (last run of this group).")


if __name__ == "__main__":
    main(sys.argv[1:])
