#!/usr/bin/env python3
"""LogP-style cost model of the GCR allreduces (issue 16; docs/results/collectives.md, "Why no
radix wins at 0.5 us: model, measurements and the crossover").

Two levels:

* closed form (`closed_form`): one recursive-k allreduce of a few doubles on P ranks,
      T_k = sum over rounds j of [(k-1)(o_s + o_r) + L_j]  (+ fold and unfold when P != k^p),
  with L_j the latency between the ranks of round j; and the thresholds on o/L (uniform L) at
  which a radix k > 2 beats k = 2 and at which it is 1.5x faster.

* schedule (`schedule`): the same algorithm evaluated rank by rank on the fattree-m preset
  with the charging rules of SMPI 3.32 under the runner's settings (RUN_CFG in
  python/isthmus/sim/runner.py: smpi/send-is-detached-thresh 0), which the measurements check:
    - MPI_Isend and MPI_Sendrecv: the sender sleeps `ois` before the message leaves;
    - no send is detached, so `os` (blocking MPI_Send) and `or` (receives) are never charged:
      a blocking send costs no overhead but waits until its message is delivered;
    - a message starts when both its send and its receive are posted (rendezvous) and arrives
      after the route's latency, 2h x 0.1 us for ranks whose lowest common switch is at
      level h, plus bytes / 10 GB/s;
  and, before each call, the argument agreement (base/agreement.h), an MPI_Allreduce of 2 words
  that SMPI runs as recursive doubling (`smpi/allreduce: rdb`).

Also the LogP optimal broadcast (Karp, Sahay, Santos, Schauser, SPAA 1993): the number of
ranks that can know a value at time t, B(t) = B(t - g) + B(t - (L + o_s + o_r)), a lower bound
for any allreduce (every input must reach every rank).

Usage: model.py table [--ranks 1024,16384] [--o 0,0.01,...]   (times in us)
       model.py crossover [--ranks 1024,16384]                 (o where k overtakes k = 2)
       model.py bounds                                         (Karp et al. broadcast bound)
       model.py report RESULTS.jsonl                           (markdown tables, collectives.md)
       model.py thresholds
       model.py check RESULTS.jsonl                            (measured vs predicted)
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

LINK_LAT = 0.1        # us per link (fattree-m preset, python/isthmus/sim/platform.py)
BW = 10e9 / 1e6       # bytes per us (10 GB/s)
PORTS = 16            # down ports per switch level (fattree-m: 4 levels of 16)


def level(a, b):
    """Level of the lowest common switch of nodes a and b (one rank per node)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    h = np.zeros(np.broadcast(a, b).shape, dtype=np.int64)
    aa, bb = a.copy(), b.copy()
    aa, bb = np.broadcast_to(aa, h.shape).copy(), np.broadcast_to(bb, h.shape).copy()
    while True:
        diff = aa != bb
        if not diff.any():
            return h
        h += diff
        aa //= PORTS
        bb //= PORTS


def lat(a, b, nbytes):
    return 2 * LINK_LAT * level(a, b) + nbytes / BW


