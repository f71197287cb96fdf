#!/usr/bin/env python3
"""Run a fixed selection of the MPI Bugs Initiative (MBI) programs under our simulator (and,
with --simgrid, under SimGrid 3.32's smpirun) and score the misuse each one reports.

    tests/mbi/run.py                       # the selection (tests/mbi/selection.txt), ours
    tests/mbi/run.py --simgrid --jobs 2    # ours and SimGrid 3.32, side by side
    tests/mbi/run.py --only 'ResLeak_*' -v # some programs, with their output
    tests/mbi/run.py --make-selection      # redraw selection.txt (seeded, deterministic)

MBI comes from Debian's `simgrid` source package (tests/mbi/fetch.sh, run on need). Its Python
generators (teshsuite/smpi/MBI/*Generator.py) write the C programs into build/gen/; each program's
header says how to run it (`mpirun -np N ${EXE}`) and what it should do (`OK`, or `ERROR: <label>`,
e.g. `ERROR: RootMatching`). The labels are read with MBI's own parser (MBIutils.parse_one_code of
the fetched tree) and grouped into MBI's error classes (MBIutils.possible_details).

Each program is built with the tool's smpicc and run with its smpirun on MBI's own platform (a
100-host cluster, written to build/cluster.xml) at the rank count of its header, with a wall-clock
limit. The run's output is classified as MBI's SMPI runner does (see OUTCOMES and README.md): a
deadlock report, an MPI error returned, a crash, a resource-leak report... is a detection.

Standard library only. Exit codes: 0 done; 1 our simulator flagged a correct program; 2 usage
error or a selection that does not match the generated programs; 3 a tool is missing or fails on a
trivial program (pre-flight); 4 MBI could not be fetched (no network to the Debian mirror); 5 the
fetched tree or a generator is broken.
"""

import argparse
import collections
import concurrent.futures
import datetime
import fnmatch
import hashlib
import importlib.util
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("MBI_BUILD_DIR") or os.path.join(HERE, "build"))
SELECTION = os.path.join(HERE, "selection.txt")

EXIT_FP, EXIT_USAGE, EXIT_TOOL, EXIT_NO_MBI, EXIT_BAD_MBI = 1, 2, 3, 4, 5

# ------------------------------------------------------------------------------------ selection
# --make-selection draws, with this seed, QUOTA programs per MBI class (all of a class when it has
# fewer). Within a class the draw goes round-robin over the class's labels (e.g. CMatch:
# CommunicatorMatching, DatatypeMatching, OperatorMatching, RootMatching, TagMatching), so each
# label gets an equal share (or all its programs); within a label each generator that emits it gets
# a share that goes as the square root of its program count (the 576 collective-ordering programs
# of CollMatchingGenerator weigh more than the 20 of P2PMatchingGenerator, not 29 times more).
# Each (label, generator) stratum is shuffled with the seeded generator and drawn from the front.
# The result is committed as selection.txt.
SEED = "smpi-rs tests/mbi selection v1"
QUOTA = {
    "AInvalidParam": 51,
    "BResLeak": 14,
    "BReqLifecycle": 20,
    "BLocalConcurrency": 15,
    "CMatch": 40,
    "DMatch": 60,
    "DRace": 15,
    "DGlobalConcurrency": 15,
    "EBufferingHazard": 15,
    "FOK": 70,
}

# ------------------------------------------------------------------------------------ outcomes
# What a run ended with. DETECTIONS are the outcomes MBI counts as "an error was reported" (its
# categorize(): anything but OK, timeout, failure, unimplemented and other); for a program labelled
# ERROR they are true positives ("flagged"), for a correct program false positives.
OUTCOMES = {
    "deadlock": "deadlock reported",
    "mpierr": "an MPI call returned an error (MPI_ERR_*)",
    "mismatch": "collective mismatch reported",
    "crash": "a rank crashed (signal)",
    "resleak": "resource leak reported",
    "race": "the program saw a message race (MBI_MSG_RACE)",
    "ok": "ended cleanly",
    "build-error": "smpicc failed",
    "unimplemented": "uses an MPI function the tool lacks",
    "timeout": "wall-clock limit hit",
    "failure": "the tool itself failed",
    "other": "non-zero exit without a recognised report",
}
DETECTIONS = ("deadlock", "mpierr", "mismatch", "crash", "resleak", "race")
NO_VERDICT = ("build-error", "unimplemented", "timeout", "failure", "other")
SHORT = {"build-error": "build", "unimplemented": "unimpl", "timeout": "timeout",
         "failure": "tool failure", "other": "other"}


def first_line(out, pattern, flags=0):
    rx = re.compile(pattern, flags)
    for line in out.splitlines():
        if rx.search(line):
            return line.strip()
    return None


def tidy(line):
    """An evidence line without directories in its paths (smpirun, not /work/.../smpirun)."""
    if not line:
        return line
    return re.sub(r"(?:\.{0,2}/[\w.+-]+)+/(?=[\w.+-])", "", line)[:300]


