#!/usr/bin/env python3
"""Per-node traffic of bench_mapping's synthetic case (400 x 300 -> 200,000 bilinear), apple
source bands and block destination parts, N + N ranks, 16 ranks per node, 10 fields:

  python3 bench/mapping/node_traffic.py N

for the fused destination side, the unfused path's two phases and a fused path that sends each
value once per destination node: messages, bytes, and the busiest node's outgoing bytes over
4 GB/s (curie's node link). The message counts are the benchmark's (1322 at 512 + 512).
docs/results/mapping.md uses it."""
import sys

import numpy as np

snx, sny, n = 400, 300, 200000
P = int(sys.argv[1])
F = 10
per = 16
dny = int(round((n / 2) ** 0.5))
dnx = -(-n // dny)
d = np.arange(n)
x = (d % dnx + 0.5) * snx / dnx - 0.5
y = (d // dnx + 0.5) * sny / dny - 0.5
i0 = np.clip(np.floor(x).astype(int), 0, snx - 2)
j0 = np.clip(np.floor(y).astype(int), 0, sny - 2)
corners = np.concatenate([(j0 + cy) * snx + i0 + cx for cy in (0, 1) for cx in (0, 1)])


def block_owner(g, N, parts):
    """bench::block1d's part of index g of [0, N)."""
    base, extra = N // parts, N % parts
    g = np.asarray(g)
    cut = extra * (base + 1)
    return np.where(g < cut, g // (base + 1), extra + (g - cut) // max(base, 1) if base > 0 else -1)


def pairs(dst_rank_of_d, dst_rank_offset):
    """(source rank, destination rank) of each distinct needed (destination rank, source point)."""
    dr = np.tile(dst_rank_of_d, 4)
    key = np.unique(dr.astype(np.int64) * snx * sny + corners)
    dr, sp = key // (snx * sny), key % (snx * sny)
    return block_owner(sp // snx, sny, P), dr + dst_rank_offset


def stats(name, s, r):
    m, cnt = np.unique(s.astype(np.int64) * 10**6 + r, return_counts=True)
    ms, mr = m // 10**6, m % 10**6
    inter = (ms // per) != (mr // per)
    nb = cnt * 8 * F
    out_node = np.bincount(ms[inter] // per, weights=nb[inter])
    sends = np.bincount(ms)
    print(f"{name}: messages {len(m)} ({inter.sum()} off-node), {nb.sum() / 1e6:.2f} MB "
          f"({nb[inter].sum() / 1e6:.2f} off-node), busiest node sends {out_node.max() / 1e3:.0f} KB "
          f"= {out_node.max() / 4e9 * 1e6:.0f} us at 4 GB/s; {np.count_nonzero(sends)} ranks send, "
          f"at most {sends.max()} messages each")


dst_rank = block_owner(d, n, P)
stats("fused, dst side       ", *pairs(dst_rank, P))
stats("unfused, rearrangement", *pairs(dst_rank, 0))
stats("unfused, transfer     ", dst_rank, dst_rank + P)
key = np.unique(np.tile((dst_rank + P) // per, 4).astype(np.int64) * snx * sny + corners)
src_node = block_owner((key % (snx * sny)) // snx, sny, P) // per
out = np.bincount(src_node) * 8 * F
print(f"once per destination node: {len(key)} values, busiest node sends {out.max() / 1e3:.0f} KB "
      f"= {out.max() / 4e9 * 1e6:.0f} us")
