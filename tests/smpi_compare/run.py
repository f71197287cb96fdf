#!/usr/bin/env python3
"""Compare our simulator (target/release/smpicc + smpirun) with the real SimGrid/SMPI 3.32.

    tests/smpi_compare/run.py                      # every case, both simulators, writes results.md
    tests/smpi_compare/run.py --only 'pingpong.*'  # cases whose id matches a glob (repeatable)
    tests/smpi_compare/run.py --list               # case ids and commands
    tests/smpi_compare/run.py --json out.json      # also a machine-readable result
    tests/smpi_compare/run.py --capture-expected   # store SMPI's outputs in expected/<case>.txt
    tests/smpi_compare/run.py --use-expected       # SMPI side read from expected/ (no SimGrid needed)

A case is (program, platform, number of ranks, network model, configuration variant). Each
program (src/*.c) prints `label value` lines on rank 0: simulated times (MPI_Wtime) or counts.
Both simulators run with --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf, so the
values are deterministic. Every label is compared: relative difference |ours - smpi| / |smpi|;
<= 1e-6 is "exact", <= 1% "close", above "off"; a label printed by one side only is "missing".

SimGrid's smpicc and smpirun are /usr/bin/smpicc and /usr/bin/smpirun (override with --smpi-bin);
ours are target/release/ (build with `cargo build --release -p smpi-shim`). Programs are built
with `smpicc -O2` on both sides into tests/smpi_compare/build/. Standard library only.
"""

import argparse
import datetime
import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SRC = os.path.join(HERE, "src")
PLAT = os.path.join(HERE, "platforms")
EXPECTED = os.path.join(HERE, "expected")
BUILD = os.path.join(HERE, "build")

EXACT = 1e-6
CLOSE = 1e-2

BASE_CFG = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/host-speed:1Gf"]

# name -> (platform file, hostfile, np)
PLATFORMS = {
    "fattree2_64": ("fattree2_64.xml", "hosts_64.txt", 64),
    "fattree2_64_np16": ("fattree2_64.xml", "hosts_16.txt", 16),
    "fattree2_tapered": ("fattree2_tapered.xml", "hosts_64.txt", 64),
    "fattree3_64": ("fattree3_64.xml", "hosts_64.txt", 64),
    "flat_bb_shared": ("flat_bb_shared.xml", "hosts_64.txt", 64),
    "torus_64": ("torus_64.xml", "hosts_64.txt", 64),
    "dragonfly_64": ("dragonfly_64.xml", "hosts_64.txt", 64),
    "small_routes": ("small_routes.xml", "hosts_small.txt", 4),
    # several ranks per host (block placement): intra-host messages
    "fattree2_16x4": ("fattree2_64.xml", "hosts_16x4.txt", 64),
    "flat_bb_16x4": ("flat_bb_shared.xml", "hosts_16x4.txt", 64),
    "small_x2": ("small_routes.xml", "hosts_small_x2.txt", 4),
}
ALL_PLATFORMS = [p for p in PLATFORMS if p != "fattree2_64_np16"]

OVH = "0:1e-6:1e-9;65536:2e-6:5e-10"
THRESH = ["--cfg=smpi/async-small-thresh:65536", "--cfg=smpi/send-is-detached-thresh:65536"]
# variant name -> extra --cfg options
VARIANTS = {
    "default": [],
    "thresh64k": THRESH,
    "thresh1k": ["--cfg=smpi/async-small-thresh:1024", "--cfg=smpi/send-is-detached-thresh:2048"],
    "os": ["--cfg=smpi/os:" + OVH],
    "or": ["--cfg=smpi/or:" + OVH],
    "ois": ["--cfg=smpi/ois:" + OVH],
    "ovh_all": ["--cfg=smpi/os:" + OVH, "--cfg=smpi/or:" + OVH, "--cfg=smpi/ois:" + OVH],
    "ovh_thresh": ["--cfg=smpi/os:" + OVH, "--cfg=smpi/or:" + OVH, "--cfg=smpi/ois:" + OVH] + THRESH,
    "testcost": ["--cfg=smpi/test:1e-5", "--cfg=smpi/iprobe:3e-6", "--cfg=smpi/wtime:0"],
    "nogrow": ["--cfg=smpi/grow-injected-times:no"],
    "probe0": ["--cfg=smpi/iprobe:0"],
}

