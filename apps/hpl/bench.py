#!/usr/bin/env python3
"""HPL emulation benchmark: runs the real HPL (apps/hpl/build/xhpl) under our
smpirun for the issue's scenarios and prints a table: wall time, peak memory
(PSS sampled every second from /proc/<pid>/smaps_rollup, the same way for
both simulators, and for ours also smpirun's own finer samples; and max RSS), simulated time and HPL's Gflops, next to SMPI 3.32's
numbers and the ratios.

SMPI's numbers come from ../shared/reference/smpi-3.32/README.md, or, with
--smpi, from running the same scenario under the installed SimGrid 3.32 in this
bench run (its `smpirun` in /usr/bin, HPL built by
`VARIANT=plain HPL_TIME_WRAP=0 apps/hpl/simgrid/build.sh` with the reference's BLAS model
library and the same main as ours, so both make the same MPI calls): same platform (converted to SimGrid
XML), same HPL.dat, same settings; the speedup is then measured in one run.

Usage: apps/hpl/bench.py [--scenarios 8x8-20k,8x8-40k,...|all|stampede-grid|stampede] [--json out.json]
                         [--model apps/hpl/models/smpi_reference.toml] [--smpi] [--fast-pipid]
Build first: scripts/build-dist.sh && apps/hpl/build.sh (the bench runs target/dist/smpirun,
the shipped build, when it exists, else target/release/smpirun; --smpirun picks another)
(and for --smpi: apt-get install libsimgrid-dev && VARIANT=plain HPL_TIME_WRAP=0 apps/hpl/simgrid/build.sh)
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

# name, P, Q, N, platform, SMPI 3.32 reference (wall s, PSS GB, simulated s, Gflops) or None;
# HPL's parameters are the reference runs' (NB 128, 1ringM broadcast, depth 1, binary exchange).
SCENARIOS = [
    ("8x8-20k", 8, 8, 20000, "platforms/fat_tree.toml", (13.4, 0.82, 1.565, 3409)),
    ("8x8-40k", 8, 8, 40000, "platforms/fat_tree.toml", (38.5, 1.6, 6.147, 6942)),
    ("8x8-80k", 8, 8, 80000, "platforms/fat_tree.toml", (163, 3.2, 34.86, 9793)),
    ("16x16-80k", 16, 16, 80000, "platforms/fat_tree_256.toml", (350, 6.5, 16.37, 20860)),
    ("32x32-100k", 32, 32, 100000, "platforms/fat_tree_1024.toml", None),
    ("64x64-200k", 64, 64, 200000, "platforms/fat_tree_4096.toml", None),
]
REFERENCE_HPL = {"nb": 128, "bcast": 1, "depth": 1, "swap": 0, "pfact": 1, "rfact": 2}

# Stampede's June 2013 HPL (Cornebize's thesis, table 2.1): NB 1024, Crout factorization,
# "long modified" broadcast, depth 0, binary-exchange swap, on platforms/stampede.toml with the
# plausible kernel models of apps/hpl/models/stampede.toml. `stampede` is the real run's size
# (6,006 ranks as 77x78, N = 3,875,000); `stampede-grid` the thesis' scalability grid (512 to
# 4,096 ranks x N = 0.5 to 4 million); `stampede-16x16-100k` a small Stampede-shaped case.
STAMPEDE_HPL = {"nb": 1024, "bcast": 5, "depth": 0, "swap": 0, "pfact": 1, "rfact": 1}
STAMPEDE_GRIDS = {512: (16, 32), 1024: (32, 32), 2048: (32, 64), 4096: (64, 64)}
STAMPEDE_SCENARIOS = [("stampede-16x16-100k", 16, 16, 100000), ("stampede", 77, 78, 3875000)] + [
    (f"stampede-{ranks}-{n / 1e6:g}M", p, q, n)
    for ranks, (p, q) in STAMPEDE_GRIDS.items() for n in (500000, 1000000, 2000000, 4000000)]
GROUPS = {"stampede-grid": [s[0] for s in STAMPEDE_SCENARIOS if s[0].startswith("stampede-") and
                            s[0].endswith("M")]}


def scenario_table():
    """Every scenario as (name, P, Q, N, platform, reference, HPL parameters, model or None)."""
    return ([(*s, REFERENCE_HPL, None) for s in SCENARIOS]
            + [(name, p, q, n, "platforms/stampede.toml", None, STAMPEDE_HPL,
                os.path.join(HERE, "models", "stampede.toml")) for name, p, q, n in STAMPEDE_SCENARIOS])


def folding_cfg(p, q, n, nb, max_maps=None):
    """The folding thresholds of a scenario. Allocations from 256 KiB up are folded copy-on-write
    (pages a rank writes become its own); from the shared threshold up they are folded shared (all
    ranks write the same pages). HPL keeps its pivot indices at the end of its panel allocation,
    so the panel must stay below the shared threshold (shared, the indices are garbage and the
    ranks disagree on message sizes: MPI_ERR_TRUNCATE) and the matrix above it: the threshold is
    32 MiB (the reference runs') or twice the panel rounded up to a power of two if larger.
    A folded allocation costs one memory mapping per block, out of what vm.max_map_count leaves
    once every rank has its stack and its copy of the program (about 9 mappings each): the blocks
    are 1 MiB (SMPI's default) unless a rank's matrix would then need more than 80 % of that
    budget, then the smallest power of two that fits (4 MiB for Stampede's 20 GB per rank and
    6,006 ranks under the default limit)."""
    panel = 8 * -(-n // p) * nb
    shared = max(32 << 20, 1 << (2 * panel - 1).bit_length())
    matrix = 8 * -(-n // p) * (-(-n // q) + 1)
    blocks = max(1000, int(0.8 * ((max_maps or max_map_count()) - 9 * p * q)))
    block = max(1 << 20, 1 << (-(-matrix // blocks) - 1).bit_length())
    cfg = [f"--cfg=smpi/auto-shared-malloc-thresh:{shared}", "--cfg=smpi/auto-shared-malloc-cow-thresh:262144"]
    return cfg + ([f"--cfg=smpi/shared-malloc-blocksize:{block}"] if block > 1 << 20 else [])


# The settings of the SMPI reference runs (which fold from 32 MiB up, shared), plus our
# copy-on-write folding of the buffers from 256 KiB up (HPL's panels and row-swap buffers): they
# behave as real memory that costs only the pages written, so the simulated time does not change
# (checked: 8x8 N=20000/40000, and 4x4 N=8000 for every BCAST, SWAP and DEPTH), but memory and
# copies shrink.
COMMON_CFG = [
    "--cfg=smpi/simulate-computation:no",
    "--cfg=smpi/host-speed:1Gf",
]


def toml_cluster_to_xml(platform, out):
    """SimGrid XML twin of one of our single-cluster TOML platforms."""
    keys = {}
    for line in open(platform):
        m = re.match(r'^\s*(\w+)\s*=\s*"([^"]*)"', line)
        if m:
            keys[m.group(1)] = m.group(2)
    if "topology" in keys:
        keys["topology"] = keys["topology"].upper()  # SimGrid: FLAT, FAT_TREE, TORUS, DRAGONFLY
    attrs = " ".join(f'{k}="{keys[k]}"' for k in
                     ("id", "prefix", "suffix", "radical", "speed", "bw", "lat", "sharing_policy", "topology",
                      "topo_parameters") if k in keys)
    with open(out, "w") as f:
        f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                f"<platform version=\"4.1\">\n  <cluster {attrs}/>\n</platform>\n")


def peak_pss_kb(pid, peak):
    """Sum of the PSS of `pid` and its descendants (SimGrid's smpirun is a script)."""
    total = 0
    pids = [pid]
    while pids:
        q = pids.pop()
        try:
            with open(f"/proc/{q}/smaps_rollup") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("Pss:"))
            with open(f"/proc/{q}/task/{q}/children") as f:
                pids += [int(c) for c in f.read().split()]
        except (OSError, StopIteration, ValueError):
            pass
    return max(peak, total)


def children_cpu_s():
    """User + system CPU seconds of the waited-for children so far (unlike the
    wall time, not inflated by time a virtual machine's host steals)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def sample_until_exit(proc, t0, timeout):
    """Peak PSS (KiB) of a running simulator, sampled every second the same
    way for both simulators (a read walks every page table and holds the
    process's memory-map lock: sampling faster slows a run with gigabytes
    folded by several times); None (after killing it) on timeout. Output goes
    to files so a full pipe cannot stall the process."""
    peak = 0
    while proc.poll() is None:
        peak = peak_pss_kb(proc.pid, peak)
        if time.time() - t0 > timeout:
            proc.kill()
            proc.wait()
            return None
        try:
            # Waits up to a second, but returns as soon as the process ends:
            # the wall time must not be rounded up to the sampling period.
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
    return peak


def measure(cmd, d, timeout):
    """Runs one simulation in directory `d`: its HPL line, wall and CPU time
    and peak PSS (KiB), or {"error": ...}."""
    t0, cpu0 = time.time(), children_cpu_s()
    with open(os.path.join(d, "stdout"), "w") as fo, open(os.path.join(d, "stderr"), "w") as fe:
        proc = subprocess.Popen(cmd, cwd=d, stdout=fo, stderr=fe)
        peak = sample_until_exit(proc, t0, timeout)
    if peak is None:
        return {"error": f"timeout after {timeout} s"}
    out, err = open(os.path.join(d, "stdout")).read(), open(os.path.join(d, "stderr")).read()
    wall, cpu = time.time() - t0, children_cpu_s() - cpu0
    line = next((l for l in out.splitlines() if re.match(r"^W[RC]\d", l)), None)
    if proc.returncode != 0 or line is None:
        return {"error": (err.strip().splitlines() or ["no HPL result line"])[-1]}
    return {"hpl_line": line, "wall_s": wall, "cpu_s": cpu, "peak_kb": peak}


def write_hpl_dat(d, p, q, n, hpl):
    """HPL.dat in `d` for one scenario (residual checks skipped: the matrix is folded)."""
    params = [x for k, v in hpl.items() for x in (f"--{k}", str(v))]
    subprocess.run([os.path.join(HERE, "gen_dat.sh"), "--n", str(n), "--p", str(p), "--q", str(q), *params,
                    "--threshold", "-1", "-o", os.path.join(d, "HPL.dat")], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def run_smpi(name, p, q, n, platform, timeout):
    """The scenario under SimGrid 3.32 (None if it is not installed)."""
    # Without the per-rank pdgesv timer of the default SimGrid build: its two MPI_Wtime
    # calls alone move HPL's time by up to 3.5 % (Iprobe's shared growing cost makes the
    # result chaotic; see apps/hpl/simgrid/NOTES.md).
    xhpl = os.path.join(HERE, "simgrid", "build-plain", "xhpl")
    if not (os.path.exists("/usr/bin/smpirun") and os.path.exists(xhpl)):
        return {"name": name, "error": "SimGrid or apps/hpl/simgrid/build-plain/xhpl missing "
                "(VARIANT=plain HPL_TIME_WRAP=0 apps/hpl/simgrid/build.sh)"}
    with tempfile.TemporaryDirectory(prefix=f"hpl-smpi-{name}-") as d:
        write_hpl_dat(d, p, q, n, REFERENCE_HPL)
        xml = os.path.join(d, "platform.xml")
        toml_cluster_to_xml(os.path.join(REPO, platform), xml)
        cmd = ["/usr/bin/smpirun", "-platform", xml, "-np", str(p * q), "--cfg=smpi/shared-malloc:global",
               *COMMON_CFG, "--cfg=smpi/auto-shared-malloc-thresh:33554432", xhpl]
        m = measure(cmd, d, timeout)
        if "error" in m:
            return {"name": name, **m}
        line, fields = m["hpl_line"], m["hpl_line"].split()
        return {"name": name, "hpl_line": line, "wall_s": m["wall_s"], "cpu_s": m["cpu_s"],
                "pss_mb": m["peak_kb"] / 1024, "hpl_time_s": float(fields[5]), "gflops": float(fields[6])}


def default_smpirun():
    """The shipped build (scripts/build-dist.sh) when it exists, else the release one."""
    dist, release = (os.path.join(REPO, "target", p, "smpirun") for p in ("dist", "release"))
    if os.path.exists(dist):
        if os.path.exists(release) and os.path.getmtime(release) > os.path.getmtime(dist):
            print("warning: target/dist/smpirun is older than target/release/smpirun "
                  "(rebuild it: scripts/build-dist.sh)", file=sys.stderr)
        return dist
    if os.path.exists(release):
        return release
    sys.exit("no smpirun built: run scripts/build-dist.sh (or cargo build --release -p smpi-shim)")


def max_map_count():
    """This system's vm.max_map_count (Linux's default if unreadable)."""
    try:
        return int(open("/proc/sys/vm/max_map_count").read())
    except (OSError, ValueError):
        return 65530


def mappings_needed(p, q, n, nb, max_maps=None):
    """Memory mappings a scenario needs, roughly: per rank its stack, its copy of the program and
    its panels folded copy-on-write (12.4 per rank measured at 6,006 ranks), and the shared
    matrix's blocks."""
    block = next((int(c.split(":")[1]) for c in folding_cfg(p, q, n, nb, max_maps) if "blocksize" in c), 1 << 20)
    return 14 * p * q + -(-8 * -(-n // p) * (-(-n // q) + 1) // block)


def mappings_error(p, q, n, nb, max_maps=None):
    """Why a scenario cannot run under vm.max_map_count (said before a run that would fail minutes
    in, once the folded panels exceed the limit), or None."""
    limit = max_maps or max_map_count()
    need = mappings_needed(p, q, n, nb, limit)
    if need <= limit:
        return None
    return (f"needs about {need} memory mappings, beyond vm.max_map_count = {limit}: "
            f"raise it first (sysctl -w vm.max_map_count={1 << (2 * need - 1).bit_length()}, as root)")


def run(name, p, q, n, platform, hpl, model, extra, timeout, smpirun, xhpl_name="xhpl"):
    xhpl = os.path.join(HERE, "build", xhpl_name)
    if not os.path.exists(xhpl):
        return {"name": name, "error": f"{xhpl} missing (apps/hpl/build.sh)"}
    too_many = mappings_error(p, q, n, hpl["nb"])
    if too_many:
        return {"name": name, "error": too_many}
    with tempfile.TemporaryDirectory(prefix=f"hpl-{name}-") as d:
        write_hpl_dat(d, p, q, n, hpl)
        js = os.path.join(d, "run.json")
        cmd = [smpirun, "-platform", os.path.join(REPO, platform), "-np", str(p * q), *COMMON_CFG,
               *folding_cfg(p, q, n, hpl["nb"]), *extra, "-model", model, "--json", js, "-quiet", xhpl]
        m = measure(cmd, d, timeout)
        if "error" in m:
            return {"name": name, **m}
        line, fields = m["hpl_line"], m["hpl_line"].split()
        info = json.load(open(js))
        return {
            "name": name, "cmd": " ".join(cmd), "hpl_line": line, "wall_s": m["wall_s"], "cpu_s": m["cpu_s"],
            "pss_mb": max(m["peak_kb"], info["host"]["peak_pss_kb"]) / 1024,
            "maxrss_mb": info["host"]["max_rss_kb"] / 1024,
            "simulated_s": info["simulated_time"], "hpl_time_s": float(fields[5]), "gflops": float(fields[6]),
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default="8x8-20k,8x8-40k,16x16-80k",
                    help="comma-separated names; 'all' is every SMPI reference scenario (%s); "
                    "'stampede-grid' the thesis' grid; Stampede ones: %s"
                    % (", ".join(s[0] for s in SCENARIOS), ", ".join(s[0] for s in STAMPEDE_SCENARIOS)))
    ap.add_argument("--model", default=os.path.join(HERE, "models", "smpi_reference.toml"),
                    help="kernel models of the reference scenarios (Stampede ones use models/stampede.toml)")
    ap.add_argument("--cfg", action="append", default=[], help="extra --cfg=key:value for smpirun")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--smpirun", help="our smpirun to run (default: target/dist/smpirun if built, "
                    "else target/release/smpirun)")
    ap.add_argument("--fast-pipid", action="store_true",
                    help="run build/xhpl-fast-pipid: HPL with HPL_pipid answered from an index "
                    "(pipid_indexed.c; HPL's output, O(NB) instead of O(NB^2) per call and rank)")
    ap.add_argument("--smpi", action="store_true",
                    help="also run each scenario under the installed SimGrid 3.32 and compare with that")
    a = ap.parse_args()
    wanted = []
    for w in a.scenarios.split(","):
        wanted += [s[0] for s in SCENARIOS] if w == "all" else GROUPS.get(w, [w])
    unknown = set(wanted) - {s[0] for s in scenario_table()}
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    extra = [f"--cfg={c}" for c in a.cfg]
    smpirun = os.path.abspath(a.smpirun) if a.smpirun else default_smpirun()
    print(f"ours: {smpirun}" + (" running build/xhpl-fast-pipid" if a.fast_pipid else ""))
    results = []
    hdr = f"{'scenario':12} {'wall s':>8} {'PSS MB':>8} {'maxRSS MB':>9} {'sim s':>9} {'Gflops':>10} | {'SMPI wall':>9} {'SMPI PSS':>8} {'SMPI Gflops':>11} | {'speedup':>7} {'mem ratio':>9} {'Gflops diff':>11}"
    print(hdr)
    print("-" * len(hdr))
    for name, p, q, n, platform, ref, hpl, model in scenario_table():
        if name not in wanted:
            continue
        r = run(name, p, q, n, platform, hpl, model or a.model, extra, a.timeout, smpirun,
                "xhpl-fast-pipid" if a.fast_pipid else "xhpl")
        results.append(r)
        if "error" in r:
            print(f"{name:12} error: {r['error']}")
            continue
        source = "reference table"
        if a.smpi and hpl is REFERENCE_HPL:
            sr = run_smpi(name, p, q, n, platform, a.timeout)
            r["smpi"] = sr
            if "error" in sr:
                print(f"{'':12} SMPI run: {sr['error']}")
            else:
                ref = (sr["wall_s"], sr["pss_mb"] / 1024, sr["hpl_time_s"], sr["gflops"])
                source = "this run"
        if ref:
            rw, rp, _rs, rg = ref
            cmp = f"{rw:9.1f} {rp * 1024:8.0f} {rg:11.0f} | {rw / r['wall_s']:6.1f}x {rp * 1024 / max(r['pss_mb'], 1e-9):8.1f}x {100 * (r['gflops'] - rg) / rg:+10.2f}%  ({source})"
        else:
            cmp = f"{'n/a':>9} {'n/a':>8} {'n/a':>11} | {'':>7} {'':>9} {'':>11}"
        print(f"{name:12} {r['wall_s']:8.2f} {r['pss_mb']:8.1f} {r['maxrss_mb']:9.1f} {r['simulated_s']:9.4f} {r['gflops']:10.1f} | {cmp}")
        if a.smpi and "error" not in r.get("smpi", {"error": 1}):
            oc, sc = r["cpu_s"], r["smpi"]["cpu_s"]
            print(f"{'':12} CPU time (user+sys): ours {oc:.2f} s, SimGrid {sc:.2f} s: {sc / max(oc, 1e-9):.1f}x")
        sys.stdout.flush()
    print(f"\nmachine: {os.cpu_count()} cores; SMPI 3.32 numbers from "
          + ("SimGrid runs in this bench run (reference table where they failed)." if a.smpi
             else "the reference table (same machine kind); --smpi measures them here."))
    if a.json:
        json.dump(results, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
