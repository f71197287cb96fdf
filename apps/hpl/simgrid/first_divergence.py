#!/usr/bin/env python3
"""first_divergence.py SG_ERR OURS_ERR [tol_seconds [window_seconds]]

Compares the MPI call traces (trace_mpi.c lines "T rank seq call peer tag count t0 t1 flag gin gout")
of the same HPL run on SimGrid and on our simulator. Times are aligned on the first call of
the panel broadcast (tag 2001, any rank) of each trace, so that the different cost of the setup
phase (MPI_Comm_split...) before HPL_pdgesv does not count. For each rank, finds the first call (in
that rank's order) that is a different call or whose aligned entry/exit time differs by more
than tol (default 1e-8 s); prints the earliest of these in simulated time, and
the calls of all ranks in the simulator's actual execution order (global counter) around it.
"""
import sys

def load(path):
    calls = {}
    for line in open(path):
        if not line.startswith("T "):
            continue
        f = line.split()
        r, s = int(f[1]), int(f[2])
        calls[(r, s)] = dict(rank=r, seq=s, call=f[3], peer=int(f[4]), tag=int(f[5]),
                             count=int(f[6]), t0=float(f[7]), t1=float(f[8]), flag=int(f[9]),
                             gin=int(f[10]), gout=int(f[11]))
    return calls

a, b = load(sys.argv[1]), load(sys.argv[2])
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-8
W = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-5   # half-width of the printed window, s
def origin(c):
    return min(v["t0"] for v in c.values() if v["tag"] == 2001)
oa, ob = origin(a), origin(b)
# per rank: first call (in that rank's own order) that differs; then the earliest of those.
cands = []
for r in sorted({k[0] for k in a}):
    s = 0
    while (r, s) in a and (r, s) in b:
        x, y = a[(r, s)], b[(r, s)]
        if (x["call"], x["peer"], x["tag"], x["count"]) != (y["call"], y["peer"], y["tag"], y["count"]):
            cands.append((min(x["t0"] - oa, y["t0"] - ob), (r, s), "different call: ours %s(%d,%d)" % (y["call"], y["peer"], y["tag"])))
            break
        d0, d1 = (x["t0"] - oa) - (y["t0"] - ob), (x["t1"] - oa) - (y["t1"] - ob)
        if x["t0"] >= oa and (abs(d0) > tol or abs(d1) > tol or x["flag"] != y["flag"]):
            cands.append((min(x["t0"] - oa, y["t0"] - ob), (r, s), "enter %+.3e exit %+.3e" % (d0, d1)))
            break
        s += 1
first = min(cands) [1:] if cands else None
print("aligned on the first tag-2001 (panel broadcast) call: sg %.9f ours %.9f" % (oa, ob))
if first is None:
    print("no divergence above %g s" % tol); sys.exit(0)
k, why = first
x, y = a[k], b[k]
print("first divergence: rank %d call #%d %s(peer %d, tag %d, count %d): %s" % (k[0], k[1], x["call"], x["peer"], x["tag"], x["count"], why))
print("  sg  : %.9f .. %.9f flag %d" % (x["t0"] - oa, x["t1"] - oa, x["flag"]))
print("  ours: %.9f .. %.9f flag %d" % (y["t0"] - ob, y["t1"] - ob, y["flag"]))
def window(c, o, t, name):
    ev = []
    for v in c.values():
        if abs((v["t0"] - o) - t) < W or abs((v["t1"] - o) - t) < W:
            ev.append((v["gin"], v["t0"] - o, "r%d enter %s(%d,%d)" % (v["rank"], v["call"], v["peer"], v["tag"])))
            ev.append((v["gout"], v["t1"] - o, "r%d exit  %s(%d,%d)%s" % (v["rank"], v["call"], v["peer"], v["tag"],
                        " flag=%d" % v["flag"] if v["call"] in ("Iprobe", "Test") else "")))
    ev.sort()
    print("--- %s: execution order (global counter) around t=%.9f" % (name, t))
    for g, tt, s in ev:
        print("  %6d %.9f %s" % (g, tt, s))
t = min(x["t0"] - oa, y["t0"] - ob)
window(a, oa, t, "sg"); window(b, ob, t, "ours")