PROGRAMS = ["incast", "contention", "pingpong", "p2p", "coll", "split", "polling", "traffic", "probe_race"]


def case_list():
    """All cases: dicts with id, prog, platform, np, model, variant, args."""
    cases = []

    def add(prog, plat, model, variant="default", args=()):
        pf, hf, np = PLATFORMS[plat]
        cid = f"{prog}.{plat}.{model}.{variant}"
        cases.append(dict(id=cid, prog=prog, platform=plat, np=np, model=model, variant=variant,
                          args=list(args)))

    for model in ("CM02", "SMPI"):
        for plat in ALL_PLATFORMS:
            add("incast", plat, model)
            add("contention", plat, model)
        for plat in ("fattree2_64", "small_routes"):
            for v in ("default", "thresh64k", "thresh1k", "os", "or", "ois", "ovh_all", "ovh_thresh"):
                add("pingpong", plat, model, v)
            for v in ("default", "thresh64k", "ovh_all", "testcost", "nogrow"):
                add("p2p", plat, model, v)
            for v in ("default", "testcost", "nogrow"):
                add("polling", plat, model, v)
        for plat in ("flat_bb_shared", "torus_64", "fattree2_16x4", "flat_bb_16x4", "small_x2"):
            add("pingpong", plat, model)
        for plat in ("fattree2_64_np16", "fattree2_64", "fattree2_tapered", "fattree3_64", "flat_bb_shared",
                     "torus_64", "dragonfly_64", "small_routes", "fattree2_16x4", "flat_bb_16x4", "small_x2"):
            add("coll", plat, model)
        add("coll", "fattree2_64", model, "thresh64k")
        for plat in ("fattree2_64", "torus_64", "small_routes"):
            add("split", plat, model)
        for plat in ("fattree2_64", "flat_bb_shared", "torus_64", "small_routes", "fattree2_16x4"):
            add("traffic", plat, model)
        for plat in ("fattree2_64", "torus_64", "small_routes"):
            for v in ("default", "probe0"):
                add("probe_race", plat, model, v)
    return cases


def command(side, case, exe, smpi_bin):
    """The smpirun command line (list) of one case for side 'smpi' or 'ours'."""
    pf, hf, np = PLATFORMS[case["platform"]]
    runner = os.path.join(smpi_bin, "smpirun") if side == "smpi" else os.path.join(REPO, "target", "release", "smpirun")
    cmd = [runner, "-platform", os.path.join(PLAT, pf), "-hostfile", os.path.join(PLAT, hf), "-np", str(np),
           f"--cfg=network/model:{case['model']}"] + BASE_CFG + VARIANTS[case["variant"]] + [exe] + case["args"]
    return cmd


def rel(cmd):
    """A command with repository paths shortened, for display."""
    out = []
    for a in cmd:
        a = a.replace(REPO + os.sep, "")
        out.append(a)
    return " ".join(shlex.quote(a) for a in out)