def classify_simgrid(rc, timed_out, out):
    """MBI's SMPI runner (tools/smpi.py of MBI: parse()) on SimGrid's output, first match wins.
    Two additions for plain smpirun (MBI's patterns come from the model checker's messages):
    a deadlock is also "Oops! Deadlock detected" (any case), and a crash is also the plain
    "Segmentation fault" / exit 139 of smpirun."""
    if timed_out:
        return "timeout", None
    for outcome, pattern, flags in [
            ("failure", r"MC is currently not supported here", 0),
            ("race", r"MBI_MSG_RACE", 0),
            ("deadlock", r"deadlock detected", re.I),
            ("mpierr", r"returned MPI_ERR", 0),
            ("unimplemented", r"Not yet implemented", 0),
            ("crash", r"CRASH IN THE PROGRAM|^Segmentation fault|Execution failed with code 139", 0),
            ("resleak", r"Probable memory leaks in your code: SMPI detected", 0),
            ("ok", r"No property violation found", 0)]:
        line = first_line(out, pattern, flags)
        if line:
            return outcome, line
    if rc == 0:
        return "ok", None
    return "other", f"exit {rc}"


def classify_ours(rc, timed_out, out):
    """Our smpirun's messages mapped onto the same outcomes, first match wins."""
    if timed_out:
        return "timeout", None
    for outcome, pattern, flags in [
            ("unimplemented", r"undefined symbol: P?MPIX?_\w+|\b(does not|doesn't) implement\b|"
                              r"\bnot implemented\b", re.I),
            ("race", r"MBI_MSG_RACE", 0),
            ("deadlock", r"deadlock detected|\bdeadlock: ", re.I),
            ("mpierr", r"\bMPI_ERR_[A-Z_]+\b", 0),
            ("mismatch", r"^(smpirun: )?(error|warning).*\bmismatch", re.I),
            ("failure", r"simulator (itself )?crashed|panicked", re.I),
            ("crash", r"\bcrashed\b.*\bSIG[A-Z]+|\bSIG(SEGV|BUS|FPE|ILL|ABRT)\b", 0),
            ("resleak", r"^(smpirun: )?(error|warning).*(\bleak|unfreed|never freed|not freed|"
                        r"never completed|never waited|still pending)", re.I)]:
        line = first_line(out, pattern, flags)
        if line:
            if outcome == "unimplemented":  # the symbol, not the loader's long line
                line = re.search(pattern, line, flags).group(0)
            return outcome, line
    if rc == 0:
        return "ok", None
    return "other", first_line(out, r"^(smpirun: )?error") or f"exit {rc}"


def verdict(expect, outcome):
    if outcome in NO_VERDICT:
        return "no verdict"
    if expect == "ERROR":
        return "TP" if outcome in DETECTIONS else "FN"
    return "FP" if outcome in DETECTIONS else "TN"


# ------------------------------------------------------------------------------------ helpers

def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rel(path):
    return os.path.relpath(path, REPO)


def file_sig(path):
    try:
        st = os.stat(path)
        return f"{path}:{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        return f"{path}:missing"


def read_text(path):
    with open(path) as fh:
        return fh.read()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()


def read_capped(path, limit=256 * 1024):
    """The file's text; the middle is cut when it is longer than limit."""
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) > limit:
        data = data[: limit // 2] + b"\n[... output cut ...]\n" + data[-limit // 2:]
    return data.decode("utf-8", "replace")


def git_info():
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", REPO, "status", "--porcelain", "-uno"],
                                    capture_output=True, text=True).stdout.strip())
        return commit, dirty
    except OSError:
        return "", False


# ------------------------------------------------------------------------------------ MBI tree

