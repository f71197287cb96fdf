#!/usr/bin/env python3
"""Finds where two runs of one MPI program part ways: compares, rank by rank, the requests
each rank posted (sends, receives, probes: kind, size, peer, tag, date).

    scripts/request_diff.py A.log B.log [--tol 1.01e-6] [--show 15] [--rank R [--at I]]

Each log is either
  * ours: `smpirun -request-log B.log ...` (lines `<date> <rank> send|recv|iprobe size=..
    peer=.. tag=.. [found=..]`), or
  * SimGrid/SMPI 3.32's stderr with
    `--log=smpi_request.thres:verbose '--log=root.fmt:[%r]%e%m%n'` (lines
    `[<date>] New send|recv|iprobe request ... size = .., src = .., dst = .., tag = ..`;
    its dates have six decimals, hence the default tolerance of about 1 us).
Tags below 0 (SimGrid's collectives) are not compared: internal collective tags differ
between the simulators. Probe answers are compared only when both logs have them (ours).

Prints the first differing request of each rank, earliest first; with --rank, the requests
of that rank around its first difference (or around index --at).
"""

import argparse
import collections
import re
import sys

SG = re.compile(r"\[([0-9.]+)\] New (send|recv|iprobe)\s+request \S+\s+\[buf = \S+, size = (\d+), "
                r"src = (-?\d+), dst = (-?\d+), tag = (-?\d+)")
OURS = re.compile(r"([0-9.]+) (\d+) (send|recv|iprobe) size=(\d+) peer=(-?\d+) tag=(-?\d+)(?: found=([01]))?$")


def parse(path):
    """rank -> list of (date, kind, size, peer, tag, found or None)."""
    seqs = collections.defaultdict(list)
    with open(path, errors="replace") as f:
        for line in f:
            m = OURS.match(line)
            if m:
                t, rank, kind, size, peer, tag, found = m.groups()
                size = int(size) if kind != "iprobe" else 0
                seqs[int(rank)].append((float(t), kind, size, int(peer), int(tag),
                                        None if found is None else found == "1"))
                continue
            m = SG.match(line)
            if m:
                t, kind, size, src, dst, tag = m.groups()
                src, dst = int(src), int(dst)
                # SimGrid prints actor ids: rank + 1; -1 is MPI_ANY_SOURCE.
                if kind == "send":
                    rank, peer = src - 1, dst - 1
                else:
                    rank, peer = dst - 1, (src - 1 if src >= 0 else -1)
                size = int(size) if kind != "iprobe" else 0
                seqs[rank].append((float(t), kind, size, peer, int(tag), None))
    return seqs


def same(p, q, tol):
    if p[1:4] != q[1:4] or abs(p[0] - q[0]) > tol:
        return False
    if p[4] >= 0 and q[4] >= 0 and p[4] != q[4]:
        return False
    if p[5] is not None and q[5] is not None and p[5] != q[5]:
        return False
    return True


def fmt(r):
    if r is None:
        return "-"
    t, kind, size, peer, tag, found = r
    extra = "" if found is None else f" found={int(found)}"
    return f"{t:.9f} {kind} size={size} peer={peer} tag={tag}{extra}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=1.01e-6, help="date tolerance in seconds")
    ap.add_argument("--show", type=int, default=15, help="how many ranks' first differences to print")
    ap.add_argument("--rank", type=int, help="print this rank's requests around its first difference")
    ap.add_argument("--at", type=int, help="with --rank: around this request index instead")
    a = ap.parse_args()
    sa, sb = parse(a.a), parse(a.b)
    if not sa or not sb:
        sys.exit(f"no request lines in {a.a if not sa else a.b} (see --help for the two formats)")
    first = {}
    for r in sorted(set(sa) | set(sb)):
        x, y = sa.get(r, []), sb.get(r, [])
        for i, (p, q) in enumerate(zip(x, y)):
            if not same(p, q, a.tol):
                first[r] = (min(p[0], q[0]), i)
                break
        else:
            if len(x) != len(y):
                n = min(len(x), len(y))
                first[r] = (max(x, y, key=len)[n][0], n)
    total = sum(len(v) for v in sa.values()), sum(len(v) for v in sb.values())
    print(f"ranks: {len(sa)} / {len(sb)}; requests: {total[0]} / {total[1]}")
    if not first:
        print("identical: every rank posted the same requests at the same dates")
    else:
        print(f"{len(first)} ranks differ; first differences, earliest first:")
        for r, (t, i) in sorted(first.items(), key=lambda kv: kv[1])[: a.show]:
            x, y = sa.get(r, []), sb.get(r, [])
            print(f"  rank {r} request #{i}:  A {fmt(x[i] if i < len(x) else None)}  |  B {fmt(y[i] if i < len(y) else None)}")
    if a.rank is not None:
        i = a.at if a.at is not None else first.get(a.rank, (0, 0))[1]
        x, y = sa.get(a.rank, []), sb.get(a.rank, [])
        print(f"rank {a.rank}, requests {max(0, i - 10)}..{i + 5}:")
        for j in range(max(0, i - 10), i + 6):
            mark = "*" if j == i else " "
            print(f" {mark}{j:7d}  A {fmt(x[j] if j < len(x) else None):60s} | B {fmt(y[j] if j < len(y) else None)}")
    return 1 if first else 0


if __name__ == "__main__":
    sys.exit(main())
