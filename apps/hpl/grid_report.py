#!/usr/bin/env python3
"""Table, growth exponents and log-log plot of the Stampede scalability grid.

Reads the JSON files `bench.py --json` writes (any number, any scenarios: the points of the
thesis' grid, `stampede-<ranks>-<N>M`, are kept; a result may add `binary`, `date` and `note`, as
the measured points kept in `results/stampede-grid.json` do), prints a Markdown table (ranks, N,
wall time, peak PSS, max RSS, simulated time, Gflops, which HPL binary ran, when) and fits

    log(wall) = a + b log(ranks) + c log(N)        (and the same for peak PSS)

by least squares, printing the exponents b and c (how the cost grows with the ranks and with
the matrix order) and the largest relative residual of the fit. With --plot it also draws wall
time and peak PSS against the number of ranks, log-log, one line per N, with the fitted
surfaces dashed (needs matplotlib: apt-get install python3-matplotlib).

Usage: apps/hpl/grid_report.py RESULTS.json... [--plot grid.png]
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (scenario table: ranks and N of each name)


def grid_points(paths):
    """The grid points found in bench JSON files, one per scenario (the last file wins)."""
    grid = {name: (p, q, n) for name, p, q, n, *_ in bench.scenario_table()
            if name in bench.GROUPS["stampede-grid"]}
    points = {}
    for path in paths:
        try:
            results = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"grid_report.py: {path}: {e}")
        for r in results if isinstance(results, list) else [results]:
            if r.get("name") not in grid or "error" in r:
                continue
            p, q, n = grid[r["name"]]
            points[r["name"]] = {
                "name": r["name"], "ranks": p * q, "n": n, "wall_s": r["wall_s"], "pss_mb": r["pss_mb"],
                "maxrss_mb": r["maxrss_mb"], "simulated_s": r["simulated_s"], "gflops": r["gflops"],
                "binary": r.get("binary") or (os.path.basename(r["cmd"].split()[-1]) if r.get("cmd") else "?"),
                "date": r.get("date", ""),
            }
    return sorted(points.values(), key=lambda x: (x["n"], x["ranks"]))


def solve3(m, v):
    """Solution of the 3x3 system m x = v (Gauss-Jordan with partial pivoting), or None."""
    a = [row[:] + [v[i]] for i, row in enumerate(m)]
    for col in range(3):
        piv = max(range(col, 3), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) < 1e-12:
            return None
        a[col], a[piv] = a[piv], a[col]
        for r in range(3):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][3] / a[i][i] for i in range(3)]


def fit_power_law(points, key):
    """(a, b, c, worst relative residual) of log(key) = a + b log(ranks) + c log(N), or None when
    the points do not span two rank counts and two matrix orders."""
    if len({p["ranks"] for p in points}) < 2 or len({p["n"] for p in points}) < 2 or len(points) < 4:
        return None
    rows = [(1.0, math.log(p["ranks"]), math.log(p["n"])) for p in points]
    ys = [math.log(p[key]) for p in points]
    m = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    v = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(3)]
    coef = solve3(m, v)
    if coef is None:
        return None
    worst = max(abs(math.exp(y - sum(c * x for c, x in zip(coef, r))) - 1) for r, y in zip(rows, ys))
    return (*coef, worst)


def table(points):
    out = ["| ranks | N | wall | peak PSS | max RSS | simulated | HPL Gflops | binary | measured |",
           "|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for p in points:
        out.append(f"| {p['ranks']:,} | {p['n']:,} | {p['wall_s']:,.0f} s | {p['pss_mb']:,.0f} MB | "
                   f"{p['maxrss_mb'] / 1024:.1f} GB | {p['simulated_s']:,.2f} s | {p['gflops']:,.0f} | "
                   f"`{p['binary']}` | {p['date'] or '?'} |")
    return "\n".join(out)


def plot(points, fits, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("grid_report.py: --plot needs matplotlib (apt-get install python3-matplotlib)")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, label in ((axes[0], "wall_s", "wall time (s)"), (axes[1], "pss_mb", "peak PSS (MB)")):
        for i, n in enumerate(sorted({p["n"] for p in points})):
            pts = [p for p in points if p["n"] == n]
            color = f"C{i}"
            ax.plot([p["ranks"] for p in pts], [p[key] for p in pts], "o-", color=color, label=f"N = {n:,}")
            f = fits.get(key)
            if f:
                xs = sorted({p["ranks"] for p in points})
                ax.plot(xs, [math.exp(f[0] + f[1] * math.log(x) + f[2] * math.log(n)) for x in xs],
                        "--", color=color, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel(label)
        f = fits.get(key)
        ax.set_title(f"{label}: fit ∝ ranks^{f[1]:.2f} · N^{f[2]:.2f}" if f else label, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("HPL, Stampede parameters (NB 1024), on platforms/stampede.toml: simulator cost", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="JSON files written by bench.py --json")
    ap.add_argument("--plot", help="write the log-log plot here (PNG)")
    a = ap.parse_args()
    points = grid_points(a.results)
    if not points:
        sys.exit("grid_report.py: no grid point (stampede-<ranks>-<N>M) without error in the files given")
    print(table(points))
    print()
    fits = {}
    for key, what in (("wall_s", "wall time"), ("pss_mb", "peak PSS")):
        f = fit_power_law(points, key)
        if f is None:
            print(f"{what}: not enough points to fit (need two rank counts, two N and four points)")
            continue
        fits[key] = f
        print(f"{what} ∝ ranks^{f[1]:.2f} · N^{f[2]:.2f} over {len(points)} points "
              f"(largest residual {100 * f[3]:.0f} %)")
    if a.plot:
        plot(points, fits, a.plot)
        print(f"plot: {a.plot}")


if __name__ == "__main__":
    main()