def build(prog, side, smpi_bin):
    os.makedirs(BUILD, exist_ok=True)
    src = os.path.join(SRC, prog + ".c")
    out = os.path.join(BUILD, f"{prog}.{side}")
    deps = [src, os.path.join(SRC, "common.h")]
    cc = os.path.join(smpi_bin, "smpicc") if side == "smpi" else os.path.join(REPO, "target", "release", "smpicc")
    if os.path.exists(out) and os.path.getmtime(out) >= max(os.path.getmtime(d) for d in deps + [cc]):
        return out
    cmd = [cc, "-O2", src, "-o", out]
    r = subprocess.run(cmd, cwd=BUILD, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        sys.exit(f"build failed: {rel(cmd)}\n{r.stdout}{r.stderr}")
    return out


def run(cmd, timeout):
    """Runs one simulation: (returncode or 'timeout', stdout, stderr, wall seconds)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, cwd=BUILD, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        rc = "timeout"
    return rc, out, err, time.monotonic() - t


def parse(text):
    """`label value` lines -> ordered list of (label, float)."""
    vals = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            continue
        try:
            vals.append((parts[0], float(parts[1])))
        except ValueError:
            pass
    return vals


def rel_diff(ours, ref):
    if ref == 0:
        return abs(ours)
    return abs(ours - ref) / abs(ref)


def classify(d):
    if d is None:
        return "missing"
    if d <= EXACT:
        return "exact"
    if d <= CLOSE:
        return "close"
    return "off"


def expected_path(case):
    return os.path.join(EXPECTED, case["id"] + ".txt")


def read_expected(case):
    """SMPI's stored output: (text, wall seconds or None)."""
    p = expected_path(case)
    if not os.path.exists(p):
        return None, None
    text = open(p).read()
    wall = None
    for line in text.splitlines():
        if line.startswith("# smpi_wall_seconds "):
            wall = float(line.split()[2])
    return text, wall


def write_expected(case, out, wall, smpi_bin):
    """Stores SMPI's output with a header the Rust test reads (`# key value` lines)."""
    os.makedirs(EXPECTED, exist_ok=True)
    pf, hf, np = PLATFORMS[case["platform"]]
    hdr = [
        f"# SimGrid/SMPI 3.32 output of case {case['id']} (tests/smpi_compare/run.py --capture-expected)",
        f"# command: smpicc -O2 tests/smpi_compare/src/{case['prog']}.c -o {case['prog']} && "
        + rel(command("smpi", case, "./" + case["prog"], smpi_bin)).replace(smpi_bin + "/", ""),
        f"# prog {case['prog']}",
        f"# platform {pf}",
        f"# hostfile {hf}",
        f"# np {np}",
    ]
    for c in [f"--cfg=network/model:{case['model']}"] + BASE_CFG + VARIANTS[case["variant"]]:
        hdr.append("# cfg " + c[len("--cfg="):])
    for arg in case["args"]:
        hdr.append("# arg " + arg)
    hdr.append(f"# smpi_wall_seconds {wall:.3f}")
    body = "".join(l + "\n" for l in out.splitlines() if not l.startswith("#"))
    with open(expected_path(case), "w") as f:
        f.write("\n".join(hdr) + "\n" + body)


# Known causes of differences (diagnosed by hand, see README.md). Keys are used in
# expected/known_diffs.tsv and in the #[ignore] messages of tests/tests/e2e/smpi_compare.rs.
CAUSES = {
    "precision": "SimGrid ends every action due within surf/precision (1e-9 s) of the current date in the same "
                 "step (update_actions_state_lazy: double_equals(top_date, now, 1e-9)); ours only events dated <= now "
                 "(SimGrid run with --cfg=surf/precision:1e-15 gives our value)",
    "tie_order": "simultaneous completions are processed in a different order (SimGrid pops equal-date actions from "
                 "its boost pairing heap, ours in scheduling order), so MPI_ANY_SOURCE matches senders in another order",
    "scan": "MPI_Scan: SMPI 3.32 (colls::scan) posts irecv from every lower rank and isend to every higher rank, "
            "then waitany; ours is a linear chain r-1 -> r",
    "split": "MPI_Comm_split: SMPI gathers (color,key) to rank 0 with gather__default, then rank 0 isends an 8-byte "
             "group pointer to each member, one color group after the other (waitall per group); ours is one "
             "linear allgather of (color,key) pairs",
    "ssend_eager": "with smpi/async-small-thresh > size, SMPI still sends MPI_Ssend/MPI_Issend through the rendezvous "
                   "mailbox (the sender waits for the receive); ours sends them eagerly and completes the Ssend when "
                   "the transfer ends, before the receive is posted",
    "overhead": "smpi/os, smpi/or, smpi/ois: ours evaluates the piecewise cost on size+16 (the envelope) instead of "
                "the payload size (both the chunk choice and the per-byte term), and charges os (only when detached) "
                "instead of ois on the isends inside collectives and MPI_Sendrecv (SMPI: every Request::isend / "
                "isend_init pays ois)",
    "precision_partial": "mostly the same 1e-9 s event merging (SimGrid at surf/precision 1e-15 comes within ~1e-10 s "
                         "of ours); the remainder is not diagnosed (torus: many equal-date events)",
    "history": "differs only after earlier phases of the same run (the same collective alone on a fresh run matches "
               "SMPI exactly): not diagnosed, probably the equal-date ordering after the differing MPI_Comm_split",
    "cascade": "accumulates the differences of earlier measurements of the same run (end time, shared "
               "Test/Iprobe counter, later phases shifted)",
    "unknown": "not diagnosed",
}


# One-line versions for the #[ignore] messages of the Rust test.
SHORT = {
    "precision": "SimGrid ends actions due within surf/precision 1e-9 s of now in the same step, ours does not",
    "tie_order": "equal-date completions processed in another order (pairing heap vs FIFO): ANY_SOURCE order",
    "scan": "MPI_Scan is a chain in ours, SMPI sends to every higher rank (colls::scan)",
    "split": "MPI_Comm_split: SMPI gather + per-color-group isends from rank 0, ours one allgather",
    "ssend_eager": "with async-small-thresh, ours sends Ssend/Issend eagerly, SMPI keeps them rendezvous",
    "overhead": "os/or/ois computed on size+16 instead of payload size; os instead of ois in colls/Sendrecv",
    "precision_partial": "mostly SimGrid's 1e-9 s event merging; small remainder not diagnosed",
    "history": "only after earlier differing phases of the run; alone it matches",
    "cascade": "follows from the earlier differences of the same run",
    "unknown": "not diagnosed",
}


rows_of = {}  # case id -> rows (for diagnose)


def diagnose(case, row):
    """Cause key of one differing value."""
    label = row["label"]
    if label.endswith("_order_hash"):
        return "tie_order"
    if case["prog"] == "coll" and label.startswith("scan_"):
        return "scan"
    if case["prog"] == "split" and label.endswith("_split_max"):
        return "split"
    if case["variant"] in ("thresh64k", "ovh_thresh", "thresh1k") and ("ssend" in label) and "1KiB" in label \
            and not label.endswith("_rtt"):
        return "ssend_eager"
    if label.startswith("incast_recvany_"):
        # a different first sender (equal-date order) takes another route: see the order hash
        size = label.split("_")[2]
        h = [r for r in rows_of.get(case["id"], []) if r["label"] == f"incast_recvany_{size}_order_hash"]
        if h and h[0]["cls"] != "exact":
            return "tie_order"
    fine = row.get("smpi_fine")
    if fine is not None and row["ours"] is not None and rel_diff(row["ours"], fine) <= 1e-9:
        return "precision"
    if fine is not None and row["ours"] is not None and abs(row["ours"] - fine) < 0.5 * abs(row["ours"] - row["smpi"]):
        return "precision_partial"
    if label == "end_time":
        return "cascade"
    if any(k in case["variant"] for k in ("os", "or", "ois", "ovh")):
        return "overhead"
    if label.startswith("multi_iprobe") or label.startswith("waitany"):
        return "cascade"
    if case["prog"] == "split":
        return "history"
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="glob on case ids (repeatable)")
    ap.add_argument("--list", action="store_true", help="list cases and commands, run nothing")
    ap.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    ap.add_argument("--results",
                    help="markdown table to write ('-' for none; default tests/smpi_compare/results.md for a "
                    "run of every case, none with --only: a subset must not replace the full table)")
    ap.add_argument("--capture-expected", action="store_true", help="store SMPI outputs in expected/")
    ap.add_argument("--use-expected", action="store_true",
                    help="read SMPI outputs from expected/ instead of running SimGrid")
    ap.add_argument("--probe-precision", action="store_true",
                    help="for every case that differs, rerun SimGrid with --cfg=surf/precision:1e-15 to find the "
                         "values explained by SimGrid's 1e-9 s event merging")
    ap.add_argument("--known-diffs", action="store_true",
                    help="write expected/known_diffs.tsv (every differing value with its diagnosed cause)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="re-diagnose a --json result (no runs): rewrite results.md, and known_diffs with --known-diffs")
    ap.add_argument("--gen-rust", action="store_true",
                    help="regenerate the case list of tests/tests/e2e/smpi_compare.rs from expected/ (runs nothing)")
    ap.add_argument("--smpi-bin", default="/usr/bin", help="directory of SimGrid's smpicc/smpirun")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per simulation (default 600)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every label, not only differences")
    a = ap.parse_args()
    if a.results is None:
        a.results = "-" if a.only else os.path.join(HERE, "results.md")
        if a.only:
            print("run.py: --only: tests/smpi_compare/results.md left as it is (--results FILE writes this subset's)",
                  file=sys.stderr)

    cases = case_list()
    if a.gen_rust:
        gen_rust()
        return 0
    if a.from_json:
        data = json.load(open(a.from_json))
        byid = {c["id"]: c for c in cases}
        results = data["cases"]
        for r in results:
            rows_of[r["case"]] = r["rows"]
        for r in results:
            for row in r["rows"]:
                if row["cls"] != "exact":
                    row["cause"] = diagnose(byid[r["case"]], row)
        tot = data["totals"]
        if a.results != "-":
            write_markdown(a.results, results, tot, False)
        if a.known_diffs:
            write_known_diffs(results)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(dict(totals=tot, causes=CAUSES, cases=results), f, indent=1)
        return 0
    if a.only:
        cases = [c for c in cases if any(fnmatch.fnmatch(c["id"], g) for g in a.only)]
    if a.list:
        for c in cases:
            print(c["id"])
            print("  smpi: " + rel(command("smpi", c, "./" + c["prog"], a.smpi_bin)))
            print("  ours: " + rel(command("ours", c, "./" + c["prog"], a.smpi_bin)))
        return 0
    have_smpi = os.path.exists(os.path.join(a.smpi_bin, "smpirun"))
    use_expected = a.use_expected or not have_smpi
    if use_expected and a.capture_expected:
        sys.exit("--capture-expected needs SimGrid")
    if a.probe_precision and not have_smpi:
        sys.exit("--probe-precision needs SimGrid")
    if use_expected and not a.use_expected:
        print(f"note: {a.smpi_bin}/smpirun not found: SMPI values come from expected/", file=sys.stderr)
    for tool in ("smpicc", "smpirun"):
        if not os.path.exists(os.path.join(REPO, "target", "release", tool)):
            sys.exit(f"target/release/{tool} missing: cargo build --release -p smpi-shim")

    progs = sorted({c["prog"] for c in cases})
    exes = {}
    for p in progs:
        exes[(p, "ours")] = build(p, "ours", a.smpi_bin)
        if have_smpi and (not use_expected or a.probe_precision):
            exes[(p, "smpi")] = build(p, "smpi", a.smpi_bin)

    results = []
    for i, c in enumerate(cases):
        rec = dict(case=c["id"], prog=c["prog"], platform=c["platform"], np=c["np"], model=c["model"],
                   variant=c["variant"])
        rec["cmd_smpi"] = rel(command("smpi", c, "./" + c["prog"], a.smpi_bin))
        rec["cmd_ours"] = rel(command("ours", c, "./" + c["prog"], a.smpi_bin))
        # SMPI side
        if use_expected:
            sout, swall = read_expected(c)
            if sout is None:
                print(f"[{i + 1}/{len(cases)}] {c['id']}: no expected/{c['id']}.txt, skipped", file=sys.stderr)
                continue
            src_ = "expected"
            srce = "ok"
        else:
            rc, sout, serr, swall = run(command("smpi", c, exes[(c["prog"], "smpi")], a.smpi_bin), a.timeout)
            src_ = "simgrid"
            srce = "ok" if rc == 0 else f"exit {rc}"
            if rc != 0:
                rec["smpi_stderr"] = serr[-2000:]
            elif a.capture_expected:
                write_expected(c, sout, swall, a.smpi_bin)
        # our side
        rc, oout, oerr, owall = run(command("ours", c, exes[(c["prog"], "ours")], a.smpi_bin), a.timeout)
        ours_status = "ok" if rc == 0 else f"exit {rc}"
        if rc != 0:
            rec["ours_stderr"] = oerr[-2000:]
        rec.update(smpi_status=srce, ours_status=ours_status, smpi_source=src_, smpi_wall=swall, ours_wall=owall)
        sv = parse(sout)
        ov = dict(parse(oout))
        rows = []
        for label, v in sv:
            o = ov.pop(label, None)
            d = None if o is None else rel_diff(o, v)
            rows.append(dict(label=label, smpi=v, ours=o, rel=d, cls=classify(d)))
        for label, o in ov.items():
            rows.append(dict(label=label, smpi=None, ours=o, rel=None, cls="missing"))
        if a.probe_precision and any(r["cls"] != "exact" for r in rows):
            cmd = command("smpi", c, exes[(c["prog"], "smpi")], a.smpi_bin)
            cmd.insert(len(cmd) - 1 - len(c["args"]), "--cfg=surf/precision:1e-15")
            frc, fout, _, _ = run(cmd, a.timeout)
            if frc == 0:
                fine = dict(parse(fout))
                for r in rows:
                    r["smpi_fine"] = fine.get(r["label"])
        rows_of[c["id"]] = rows
        for r in rows:
            if r["cls"] != "exact":
                r["cause"] = diagnose(c, r)
        rec["rows"] = rows
        counts = {k: sum(1 for r in rows if r["cls"] == k) for k in ("exact", "close", "off", "missing")}
        rec["counts"] = counts
        results.append(rec)
        bad = counts["close"] + counts["off"] + counts["missing"] or srce != "ok" or ours_status != "ok"
        sw = f"{swall:.2f}s" if swall is not None else "?"
        print(f"[{i + 1}/{len(cases)}] {c['id']}: smpi {srce} ({sw}), ours {ours_status} ({owall:.2f}s): "
              f"{counts['exact']} exact, {counts['close']} <=1%, {counts['off']} off, {counts['missing']} missing"
              + ("  <-- DIFFERS" if bad else ""), flush=True)
        for r in rows:
            if a.verbose or r["cls"] != "exact":
                print(f"    {r['label']:<44} {fmt(r['smpi']):>20} {fmt(r['ours']):>20} {fmtd(r['rel']):>10} "
                      f"{r['cls']} {r.get('cause', '')}")
        if srce != "ok" or ours_status != "ok":
            print("    smpi: " + rec["cmd_smpi"])
            print("    ours: " + rec["cmd_ours"])
            for k in ("smpi_stderr", "ours_stderr"):
                if k in rec:
                    print(f"    {k}: " + rec[k].strip().replace("\n", "\n      ")[-800:])

    tot = {k: sum(r["counts"][k] for r in results) for k in ("exact", "close", "off", "missing")}
    print(f"\n{len(results)} cases, {sum(tot.values())} values: {tot['exact']} exact (<=1e-6), "
          f"{tot['close']} within 1%, {tot['off']} off (>1%), {tot['missing']} missing")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(totals=tot, causes=CAUSES, cases=results), f, indent=1)
    if a.results != "-" and results:
        write_markdown(a.results, results, tot, use_expected)
    if a.known_diffs:
        write_known_diffs(results)
    return 0