class Mbi:
    """The fetched MBI tree, its generated programs and MBI's own label parser."""

    def __init__(self):
        tree = os.path.join(BUILD, "src", "MBI_TREE")
        conf = dict(l.strip().split("=", 1) for l in read_text(tree).splitlines() if "=" in l)
        self.version = conf.get("MBI_SIMGRID_VERSION", "?")
        self.dir = os.path.join(BUILD, "src", conf["MBI_DIR"])
        self.gen = os.path.join(BUILD, "gen")
        spec = importlib.util.spec_from_file_location("MBIutils",
                                                      os.path.join(self.dir, "MBIutils.py"))
        self.utils = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.utils)
        self.programs = {}

    def generators(self):
        return sorted(f for f in os.listdir(self.dir) if f.endswith("Generator.py"))

    def generate(self):
        """Run every generator in build/gen/ (as SimGrid's CMakeLists does), once per tree."""
        stamp = os.path.join(self.gen, ".stamp")
        key = "\n".join([self.version] + [file_sig(os.path.join(self.dir, g))
                                          for g in self.generators() + ["generator_utils.py"]])
        if os.path.exists(stamp) and read_text(stamp) == key:
            return
        log(f"run.py: generating the MBI programs into {rel(self.gen)}/")
        shutil.rmtree(self.gen, ignore_errors=True)
        os.makedirs(self.gen)
        shutil.copy(os.path.join(self.dir, "generator_utils.py"), self.gen)
        for g in self.generators():
            p = subprocess.run([sys.executable, os.path.join(self.dir, g)], cwd=self.gen,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                log(f"run.py: generator {g} failed:\n{p.stderr.decode(errors='replace')}")
                sys.exit(EXIT_BAD_MBI)
        with open(stamp, "w") as fh:
            fh.write(key)

    def load(self):
        """name -> program description, for every generated program."""
        gen_rx = re.compile(r"generated by (\w+?)Generator\.py")
        for f in sorted(os.listdir(self.gen)):
            if not f.endswith(".c"):
                continue
            path = os.path.join(self.gen, f)
            with open(path) as fh:
                m = gen_rx.search(fh.readline())
            tests = self.utils.parse_one_code(path)
            for t in tests:
                name = f[:-2] if len(tests) == 1 else f"{f[:-2]}#{t['id']}"
                np = re.search(r"-np\s+(\d+)", t["cmd"])
                cls = self.utils.possible_details[t["detail"]]
                self.programs[name] = {
                    "name": name, "source": path, "cmd": t["cmd"], "expect": t["expect"],
                    "label": t["detail"], "class": cls,
                    "class_name": self.utils.displayed_name.get(cls, cls),
                    "np": int(np.group(1)) if np else 2,
                    "generator": m.group(1) if m else "?"}
        return self.programs

    def class_names(self):
        return dict(self.utils.displayed_name)


def make_selection(programs, path):
    rng = random.Random(SEED)
    by_class = collections.defaultdict(lambda: collections.defaultdict(dict))
    for p in programs.values():
        by_class[p["class"]][p["label"]].setdefault(p["generator"], []).append(p["name"])
    chosen = []
    for cls in sorted(by_class):
        quota = QUOTA.get(cls, 15)
        strata = {}
        for label in sorted(by_class[cls]):
            gens = {}
            for g in sorted(by_class[cls][label]):
                names = sorted(by_class[cls][label][g])
                rng.shuffle(names)
                gens[g] = names
            strata[label] = gens
        taken = []
        used = collections.Counter()
        size = {(label, g): len(strata[label][g]) for label in strata for g in strata[label]}
        while len(taken) < quota and any(any(v) for v in strata.values()):
            for label in sorted(strata):
                if len(taken) >= quota:
                    break
                gens = [g for g in sorted(strata[label]) if strata[label][g]]
                if not gens:
                    continue
                # the generator furthest behind its share, shares going as the square root of
                # the generator's program count
                g = min(gens, key=lambda g: (used[(label, g)] / size[(label, g)] ** 0.5, g))
                used[(label, g)] += 1
                taken.append(strata[label][g].pop(0))
        chosen += sorted(taken)
    with open(path, "w") as fh:
        fh.write("# MBI programs run by tests/mbi/run.py: a fixed stratified selection.\n")
        fh.write(f"# Drawn by `tests/mbi/run.py --make-selection` from the programs generated by "
                 f"SimGrid 3.32's MBI generators,\n# seed \"{SEED}\", quotas per MBI class "
                 f"{', '.join(f'{k} {v}' for k, v in QUOTA.items() if k in by_class)}\n"
                 "# (see QUOTA in run.py and tests/mbi/README.md).\n")
        fh.write("# program  class  label  np\n")
        for n in chosen:
            p = programs[n]
            fh.write(f"{n}\t{p['class']}\t{p['label']}\t{p['np']}\n")
    return chosen


def read_selection(path, programs):
    names, errors = [], []
    for lineno, raw in enumerate(read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        name = f[0]
        p = programs.get(name)
        if p is None:
            errors.append(f"{rel(path)}:{lineno}: {name} is not among the generated programs")
        elif len(f) >= 3 and (f[1] != p["class"] or f[2] != p["label"]):
            errors.append(f"{rel(path)}:{lineno}: {name} is listed as {f[1]}/{f[2]} but its "
                          f"header says {p['class']}/{p['label']}")
        else:
            names.append(name)
    return names, errors


# ------------------------------------------------------------------------------------ tools

def include_dir(smpicc):
    """The directory of the mpi.h that smpicc uses (gcc -H)."""
    p = subprocess.run([smpicc, "-E", "-H", "-x", "c", "-", "-o", os.devnull],
                       input=b"#include <mpi.h>\n", stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    for line in p.stderr.decode("utf-8", "replace").splitlines():
        m = re.match(r"^\.+ (.*/mpi\.h)$", line)
        if m:
            return os.path.abspath(m.group(1))
    return ""


class Tool:
    def __init__(self, name, title, smpicc, smpirun, build_flags, run_flags, classify, platform,
                 timeout):
        self.name, self.title = name, title
        self.smpicc, self.smpirun = smpicc, smpirun
        self.build_flags, self.run_flags = build_flags, run_flags
        self.classify = classify
        self.platform = platform
        self.timeout = timeout
        self.bindir = os.path.join(BUILD, "bin", name)
        self.logdir = os.path.join(BUILD, "logs", name)
        self.workroot = os.path.join(BUILD, "work", name)
        self.base_sig = "\n".join([file_sig(smpicc), file_sig(include_dir(smpicc)),
                                   " ".join(build_flags)])

    def build_cmd(self, src, exe):
        if self.name == "simgrid":  # MBI's order: source first, then the flags
            return [self.smpicc, src] + self.build_flags + ["-o", exe]
        return [self.smpicc] + self.build_flags + [src, "-o", exe]

    def run_cmd(self, prog, exe, tmpdir):
        extra = []
        m = re.search(r"\$\{EXE\}(.*)$", prog["cmd"])
        if m:  # program arguments after ${EXE}; MBI's SMPI runner drops $zero_buffer etc.
            extra = [a for a in shlex.split(m.group(1)) if not a.startswith("$")]
        cmd = [self.smpirun, "-platform", self.platform, "-np", str(prog["np"])]
        # SimGrid 3.32's smpirun mis-parses -tmpdir (it shifts one word, not two, so the
        # directory becomes the program); it follows $TMPDIR, which run() sets, instead.
        if self.name != "simgrid":
            cmd += ["-tmpdir", tmpdir]
        return cmd + self.run_flags + [exe] + extra

    def build(self, prog):
        """(ok, exe, log text). Cached in build/bin/<tool>/ by source and compiler."""
        os.makedirs(self.bindir, exist_ok=True)
        exe = os.path.join(self.bindir, prog["name"].replace("#", "_"))
        key = self.base_sig + "\n" + sha256_file(prog["source"])
        stamp = exe + ".stamp"
        try:
            if os.path.exists(exe) and read_text(stamp) == key:
                return True, exe, "(cached build)\n"
        except OSError:
            pass
        cmd = self.build_cmd(prog["source"], exe)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, cwd=self.bindir,
                           env=dict(os.environ, LC_ALL="C"))
        text = "$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + \
            p.stdout.decode("utf-8", "replace")
        if p.returncode != 0 or not os.path.exists(exe):
            text += f"Compilation of {prog['name']}.c raised an error (retcode: {p.returncode})\n"
            for f in (exe, stamp):
                if os.path.exists(f):
                    os.remove(f)
            return False, exe, text
        with open(stamp, "w") as fh:
            fh.write(key)
        return True, exe, text

    def run(self, prog, exe):
        """(exit code, timed out, output, seconds, command)."""
        work = os.path.join(self.workroot, prog["name"].replace("#", "_"))
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        cmd = self.run_cmd(prog, exe, work)
        outp = os.path.join(work, "output.txt")
        env = dict(os.environ, LC_ALL="C", TMPDIR=work)
        t0 = time.time()
        timed_out = False
        with open(outp, "wb") as fo:
            p = subprocess.Popen(cmd, cwd=work, env=env, stdout=fo, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = p.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, None)):
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        p.wait(timeout=grace)
                        break
                    except subprocess.TimeoutExpired:
                        continue
                rc = p.wait()
        elapsed = time.time() - t0
        out = read_capped(outp)
        shutil.rmtree(work, ignore_errors=True)
        return rc, timed_out, out, elapsed, cmd

    def do(self, prog):
        t0 = time.time()
        ok, exe, build_log = self.build(prog)
        r = {"build_time": round(time.time() - t0, 3)}
        text = build_log
        if not ok:
            r.update(outcome="build-error", evidence=tidy(first_line(build_log, r"error:"))
                     or "smpicc failed", exit=None, run_time=0.0)
        else:
            rc, to, out, el, cmd = self.run(prog, exe)
            outcome, ev = self.classify(rc, to, out)
            r.update(outcome=outcome, evidence=tidy(ev), exit=rc, run_time=round(el, 3))
            text += f"\n$ {' '.join(shlex.quote(c) for c in cmd)}\n{out}"
            text += (f"\nKilled after the {self.timeout:g} s limit\n" if to else "") + \
                f"Command return code: {rc}, elapsed time: {el:.3f}\n"
        r["verdict"] = verdict(prog["expect"], r["outcome"])
        os.makedirs(self.logdir, exist_ok=True)
        logp = os.path.join(self.logdir, prog["name"].replace("#", "_") + ".txt")
        with open(logp, "w") as fh:
            fh.write(text + f"Outcome: {r['outcome']} ({r['verdict']}), evidence: "
                     f"{r['evidence']}\n")
        r["log"] = rel(logp)
        return r


def help_texts(smpirun):
    def run(a):
        try:
            p = subprocess.run([smpirun, a], capture_output=True, text=True, timeout=30)
            return p.stdout + p.stderr
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return run("--help"), run("--help-cfg")


def our_default_flags(smpirun):
    """SIMGRID_RUN_FLAGS in the names our smpirun knows; (flags, what was left out)."""
    usage, cfg = help_texts(smpirun)
    keys = set(re.findall(r"^([a-z][\w-]*/[\w/-]+)\s", cfg, re.M))
    keys |= set(re.findall(r"also accepted as ([a-z][\w-]*/[\w/-]+)", cfg))
    flags, missing = [], []
    for k in ("smpi/finalization-barrier", "smpi/barrier-finalization"):
        if k in keys:
            flags.append(f"--cfg={k}:yes")
            break
    else:
        missing.append("smpi/finalization-barrier")
    if re.search(r"^\s*-analyze\b", usage, re.M):
        flags.append("-analyze")
    elif "smpi/pedantic" in keys:
        flags.append("--cfg=smpi/pedantic:yes")
        missing.append("-analyze")
    else:
        missing.append("-analyze (smpi/pedantic)")
    if "smpi/list-leaks" in keys:
        flags.append("--cfg=smpi/list-leaks:10")
    else:
        missing.append("smpi/list-leaks")
    if "smpi/simulate-computation" in keys:
        flags.append("--cfg=smpi/simulate-computation:no")
    else:
        missing.append("smpi/simulate-computation")
    return flags, missing


SIMGRID_BUILD_FLAGS = ["-trace-call-location", "-g", "-Wl,-znorelro", "-Wl,-znoseparate-code"]
# SimGrid's MBI runner (teshsuite/smpi/MBI/MBI.py) without the model checker (-wrapper
# simgrid-mc, model-check/max-depth), plus smpi/simulate-computation:no: the injected time of the
# code between MPI calls is measured CPU time, so with it on, which message an MPI_ANY_SOURCE
# receive gets (the message-race programs) changes from run to run, in both simulators.
SIMGRID_RUN_FLAGS = ["-analyze", "--cfg=smpi/finalization-barrier:on", "--cfg=smpi/list-leaks:10",
                     "--cfg=smpi/simulate-computation:no"]
OUR_BUILD_FLAGS = ["-g"]

HELLO = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, v = 1, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("preflight %d\n", sum);
  MPI_Finalize();
  return 0;
}
"""


def preflight(tool):
    """Build and run a trivial correct program with the tool's flags: it must end cleanly."""
    d = os.path.join(BUILD, "preflight")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "hello.c")
    with open(src, "w") as fh:
        fh.write(HELLO)
    prog = {"name": "preflight-hello", "source": src, "cmd": "mpirun -np 2 ${EXE}", "np": 2,
            "expect": "OK"}
    ok, exe, text = tool.build(prog)
    if not ok:
        return f"{tool.title}: cannot build a trivial program:\n{text}"
    rc, to, out, el, cmd = tool.run(prog, exe)
    outcome, ev = tool.classify(rc, to, out)
    if outcome != "ok" or "preflight 2" not in out:
        return (f"{tool.title}: a trivial correct program does not end cleanly ({outcome}):\n$ "
                + " ".join(shlex.quote(c) for c in cmd) + "\n" + out[-3000:])
    return None


