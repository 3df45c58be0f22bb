#!/usr/bin/env python3
"""Messages and bytes the busiest node sends per halo exchange of bench_ocean, off-node and
on-node, for NEMO's line placement and 4 x 4 patches per node (docs/results/halo.md, issue 16).

Closed box, halo 1, 8 neighbours: a side message carries `side` points per field, a corner one 1,
8 bytes per value, plus the 8-byte status word of every message. Link times at curie's 4 GB/s
node link and 10 GB/s node-local link. Usage: python3 docs/results/ocean_node_links.py
"""


def node_of(bi, bj, ni, tile):
    ta, tb = tile
    return (bj // tb) * ((ni + ta - 1) // ta) + bi // ta


def busiest(ni, nj, side, fields, tile):
    per_node = {}
    for bj in range(nj):
        for bi in range(ni):
            n = node_of(bi, bj, ni, tile)
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    qi, qj = bi + di, bj + dj
                    if (di, dj) == (0, 0) or not (0 <= qi < ni and 0 <= qj < nj):
                        continue
                    nbytes = (1 if di and dj else side) * 8 * fields + 8
                    off = node_of(qi, qj, ni, tile) != n
                    c = per_node.setdefault(n, [0, 0, 0, 0])
                    c[0 if off else 2] += 1
                    c[1 if off else 3] += nbytes
    return max(per_node.values(), key=lambda c: c[1])


def main():
    print("ranks grid  per rank  node   fields  off-node msgs  bytes  us@4GB/s  on-node msgs  bytes  us@10GB/s")
    for ranks, ni, nj in ((1024, 32, 32), (2048, 64, 32), (4096, 64, 64)):
        for side in (16, 32):
            for tile, name in (((16, 1), "line"), ((4, 4), "4x4")):
                for fields in (1, 2, 3):
                    off, offb, on, onb = busiest(ni, nj, side, fields, tile)
                    print(f"{ranks:5d} {ni}x{nj} {side:3d}x{side:<3d}  {name:5s} {fields:6d} {off:14d} {offb:6d}"
                          f" {offb / 4e9 * 1e6:9.2f} {on:13d} {onb:6d} {onb / 10e9 * 1e6:10.2f}")


if __name__ == "__main__":
    main()