def gen_rust():
    """Rewrites the generated part of tests/tests/e2e/smpi_compare.rs: one test per case of expected/."""
    path = os.path.join(REPO, "tests", "tests", "e2e", "smpi_compare.rs")
    known = {}
    kd = os.path.join(EXPECTED, "known_diffs.tsv")
    if os.path.exists(kd):
        for line in open(kd):
            if line.startswith("#") or not line.strip():
                continue
            case, label, cause, smpi, ours, reld = line.rstrip("\n").split("\t")[:6]
            known.setdefault(case, []).append((label, cause, smpi, ours, reld))
    ids = [c["id"] for c in case_list() if os.path.exists(expected_path(c))]
    out = ["// BEGIN GENERATED by tests/smpi_compare/run.py --gen-rust (do not edit by hand)", "",
           "const CASES: &[&str] = &["]
    out += [f'    "{i}",' for i in ids]
    out += ["];", ""]
    for i in ids:
        name = i.replace(".", "__").lower()
        if i not in known:
            out.append(f'case!({name}, "{i}");')
            continue
        rows = known[i]
        causes = []
        for _, cause, _, _, _ in rows:
            if cause not in causes:
                causes.append(cause)
        parts = []
        for cause in causes:
            rs = [r for r in rows if r[1] == cause]
            worst = max(rs, key=lambda r: float(r[4]) if r[4] != "-" else 0.0)
            parts.append(f"{cause} ({len(rs)} values; {SHORT[cause]}; e.g. {worst[0]} SMPI {worst[2]} ours "
                         f"{worst[3]}, rel {worst[4]})")
        why = "differs from SMPI: " + "; ".join(parts)
        why = why.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'case!(\n    {name},\n    {name}_exact,\n    "{i}",\n    "{why}"\n);')
    out.append("// END GENERATED")
    text = open(path).read()
    a = text.index("// BEGIN GENERATED")
    b = text.index("// END GENERATED") + len("// END GENERATED")
    with open(path, "w") as f:
        f.write(text[:a] + "\n".join(out) + text[b:])
    if shutil.which("rustfmt"):
        subprocess.run(["rustfmt", "--edition", "2021", path], cwd=REPO)
    print(f"{path}: {len(ids)} cases, {len(known)} with known differences")