# ------------------------------------------------------------------------------------ tables

CLASS_ORDER = ["AInvalidParam", "BResLeak", "BReqLifecycle", "BLocalConcurrency", "CMatch",
               "DMatch", "DRace", "DGlobalConcurrency", "EBufferingHazard"]


def no_verdict_cell(rs):
    c = collections.Counter(r["outcome"] for r in rs if r["verdict"] == "no verdict")
    if not c:
        return "0"
    return f"{sum(c.values())} (" + ", ".join(f"{SHORT[k]} {v}" for k, v in
                                              sorted(c.items(), key=lambda kv: -kv[1])) + ")"


def class_table(progs, tools, names):
    """Markdown lines: per MBI class, buggy programs, flagged and missed per tool; then the
    correct programs."""
    head = ["MBI class", "buggy programs"]
    for t in tools:
        head.append(f"{t['title']}: flagged")
    for t in tools:
        head.append(f"{t['title']}: missed")
    for t in tools:
        head.append(f"{t['title']}: no verdict")
    lines = ["| " + " | ".join(head) + " |",
             "|---|" + "---:|" * (len(head) - 1)]
    classes = [c for c in CLASS_ORDER if any(p["class"] == c for p in progs)]
    classes += sorted({p["class"] for p in progs} - set(CLASS_ORDER) - {"FOK"})
    rows = [(f"{names.get(c, c)} ({c})", [p for p in progs if p["class"] == c]) for c in classes]
    rows.append(("**all buggy programs**", [p for p in progs if p["expect"] == "ERROR"]))
    for title, ps in rows:
        if not ps:
            continue
        cells = [title, str(len(ps))]
        for t in tools:
            cells.append(str(sum(p[t["name"]]["verdict"] == "TP" for p in ps)))
        for t in tools:
            cells.append(str(sum(p[t["name"]]["verdict"] == "FN" for p in ps)))
        for t in tools:
            cells.append(no_verdict_cell([p[t["name"]] for p in ps]))
        lines.append("| " + " | ".join(cells) + " |")
    ok = [p for p in progs if p["expect"] == "OK"]
    if ok:
        lines.append("")
        head = ["correct programs", "programs"] + [t["title"] for t in tools]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|---|" + "---:|" * (len(head) - 1))
        lines.append("| clean (true negatives) | " + str(len(ok)) + " | " + " | ".join(
            str(sum(p[t["name"]]["verdict"] == "TN" for p in ok)) for t in tools) + " |")
        lines.append("| **flagged (false positives)** | | " + " | ".join(
            str(sum(p[t["name"]]["verdict"] == "FP" for p in ok)) for t in tools) + " |")
        lines.append("| no verdict | | " + " | ".join(
            no_verdict_cell([p[t["name"]] for p in ok]) for t in tools) + " |")
    return lines