# ---- schedule model ------------------------------------------------------------------------
def recursive_k(t, k, nbytes, o_is, o_r=0.0, sendrecv_k2=True):
    """One recursive-k allreduce (src/collectives/allreduce.cpp) starting at per-rank times t;
    returns the per-rank end times."""
    t = t.astype(float).copy()
    n = len(t)
    if n == 1:
        return t
    m, p = 1, 0
    while m * k <= n:
        m, p = m * k, p + 1
    ranks = np.arange(n)
    # fold: rank i >= m does a blocking MPI_Send to (i - m) % m, which has posted MPI_Irecvs
    if n > m:
        fr = ranks[m:]
        home = (fr - m) % m
        arrive = np.maximum(t[fr], t[home]) + lat(fr, home, nbytes)
        t[fr] = arrive                         # blocking send returns at delivery
        got = np.full(m, -np.inf)
        np.maximum.at(got, home, arrive)
        nf = np.bincount(home, minlength=m)
        t[:m] = np.where(nf > 0, np.maximum(t[:m], got) + nf * o_r, t[:m])
    r = ranks[:m]
    stride = 1
    for _ in range(p):
        digit = (r // stride) % k
        base = r - digit * stride
        if k == 2 and sendrecv_k2:
            peer = base + (1 - digit) * stride
            post = t[r] + o_is                 # isend sleeps, then the irecv is posted
            arrive_in = np.maximum(post[peer], post) + lat(peer, r, nbytes)
            arrive_out = arrive_in[peer]       # my message, delivered at the peer
            t[r] = np.maximum(arrive_in, arrive_out) + o_r
        else:
            d = np.arange(k)[None, :]
            others = np.where(d < digit[:, None], d, d + 1)[:, : k - 1]   # digits != mine, in order
            dest = base[:, None] + others * stride                          # (m, k-1)
            post = t[r][:, None] + o_is * np.arange(1, k)[None, :]          # i-th isend leaves
            start = np.maximum(post, t[dest])                               # receiver posted at its start
            arrive = start + lat(r[:, None], dest, nbytes)
            done_send = arrive.max(axis=1)
            recv_last = np.full(m, -np.inf)
            np.maximum.at(recv_last, dest.ravel(), arrive.ravel())
            t[r] = np.maximum(done_send, recv_last) + (k - 1) * o_r
        stride *= k
    if n > m:
        fr = ranks[m:]
        home = (fr - m) % m
        # unfold: the home posts one MPI_Isend per folded rank (in rank order), then waits
        order = (fr - m) // m                   # 0 for the first rank folded into a home
        post = t[home] + o_is * (order + 1)
        arrive = post + lat(home, fr, nbytes)   # the folded rank's MPI_Recv was posted
        done = np.full(m, -np.inf)
        np.maximum.at(done, home, arrive)
        t[:m] = np.maximum(t[:m], done)
        t[fr] = arrive + o_r
    return t


def gcr_iteration(n, k, o_is, o_r=0.0, agreement=True, algorithm=True):
    """bench_gcr --iters 1: allreduces of 1 and 2 doubles, each after its agreement; the
    slowest rank's time (us) from a common start."""
    t = np.zeros(n)
    for count in (1, 2):
        if agreement:
            t = recursive_k(t, 2, 16, o_is, o_r)
        if algorithm:
            t = recursive_k(t, k, 8 * count, o_is, o_r)
    return float(t.max())


# ---- closed form ----------------------------------------------------------------------------
def closed_form(k, P, o, L):
    """Uniform latency L, overhead o per message per side (o_s = o_r = o), P a power of k."""
    return math.log(P, k) * ((k - 1) * 2 * o + L)


def threshold_win(k, rcv=True):
    """o/L below which recursive-k beats recursive doubling (uniform L, P a power of k).
    T_2/T_k = log2(k) (c + L) / ((k-1) c + L), c = o_s + o_r per message."""
    a = math.log2(k)
    x = (a - 1) / (k - 1 - a)        # c/L
    return x / 2 if rcv else x       # o/L (o_s = o_r = o, or o_s = o and o_r = 0)


def threshold_ratio(k, ratio=1.5, rcv=True):
    a = math.log2(k)
    if a <= ratio:
        return 0.0
    x = (a - ratio) / (ratio * (k - 1) - a)
    return x / 2 if rcv else x


def karp_broadcast_time(P, o_s, o_r, L, g=None):
    """Time until P ranks know a value, LogP (Karp et al. 1993): an informed rank sends a new
    message every g = max(g, o_s); the receiver knows the value L + o_s + o_r after the send
    starts. Greedy (every informed rank sends at every opportunity) is optimal."""
    import heapq
    g = max(g or 0.0, o_s)
    heap, count, last = [0.0], 1, 0.0      # times at which some informed rank can start a send
    while count < P:
        s = heapq.heappop(heap)
        last = s + o_s + L + o_r               # the new rank knows the value
        count += 1
        heapq.heappush(heap, s + g)            # the sender's next send
        heapq.heappush(heap, last)             # the new rank's first send
    return last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["table", "thresholds", "check", "bounds", "crossover", "report"])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--ranks", default="1024,16384")
    ap.add_argument("--o", default="0,0.01,0.025,0.05,0.1,0.2,0.3,0.5")
    ap.add_argument("--k", default="2,3,4,8,16,32")
    a = ap.parse_args()
    if a.what == "thresholds":
        print("k  o/L<  (k beats 2)      o/L<= (1.5x)       [o_s=o_r=o | o_s=o, o_r=0]")
        for k in (3, 4, 8, 16, 32):
            print(f"{k:<3}{threshold_win(k):8.3f} {threshold_win(k, False):8.3f}   "
                  f"{threshold_ratio(k):8.3f} {threshold_ratio(k, 1.5, False):8.3f}")
    elif a.what == "table":
        ks = [int(x) for x in a.k.split(",")]
        for P in [int(x) for x in a.ranks.split(",")]:
            for o in [float(x) for x in a.o.split(",")]:
                row = {k: gcr_iteration(P, k, o) / 2 for k in ks}
                alg = {k: gcr_iteration(P, k, o, agreement=False) / 2 for k in ks}
                print(f"P={P} o={o}: per call " + " ".join(f"k{k}={v:.2f}" for k, v in row.items())
                      + " | algorithm " + " ".join(f"k{k}={v:.2f}" for k, v in alg.items()))
    elif a.what == "report":
        rows = [json.loads(l) for l in open(a.file) if l.strip()]
        by = {}
        for d in rows:
            if d.get("bench") != "gcr" or "sim" not in d:
                continue
            cfg = {c.split(":")[0][6:]: c for c in d["sim"]["cfg"]}
            o = round(float(cfg["smpi/ois"].split(":")[2]) * 1e6, 4)
            k = 0 if d["case"] == "agreement" else d["k"]
            by.setdefault((d["ranks"], o), {})[k] = (d["max_s"] * 1e6 / d["allreduces"], d)
        print("| ranks | o (µs) | k | per call, measured | model | T_2/T_k per call, measured | "
              "model | T_2/T_k algorithm, measured | model | host CPU / wall (s) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (P, o), cases in sorted(by.items()):
            if 2 not in cases:
                continue
            A = cases.get(0, (None,))[0]
            Am = gcr_iteration(P, 2, o, algorithm=False) / 2
            t2, t2m = cases[2][0], gcr_iteration(P, 2, o) / 2
            for k in sorted(c for c in cases if c):
                t, d = cases[k]
                tm = gcr_iteration(P, k, o) / 2
                alg = f"{(t2 - A) / (t - A):.2f}" if A is not None else "-"
                algm = (t2m - Am) / (tm - Am)
                host = f'{d["sim"].get("cpu_s", 0):.0f} / {d["sim"].get("wall_s", 0):.0f}'
                print(f"| {P} | {o:g} | {k} | {t:.2f} | {tm:.2f} | {t2 / t:.2f} | {t2m / tm:.2f} | "
                      f"{alg} | {algm:.2f} | {host} |" if P >= 16384 else
                      f"| {P} | {o:g} | {k} | {t:.2f} | {tm:.2f} | {t2 / t:.2f} | {t2m / tm:.2f} | "
                      f"{alg} | {algm:.2f} | |")
            if A is not None:
                sim = cases[0][1]["sim"]
                print(f"| {P} | {o:g} | agreement | {A:.2f} | {Am:.2f} | | | | | "
                      f"{sim.get('cpu_s', 0):.0f} / {sim.get('wall_s', 0):.0f} |" if P >= 16384 else
                      f"| {P} | {o:g} | agreement | {A:.2f} | {Am:.2f} | | | | | |")
    elif a.what == "crossover":
        # o (us) below which k beats k = 2, and below which it is 1.5x faster: the algorithm
        # alone, and per call (the agreement included); "-" if not even at o = 0.
        def solve(f):
            if f(0.0) <= 0:
                return None
            lo, hi = 0.0, 2.0
            for _ in range(40):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
            return lo
        fmt = lambda x: "-" if x is None else f"{x:.3f}"
        for P in [int(x) for x in a.ranks.split(",")]:
            l2 = gcr_iteration(P, 2, 0.0, agreement=False) / 2 / math.ceil(math.log2(P))
            print(f"P={P}: mean round latency of k=2 (o=0) {l2:.3f} us")
            for k in [int(x) for x in a.k.split(",") if int(x) > 2]:
                alg = lambda o, r: gcr_iteration(P, 2, o, agreement=False) / gcr_iteration(P, k, o, agreement=False) - r
                call = lambda o, r: gcr_iteration(P, 2, o) / gcr_iteration(P, k, o) - r
                print(f"  k={k}: beats k=2 below o = {fmt(solve(lambda o: alg(o, 1.0)))} us; "
                      f"1.5x below {fmt(solve(lambda o: alg(o, 1.5)))} (algorithm), "
                      f"{fmt(solve(lambda o: call(o, 1.5)))} (per call)")
    elif a.what == "bounds":
        for P in [int(x) for x in a.ranks.split(",")]:
            for L in (0.2, 0.4, 0.8):
                for o_r in (0.0, 0.5):
                    print(f"P={P} L={L} o_s=0.5 o_r={o_r}: broadcast >= "
                          f"{karp_broadcast_time(P, 0.5, o_r, L):.2f} us")
    elif a.what == "check":
        rows = [json.loads(l) for l in open(a.file) if l.strip()]
        for d in rows:
            cfg = {c.split(":")[0][6:]: c for c in d["sim"]["cfg"]}
            o = float(cfg["smpi/ois"].split(":")[2]) * 1e6
            P = d["ranks"]
            meas = d["max_s"] * 1e6 / d["allreduces"]
            if d["case"] == "agreement":
                pred = gcr_iteration(P, 2, o, algorithm=False) / 2
            else:
                pred = gcr_iteration(P, d["k"], o) / 2
            print(f"{P:6d} o={o:5.3f} {d['case']:20s} measured {meas:7.3f} model {pred:7.3f} "
                  f"({(pred / meas - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