def write_known_diffs(results):
    """expected/known_diffs.tsv: case, label, cause, SMPI value, our value, relative difference.
    Entries of cases not run this time are kept."""
    path = os.path.join(EXPECTED, "known_diffs.tsv")
    done = {r["case"] for r in results}
    keep = []
    if os.path.exists(path):
        keep = [l for l in open(path) if not l.startswith("#") and l.strip() and l.split("\t")[0] not in done]
    new = []
    for r in results:
        for row in r["rows"]:
            if row["cls"] != "exact":
                new.append(f"{r['case']}\t{row['label']}\t{row.get('cause', 'unknown')}\t{fmt(row['smpi'])}\t"
                           f"{fmt(row['ours'])}\t{'-' if row['rel'] is None else format(row['rel'], '.6e')}\n")
    order = {c["id"]: i for i, c in enumerate(case_list())}
    lines = sorted(keep + new, key=lambda l: order.get(l.split("\t")[0], 1 << 30))
    with open(path, "w") as f:
        f.write("# Values where our simulator differs from SMPI 3.32 (relative difference > 1e-6), written by\n"
                "# tests/smpi_compare/run.py --known-diffs. Causes: see tests/smpi_compare/README.md.\n"
                "# case\tlabel\tcause\tsmpi\tours\trel_diff\n")
        f.writelines(lines)