def label_table(progs, tools):
    head = ["MBI label", "class", "buggy programs"] + [f"{t['title']}: flagged" for t in tools] \
        + [f"{t['title']}: no verdict" for t in tools]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    labels = sorted({(p["class"], p["label"]) for p in progs if p["expect"] == "ERROR"})
    for cls, label in labels:
        ps = [p for p in progs if p["label"] == label]
        cells = [label, cls, str(len(ps))]
        cells += [str(sum(p[t["name"]]["verdict"] == "TP" for p in ps)) for t in tools]
        cells += [no_verdict_cell([p[t["name"]] for p in ps]) for t in tools]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def outcome_table(progs, tools):
    head = ["outcome", "meaning"] + [f"{t['title']}: buggy" for t in tools] + \
        [f"{t['title']}: correct" for t in tools]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for o, meaning in OUTCOMES.items():
        cells = [f"`{o}`", meaning]
        counts = []
        for exp in ("ERROR", "OK"):
            for t in tools:
                counts.append(sum(p["expect"] == exp and p[t["name"]]["outcome"] == o
                                  for p in progs))
        if any(counts):
            lines.append("| " + " | ".join(cells + [str(c) for c in counts]) + " |")
    return lines


def gaps(progs, ours="ours", other="simgrid", top=8):
    """Labels where the other tool flags programs we do not: [(label, class, [names])]."""
    by = collections.defaultdict(list)
    for p in progs:
        if p["expect"] == "ERROR" and p[other]["verdict"] == "TP" and p[ours]["verdict"] != "TP":
            by[(p["class"], p["label"])].append(p["name"])
    return sorted(((l, c, ns) for (c, l), ns in by.items()), key=lambda x: (-len(x[2]), x[0]))[:top]


