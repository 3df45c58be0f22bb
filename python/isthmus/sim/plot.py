"""Scaling curves from a results file (JSON lines written by the runner or by benchmarks).

One PNG per benchmark: x = ranks, y = median seconds, log-log, one line per method (and per
platform when several are present), markers at the measured rank counts, min-max as a band.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional


def load(path) -> List[dict]:
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not a JSON object ({e.msg})") from None
    return out


def lookup(rec: dict, key: str):
    """'median_s' or a dotted path into nested objects ('sim.ranks')."""
    cur = rec
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _ranks(rec: dict):
    return lookup(rec, "sim.ranks") or rec.get("ranks")


_MEASURED = {"errors", "checksum", "reps", "data_checked", "messages_per_rank", "px", "py"}


def _label_keys(records: List[dict], xs: List[float]) -> List[str]:
    """Parameters that tell lines apart: those taking several values at the same x (message
    size, platform, pattern...), never measurements."""
    keys = []
    candidates = set()
    for r in records:
        candidates |= {k for k, v in r.items() if isinstance(v, (str, int)) and
                       not isinstance(v, bool) and k not in _MEASURED and
                       not k.endswith(("_s", "_bytes", "_Bps")) and k not in ("bench", "method")}
    candidates.add("sim.platform")
    for k in sorted(candidates):
        seen: Dict[float, set] = defaultdict(set)
        for r, xv in zip(records, xs):
            seen[xv].add(json.dumps(lookup(r, k)))
        if any(len(v) > 1 for v in seen.values()):
            keys.append(k)
    return keys


def series(records: List[dict], x: Optional[str], y: str) -> Dict[str, Dict[str, list]]:
    """{bench: {line label: [(x, y, ymin, ymax), ...] sorted by x}}. A line is one method (or
    benchmark) with fixed parameters."""
    by_bench: Dict[str, list] = defaultdict(list)
    for r in records:
        xv = lookup(r, x) if x else _ranks(r)
        yv = lookup(r, y)
        if isinstance(xv, (int, float)) and isinstance(yv, (int, float)):
            by_bench[str(r.get("bench", "results"))].append((r, float(xv), float(yv)))
    out: Dict[str, Dict[str, list]] = {}
    for bench, items in by_bench.items():
        keys = [k for k in _label_keys([i[0] for i in items], [i[1] for i in items]) if k != x]
        lines: Dict[str, list] = defaultdict(list)
        for r, xv, yv in items:
            label = str(r.get("method", bench))
            extra = [f"{k.split('.')[-1]}={lookup(r, k)}" for k in keys]
            if extra:
                label += " (" + ", ".join(extra) + ")"
            lo = r.get("min_s", yv) if y == "median_s" else yv
            hi = r.get("max_s", yv) if y == "median_s" else yv
            lines[label].append((xv, yv, lo, hi))
        for pts in lines.values():
            pts.sort()
        out[bench] = lines
    return out


def plot(results, output: Optional[Path] = None, x: Optional[str] = None,
         y: str = "median_s") -> List[Path]:
    """Writes one PNG per benchmark found in results; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = Path(results)
    data = series(load(results), x, y)
    if not data:
        raise ValueError(f"{results}: no record has both '{x or 'sim.ranks/ranks'}' and '{y}'")
    written = []
    for bench, lines in sorted(data.items()):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, pts in sorted(lines.items()):
            xs = [p[0] for p in pts]
            ax.plot(xs, [p[1] for p in pts], marker="o", label=label)
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], alpha=0.15)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(x or "ranks")
        ax.set_ylabel(f"{y} (simulated)" if y.endswith("_s") else y)
        ax.set_title(bench)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        if output is not None and len(data) == 1:
            path = Path(output)
        else:
            base = Path(output) if output is not None else results
            path = base.with_name(f"{base.stem}-{bench}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written