def fmt(v):
    if v is None:
        return "-"
    if float(v).is_integer() and abs(v) < 1e9:
        return str(int(v))
    return f"{v:.9e}"


def fmtd(d):
    return "-" if d is None else f"{d:.2e}"


def write_markdown(path, results, tot, use_expected):
    L = []
    L.append("# SMPI 3.32 vs our simulator: comparison table")
    L.append("")
    L.append(f"Generated by `tests/smpi_compare/run.py` on {datetime.date.today().isoformat()}"
             + (" (SMPI values from `expected/`)" if use_expected else " (SimGrid 3.32 run live)") + ".")
    L.append("Relative difference = |ours − SMPI| / |SMPI|; exact ≤ 1e-6, close ≤ 1%, off > 1%.")
    L.append("")
    L.append(f"**Totals**: {len(results)} cases, {sum(tot.values())} values: {tot['exact']} exact, "
             f"{tot['close']} within 1%, {tot['off']} off, {tot['missing']} missing.")
    L.append("")
    L.append("## Per case")
    L.append("")
    L.append("| case | np | exact | ≤1% | off | missing | SMPI wall (s) | ours wall (s) | speed-up |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["counts"]
        sw, ow = r["smpi_wall"], r["ours_wall"]
        sp = f"{sw / ow:.1f}×" if sw and ow else "-"
        st = "" if r["smpi_status"] == "ok" and r["ours_status"] == "ok" else f" (smpi {r['smpi_status']}, ours {r['ours_status']})"
        L.append(f"| `{r['case']}`{st} | {r['np']} | {c['exact']} | {c['close']} | {c['off']} | {c['missing']} | "
                 f"{sw:.2f} | {ow:.2f} | {sp} |" if sw is not None else
                 f"| `{r['case']}`{st} | {r['np']} | {c['exact']} | {c['close']} | {c['off']} | {c['missing']} | - | {ow:.2f} | - |")
    L.append("")
    L.append("## Causes")
    L.append("")
    L.append("| cause | values | of which > 1% | meaning |")
    L.append("|---|---|---|---|")
    for k, text in CAUSES.items():
        n = [row for r in results for row in r["rows"] if row["cls"] != "exact" and row.get("cause", "unknown") == k]
        if n:
            L.append(f"| `{k}` | {len(n)} | {sum(1 for row in n if row['cls'] != 'close')} | {text} |")
    L.append("")
    L.append("## Speed (larger cases: SMPI wall time above 5 s)")
    L.append("")
    L.append("Wall times of one run each (including program start-up), on a 2-core machine shared with other work.")
    L.append("")
    L.append("| case | SMPI wall (s) | ours wall (s) | SMPI / ours |")
    L.append("|---|---|---|---|")
    for r in sorted(results, key=lambda r: -(r["smpi_wall"] or 0)):
        if r["smpi_wall"] and r["smpi_wall"] > 5:
            L.append(f"| `{r['case']}` | {r['smpi_wall']:.2f} | {r['ours_wall']:.2f} | "
                     f"{r['smpi_wall'] / r['ours_wall']:.1f}× |")
    L.append("")
    L.append("## Differences by case and cause")
    L.append("")
    L.append("Every value above 1e-6 relative is in the full table below and in `expected/known_diffs.tsv`; here, per "
             "case and cause: how many values and the largest difference. `smpi@1e-15` = SimGrid rerun with "
             "`--cfg=surf/precision:1e-15`.")
    L.append("")
    L.append("| case | cause | values | largest: label | SMPI | ours | rel. diff | smpi@1e-15 |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        by = {}
        for row in r["rows"]:
            if row["cls"] != "exact":
                by.setdefault(row.get("cause", ""), []).append(row)
        for cause, rows in by.items():
            w = max(rows, key=lambda x: x["rel"] if x["rel"] is not None else float("inf"))
            L.append(f"| `{r['case']}` | {cause} | {len(rows)} | `{w['label']}` | {fmt(w['smpi'])} | {fmt(w['ours'])} | "
                     f"{fmtd(w['rel'])} | {fmt(w.get('smpi_fine'))} |")
    L.append("")
    L.append("## Full table")
    L.append("")
    for r in results:
        L.append(f"### `{r['case']}`")
        L.append("")
        L.append(f"SMPI: `{r['cmd_smpi']}`  ")
        L.append(f"ours: `{r['cmd_ours']}`")
        L.append("")
        L.append("| label | SMPI | ours | rel. diff | cause |")
        L.append("|---|---|---|---|---|")
        for row in r["rows"]:
            mark = "" if row["cls"] == "exact" else f"**{row['cls']}** {row.get('cause', '')}"
            d = "0" if row["rel"] == 0 else fmtd(row["rel"])
            L.append(f"| {row['label']} | {fmt(row['smpi'])} | {fmt(row['ours'])} | {d} | {mark} |")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    sys.exit(main())