def program_table(progs, tools):
    head = ["program", "class", "label", "np"] + [t["title"] for t in tools]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|---:|" + "---|" * len(tools)]
    order = {c: i for i, c in enumerate(CLASS_ORDER + ["FOK"])}
    for p in sorted(progs, key=lambda p: (order.get(p["class"], 99), p["label"], p["name"])):
        cells = [f"`{p['name']}`", p["class"], p["label"] if p["expect"] == "ERROR" else "OK",
                 str(p["np"])]
        for t in tools:
            r = p[t["name"]]
            ev = (r.get("evidence") or "").replace("|", "\\|")
            ev = re.sub(r"\s+", " ", ev)
            if len(ev) > 110:
                ev = ev[:107] + "..."
            cells.append(f"**{r['verdict']}** {r['outcome']}" + (f": {ev}" if ev else ""))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


# ------------------------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(
        description="Run the fixed MBI selection under our smpirun (and SimGrid's with "
                    "--simgrid) and score the misuse each run reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done; 1 our simulator flagged a correct program; 2 usage error or "
               "stale selection; 3 a tool is missing or fails a trivial program; 4 MBI could not "
               "be fetched; 5 the fetched MBI tree or a generator is broken.\nSee tests/mbi/README.md for the classification rules.")
    ap.add_argument("--simgrid", action="store_true",
                    help="also run SimGrid 3.32's smpicc/smpirun (side-by-side table)")
    ap.add_argument("--simgrid-only", action="store_true", help="run SimGrid's tools only")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="programs run at once (default 2)")
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN",
                    help="programs whose name, MBI label or class matches a glob pattern "
                         "(comma-separated, repeatable), e.g. 'ResLeak_*', RootMatching, CMatch")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="wall-clock limit per run, seconds (default 10; the slowest run takes 0.3 s)")
    ap.add_argument("--json", metavar="FILE", help="write per-program results as JSON")
    ap.add_argument("--results", metavar="FILE",
                    help="Markdown report (default: tests/mbi/results.md, full selection only)")
    ap.add_argument("--no-results", action="store_true", help="do not write the Markdown report")
    ap.add_argument("--no-cache", action="store_true",
                    help="do not show a tool's column from its previous run when it is not run")
    ap.add_argument("--smpicc", default=os.path.join(REPO, "target", "release", "smpicc"),
                    help="our smpicc (default target/release/smpicc)")
    ap.add_argument("--smpirun", default=os.path.join(REPO, "target", "release", "smpirun"),
                    help="our smpirun (default target/release/smpirun)")
    ap.add_argument("--our-flags", metavar="FLAGS",
                    help="smpirun flags for our runs, as one word: --our-flags='...' (default: "
                         "SimGrid's MBI flags in the names our smpirun knows)")
    ap.add_argument("--simgrid-bin", default="/usr/bin", metavar="DIR",
                    help="directory of SimGrid's smpicc and smpirun (default /usr/bin)")
    ap.add_argument("--simgrid-flags", metavar="FLAGS", default=" ".join(SIMGRID_RUN_FLAGS),
                    help="smpirun flags for SimGrid, as one word: --simgrid-flags='...' "
                         "(default: %(default)s)")
    ap.add_argument("--selection", default=SELECTION, help="selection file (default tests/mbi/selection.txt)")
    ap.add_argument("--make-selection", action="store_true",
                    help="draw the stratified selection again into --selection and exit")
    ap.add_argument("--list", action="store_true", help="list the selected programs and exit")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per program")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.timeout <= 0:
        ap.error("--timeout must be positive")
    args.smpicc = os.path.abspath(args.smpicc)
    args.smpirun = os.path.abspath(args.smpirun)

    # --- MBI: fetch, generate, parse
    if not os.path.exists(os.path.join(BUILD, "src", "MBI_TREE")):
        log("run.py: MBI sources missing, running tests/mbi/fetch.sh")
        rc = subprocess.run([os.path.join(HERE, "fetch.sh")]).returncode
        if rc == 1:  # download or checksum failure
            log(f"run.py: MBI unavailable: tests/mbi/fetch.sh failed (exit {rc})")
            return EXIT_NO_MBI
        if rc != 0:
            log(f"run.py: tests/mbi/fetch.sh failed (exit {rc})")
            return EXIT_BAD_MBI
    mbi = Mbi()
    mbi.generate()
    programs = mbi.load()
    names = mbi.class_names()
    if args.make_selection:
        chosen = make_selection(programs, args.selection)
        c = collections.Counter(programs[n]["class"] for n in chosen)
        print(f"wrote {rel(os.path.abspath(args.selection))}: {len(chosen)} programs ("
              + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + ")")
        return 0
    if not os.path.exists(args.selection):
        log(f"run.py: {args.selection} missing (run.py --make-selection draws one)")
        return EXIT_USAGE
    selected, errors = read_selection(args.selection, programs)
    if errors:
        log("run.py: the selection does not match the generated programs (another MBI "
            "version?):\n  " + "\n  ".join(errors[:20]))
        return EXIT_USAGE
    pats = [p for o in args.only for p in o.split(",") if p]
    if pats:
        selected = [n for n in selected if any(
            fnmatch.fnmatchcase(n, pat) or fnmatch.fnmatchcase(programs[n]["label"], pat)
            or fnmatch.fnmatchcase(programs[n]["class"], pat) for pat in pats)]
    if not selected:
        log("run.py: no program selected")
        return EXIT_USAGE
    full = not pats
    if args.list:
        for n in selected:
            p = programs[n]
            print(f"{n}\t{p['class']}\t{p['label']}\t{p['np']}")
        return 0

    # --- tools
    os.makedirs(BUILD, exist_ok=True)
    platform = os.path.join(BUILD, "cluster.xml")
    with open(platform, "w") as fh:  # the platform of MBI's SimGrid runners
        fh.write("<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n"
                 " <cluster id=\"acme\" prefix=\"node-\" radical=\"0-99\" suffix=\"\" "
                 "speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\"/>\n</platform>\n")
    tools = []
    meta_tools = {}
    if not args.simgrid_only:
        for t in (args.smpicc, args.smpirun):
            if not os.access(t, os.X_OK):
                log(f"run.py: {t} not found: cargo build --release -p smpi-shim")
                return EXIT_TOOL
        if args.our_flags is not None:
            flags, missing = shlex.split(args.our_flags), []
        else:
            flags, missing = our_default_flags(args.smpirun)
        tools.append(Tool("ours", "ours", args.smpicc, args.smpirun, OUR_BUILD_FLAGS, flags,
                          classify_ours, platform, args.timeout))
        meta_tools["ours"] = {"smpicc": rel(args.smpicc), "smpirun": rel(args.smpirun),
                              "build_flags": OUR_BUILD_FLAGS, "run_flags": flags,
                              "left_out_flags": missing}
        if missing:
            log("run.py: our smpirun does not know " + ", ".join(missing)
                + " (SimGrid's MBI flags); running without")
    if args.simgrid or args.simgrid_only:
        sg_cc = os.path.join(args.simgrid_bin, "smpicc")
        sg_run = os.path.join(args.simgrid_bin, "smpirun")
        for t in (sg_cc, sg_run):
            if not os.access(t, os.X_OK):
                log(f"run.py: {t} not found (apt-get install libsimgrid-dev)")
                return EXIT_TOOL
        flags = shlex.split(args.simgrid_flags)
        tools.append(Tool("simgrid", "SimGrid 3.32", sg_cc, sg_run, SIMGRID_BUILD_FLAGS, flags,
                          classify_simgrid, platform, args.timeout))
        meta_tools["simgrid"] = {"smpicc": sg_cc, "smpirun": sg_run,
                                 "build_flags": SIMGRID_BUILD_FLAGS, "run_flags": flags}
    for t in tools:
        err = preflight(t)
        if err:
            log("run.py: pre-flight failed: " + err)
            return EXIT_TOOL

    # --- runs
    progs = [dict(programs[n]) for n in selected]
    is_tty = sys.stderr.isatty()
    phase_wall = {}
    for tool in tools:
        lock = threading.Lock()
        done = [0]
        tally = collections.Counter()
        last = [0.0]
        t_start = time.time()

        def one(p, tool=tool, lock=lock, done=done, tally=tally, last=last, t_start=t_start):
            r = tool.do(p)
            p[tool.name] = r
            with lock:
                done[0] += 1
                tally[r["verdict"]] += 1
                line = (f"[{done[0]:3}/{len(progs)}] {tool.title}: {time.time() - t_start:6.1f} s"
                        f" | flagged {tally['TP']} missed {tally['FN']} | correct: clean "
                        f"{tally['TN']} flagged {tally['FP']} | no verdict {tally['no verdict']}")
                if args.verbose:
                    log(f"{line} | {p['name']}: {r['outcome']} ({r['verdict']}) "
                        f"{r.get('evidence') or ''}"[:300])
                elif not args.quiet:
                    now = time.time()
                    if is_tty:
                        sys.stderr.write("\r" + line[:150] + "   ")
                        sys.stderr.flush()
                    elif now - last[0] > 10 or done[0] == len(progs):
                        last[0] = now
                        log(line)

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for f in [ex.submit(one, p) for p in progs]:
                f.result()
        if is_tty and not args.quiet and not args.verbose:
            sys.stderr.write("\n")
        phase_wall[tool.name] = time.time() - t_start
        shutil.rmtree(tool.workroot, ignore_errors=True)

    # --- the other tool's column from its previous run, when it was not run now
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    sel_hash = hashlib.sha256("\n".join(selected).encode()).hexdigest()[:16]
    columns = [{"name": t.name, "title": t.title} for t in tools]
    cache_note = []
    for t in tools:
        if full:
            with open(os.path.join(BUILD, f"last-{t.name}.json"), "w") as fh:
                json.dump({"date": now, "selection": sel_hash, "wall": phase_wall[t.name],
                           "tool": meta_tools[t.name],
                           "results": {p["name"]: p[t.name] for p in progs}}, fh)
    if not args.no_cache:
        for name, title in (("ours", "ours"), ("simgrid", "SimGrid 3.32")):
            if any(c["name"] == name for c in columns):
                continue
            path = os.path.join(BUILD, f"last-{name}.json")
            if not os.path.exists(path):
                continue
            cached = json.loads(read_text(path))
            if not all(p["name"] in cached["results"] for p in progs):
                continue
            for p in progs:
                p[name] = cached["results"][p["name"]]
            meta_tools[name] = dict(cached.get("tool", {}), cached_from=cached["date"])
            columns.append({"name": name, "title": title})
            cache_note.append(f"{title}: results of its run of {cached['date']} "
                              f"(build/last-{name}.json)")
    columns.sort(key=lambda c: c["name"] != "ours")

    # --- report
    ctab = class_table(progs, columns, names)
    print()
    print("\n".join(ctab))
    for n in cache_note:
        print(f"\n{n}")
    tops = gaps(progs) if {"ours", "simgrid"} <= {c["name"] for c in columns} else []
    if tops:
        print("\nwhere SimGrid flags and we do not (label: count, examples):")
        for label, cls, ns in tops:
            print(f"  {label} ({cls}): {len(ns)}: {', '.join(ns[:3])}")
    for t in tools:
        print(f"\n{t.title}: {len(progs)} programs in {phase_wall[t.name]:.1f} s wall "
              f"(--jobs {args.jobs}, timeout {args.timeout:g} s)")

    commit, dirty = git_info()
    meta = {"command": "tests/mbi/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
            "date": now, "commit": commit, "dirty": dirty, "mbi": f"SimGrid {mbi.version} "
            f"teshsuite/smpi/MBI (Debian source package)", "selection": rel(args.selection),
            "selected": len(progs), "platform": "build/cluster.xml (MBI's: 100-host cluster, "
            "1Gf, 125MBps, 50us)", "timeout": args.timeout, "jobs": args.jobs,
            "wall": {k: round(v, 1) for k, v in phase_wall.items()}, "tools": meta_tools,
            "cached": cache_note}
    results = None if args.no_results else args.results
    if results is None and full and not args.no_results:
        results = os.path.join(HERE, "results.md")
    if results:
        write_markdown(results, progs, columns, names, meta, ctab)
        print(f"\nwrote {rel(os.path.abspath(results))}")
    if args.json:
        data = {"meta": meta, "outcomes": OUTCOMES, "detections": list(DETECTIONS),
                "programs": [{k: v for k, v in p.items() if k != "source"} for p in progs]}
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)
        print(f"wrote {args.json}")
    if "ours" in phase_wall and any(p["ours"]["verdict"] == "FP" for p in progs):
        fps = [p["name"] for p in progs if p["ours"]["verdict"] == "FP"]
        print(f"\nrun.py: our simulator flagged {len(fps)} correct program(s): "
              + ", ".join(fps[:10]))
        return EXIT_FP
    return 0


