#!/usr/bin/env python3
"""Markdown tables of bench_mapping's JSON lines: one table per case and weights file, the
fused/unfused ratio of the median apply, and the memory record.

    python3 bench/mapping/summarize.py docs/results/mapping.jsonl [more.jsonl ...]
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
        if r["case"] == "memory":
            continue
        key = (r["case"], r.get("weights", ""), r.get("ranks"), r.get("src_ranks"), r.get("dst_ranks"),
               r.get("dst_pattern", ""), r.get("simulated", False), r.get("platform", ""))
        groups.setdefault(key, []).append(r)
    for key, rs in groups.items():
        case, weights, ranks, ns, nd, pattern, sim, platform = key
        print(f"\n#### {case} {weights}, {ns} + {nd} ranks, destination {pattern}"
              + (f", simulated ({platform})" if sim else ""))
        print()
        print("| side (chosen) | fields | fused | set-up s (read s) | apply median ms (min-max) | "
              "fused / unfused | messages | MB per apply | checks |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rs:
            side = r["side"] + (f" ({r['chosen_side']})" if r.get("chosen_side") and r["side"] == "auto" else "")
            if "error" in r:
                print(f"| {side} | {r['fields']} | {str(r['fused']).lower()} | error: {r['error']} | | | | | |")
                continue
            ratio = r.get("fused_over_unfused")
            checks = []
            if r.get("errors", -1) >= 0:
                checks.append(f"{r['errors']} wrong")
            if "same_bits_as_fused" in r:
                checks.append("same bits as fused" if r["same_bits_as_fused"] else "bits differ")
            print(f"| {side} | {r['fields']} | {str(r['fused']).lower()} | {r['setup_s']:.3g} "
                  f"({r['read_median_s']:.2g}) | {ms(r['apply_median_s'])} ({ms(r['apply_min_s'])}-"
                  f"{ms(r['apply_max_s'])}) | {'' if ratio is None else f'{ratio:.2f}'} | "
                  f"{r['messages_per_apply']} | {r['bytes_per_apply'] / 1e6:.3g} | {', '.join(checks)} |")
    for r in recs:
        if r["case"] != "memory":
            continue
        print(f"\n#### memory: {r['links']} links read at {r['ranks']} ranks, share "
              f"{r['share_mb']:.1f} MB per rank\n")
        print("| rank | RSS before read MB | peak during read MB | growth / share | "
              "peak building the mapping MB | growth / share |")
        print("|---|---|---|---|---|---|")
        for i in range(r["ranks"]):
            print(f"| {i} | {r['rss_before_read_mb'][i]:.1f} | {r['peak_read_mb'][i]:.1f} | "
                  f"{r['read_growth_over_share'][i]:.2f} | {r['peak_mapping_mb'][i]:.1f} | "
                  f"{r['mapping_growth_over_share'][i]:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