def write_markdown(path, progs, columns, names, meta, ctab):
    L = ["# MBI results (per program)", "",
         "Generated by `tests/mbi/run.py`; the rules are in `tests/mbi/README.md`.", "",
         f"- date: {meta['date']}; commit {meta['commit']}{' (with local changes)' if meta['dirty'] else ''}",
         f"- command: `{meta['command']}`",
         f"- MBI: {meta['mbi']}; selection: `{meta['selection']}` ({meta['selected']} programs)",
         f"- platform: {meta['platform']}; wall-clock limit {meta['timeout']:g} s per run"]
    for c in columns:
        t = meta["tools"].get(c["name"], {})
        line = (f"- {c['title']}: `{' '.join(['smpicc'] + t.get('build_flags', []))}`, "
                f"`{' '.join(['smpirun', '-platform cluster.xml -np N'] + t.get('run_flags', []))}`")
        if t.get("left_out_flags"):
            line += f" (not known to this smpirun: {', '.join(t['left_out_flags'])})"
        if c["name"] in meta["wall"]:
            line += f"; {meta['wall'][c['name']]} s wall with --jobs {meta['jobs']}"
        if t.get("cached_from"):
            line += f"; results of its run of {t['cached_from']}"
        L.append(line)
    L += ["", "## Per class", ""] + ctab
    L += ["", "## Per MBI label", ""] + label_table(progs, columns)
    L += ["", "## Outcomes", ""] + outcome_table(progs, columns)
    if {"ours", "simgrid"} <= {c["name"] for c in columns}:
        tops = gaps(progs, top=100)
        if tops:
            L += ["", "## Where SimGrid flags and we do not", ""]
            for label, cls, ns in tops:
                L.append(f"- {label} ({cls}): {len(ns)}: " + ", ".join(f"`{n}`" for n in ns))
        rev = gaps(progs, ours="simgrid", other="ours", top=100)
        if rev:
            L += ["", "## Where we flag and SimGrid does not", ""]
            for label, cls, ns in rev:
                L.append(f"- {label} ({cls}): {len(ns)}: " + ", ".join(f"`{n}`" for n in ns))
    L += ["", "## Programs", "",
          "Verdict (TP flagged, FN missed, TN clean, FP false positive, no verdict), outcome, "
          "and the line of the output that decided it.", ""]
    L += program_table(progs, columns)
    with open(path, "w") as fh:
        fh.write("\n".join(L) + "\n")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("run.py: interrupted")
        sys.exit(130)
