#!/usr/bin/env python3
"""Run the MPICH 4.0.2 test suite (test/mpi) against our simulator (smpicc + smpirun).

    tests/mpich/run.py --keep-going            # full selection, writes tests/mpich/results.md
    tests/mpich/run.py --fast                  # ~40 quick tests for CI (exit 0 iff all pass)
    tests/mpich/run.py --only coll/allred -v   # one program, show command and output

MPICH's configure is NOT run: every test is compiled with smpicc from its .c file(s) (as named
by the directory's Makefile.am) and linked with an archive of util/mtest.c, util/mtest_common.c,
util/mtest_single.c and util/dtypes.c. The configure results live in the hand-written
tests/mpich/mpitestconf.h. Tests are described by each directory's testlist(.in); tests that need
a feature we declare absent (FEATURES below) are "left out" and counted with their reason.

Standard library only. See tests/mpich/README.md.
"""

import argparse
import collections
import concurrent.futures
import datetime
import fnmatch
import hashlib
import json
import os
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
BUILD = os.path.join(HERE, "build")

DEFAULT_DIRS = ["pt2pt", "coll", "datatype", "comm", "group", "topo", "init", "attr", "rma", "io"]
UTIL_SOURCES = ["mtest.c", "mtest_common.c", "mtest_single.c", "dtypes.c"]
# -O0: some tests (coll/allred.c) take 30+ s to compile with optimisation.
CFLAGS = ["-O0", "-g", "-Werror=implicit-function-declaration"]

# Features that MPICH's configure would detect, and whether our simulator has them. A test that
# needs an absent feature is left out (not built, not run). --with FEATURE turns one on.
FEATURES = {
    "rma": True,  # one-sided communication (MPI_Win_*, MPI_Put, ...)
    "io": True,  # MPI-IO (MPI_File_*)
    "spawn": False,  # dynamic processes (MPI_Comm_spawn, ports, name publishing)
    "sessions": False,  # MPI-4 sessions (MPI_Session_*)
    "partitioned": False,  # MPI-4 partitioned communication (MPI_Psend_init, ...)
    "threads": False,  # tests that start threads
    "dtpools": False,  # MPICH's datatype pool library (dtpools/)
    "fortran-cxx": False,  # Fortran or C++ sources
    "largetest": False,  # configure --enable-large-tests (@largetest@ lines)
    "namepub": False,  # name publishing (@namepub_tests@)
    "mpix": False,  # MPICH's MPIX_ extensions (mpix=true)
    "nonstrict": False,  # tests of non-standard behaviour (strict=false)
}

LEFT_OUT_LABEL = {
    "rma": "one-sided/RMA",
    "io": "MPI-IO",
    "spawn": "dynamic processes/spawn",
    "sessions": "MPI-4 sessions",
    "partitioned": "MPI-4 partitioned",
    "threads": "threads",
    "dtpools": "dtpools",
    "fortran-cxx": "Fortran/C++",
    "largetest": "large test (@largetest@)",
    "namepub": "name publishing",
    "mpix": "MPIX extension",
    "nonstrict": "non-strict (strict=false)",
    "mem": "memory (mem=)",
    "mpiversion": "newer MPI version",
    "nosource": "no source",
    "subst": "configure substitution",
}

# Calls that reveal a feature, looked for in the test's own (preprocessed) code.
FEATURE_PATTERNS = [
    ("rma", re.compile(r"\bMPI_(Win_\w+|Put|Get|Accumulate|Get_accumulate|Fetch_and_op|"
                       r"Compare_and_swap|Rput|Rget|Raccumulate|Rget_accumulate)\b")),
    ("io", re.compile(r"\bMPI_(File_\w+|Register_datarep)\b")),
    ("spawn", re.compile(r"\bMPI_(Comm_spawn\w*|Comm_get_parent|Open_port|Close_port|"
                         r"Comm_accept|Comm_connect|Comm_join|Publish_name|Unpublish_name|"
                         r"Lookup_name)\b")),
    ("sessions", re.compile(r"\bMPI_(Session_\w+|Group_from_session_pset|"
                            r"Comm_create_from_group|Intercomm_create_from_groups)\b")),
    ("partitioned", re.compile(r"\bMPI_(Psend_init|Precv_init|Pready\w*|Parrived)\b")),
    ("threads", re.compile(r"\b(MTest_Start_thread|MTest_Join_threads|pthread_create|"
                           r"MTest_thread_\w+)\s*\(")),
    ("dtpools", re.compile(r"\b(DTP_[a-z]\w*|MTest_dtp_\w+)\s*\(")),
]

# --fast: a fixed subset of quick tests (dir/program np [args]), chosen from the full run:
# they pass today and each takes well under a second. Keep it around 40 entries.
FAST = [
    "pt2pt/sendrecv2 2", "pt2pt/sendall 4", "pt2pt/anyall 2", "pt2pt/bottom 2",
    "pt2pt/bsend1 1", "pt2pt/isendself 1", "pt2pt/isendirecv 10", "pt2pt/inactivereq 1",
    "pt2pt/waittestnull 1", "pt2pt/recv_any 2",
    "coll/allredmany 4", "coll/bcasttest 4", "coll/coll2 5", "coll/gatherv 5",
    "coll/redscat 4", "coll/red_scat_block 4", "coll/scantst 4", "coll/exscan2 5",
    "coll/opsum 4", "coll/iallred 2", "coll/ibarrier 2",
    "datatype/lbub 1", "datatype/simple_pack 1", "datatype/struct_pack 1",
    "datatype/typecommit 1", "datatype/sendrecvt2 2", "datatype/subarray 2",
    "comm/dup 2", "comm/commcreate1 8", "comm/cmsplit 4", "comm/ic1 4",
    "group/groupcreate 4", "group/gtranks 8",
    "topo/cartshift1 4", "topo/dims1 4", "topo/topotest 4",
    "init/version 1", "init/finalized 1", "init/exitst1 2",
    "attr/attrt 2", "attr/attrorder 1", "attr/fkeyval 1",
    "rma/putfidx 4", "rma/accfence2 4", "rma/test2 2", "rma/lockcontention 3", "rma/wintest 2",
    "rma/fetchandadd 7", "rma/win_shared 4", "rma/compare_and_swap 4", "rma/win_dynamic_acc 4",
    "rma/rget_unlock 2",
    "io/rdwrord 4", "io/async 4", "io/setviewcur 4", "io/i_noncontig_coll 2", "io/userioerr 1",
]

CATEGORIES = ["compile error", "link/load error", "crash", "timeout", "deadlock", "MPI error",
              "wrong output", "non-zero exit", "smpirun error"]
# "smpirun error": smpirun refused to start (bad option, broken build): not the test's fault.
# After BROKEN_LIMIT of them in a row the run stops and no report is written.
BROKEN_LIMIT = 5

MPI_SYMBOL = re.compile(r"^P?MPIX?_\w+$")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rel(path):
    return os.path.relpath(path, REPO)


# ------------------------------------------------------------------------------------ testlists

class Entry:
    """One line of a testlist: a program run with np processes, args and env."""

    def __init__(self, d, prog, np, line, lineno):
        self.dir = d
        self.prog = prog
        self.np = np
        self.line = line
        self.lineno = lineno
        self.args = []
        self.env = []
        self.opts = {}  # timeLimit, xfail, mem, resultTest, strict, mpix, mpiversion, ...
        self.left_out = None  # (key, detail)
        self.result = None  # filled by run

    @property
    def name(self):
        return f"{self.dir}/{self.prog}"

    @property
    def label(self):
        s = f"{self.name} {self.np}"
        if self.args:
            s += " " + " ".join(self.args)
        if self.env:
            s += " [" + " ".join(self.env) + "]"
        return s


def substitution(name):
    """Value configure gives @name@ in testlists for our feature set: (text, left-out key)."""
    table = {
        "largetest": "largetest", "namepub_tests": "namepub", "rmadir": "rma",
        "spawndir": "spawn", "iodir": "io", "partdir": "partitioned",
        "threadsdir": "threads", "f77dir": "fortran-cxx", "f90dir": "fortran-cxx",
        "f08dir": "fortran-cxx", "cxxdir": "fortran-cxx",
    }
    key = table.get(name)
    if key and FEATURES.get(key):
        return "", None
    return "#", key or "subst"


def parse_testlist(testdir, d):
    path = None
    for f in ("testlist.in", "testlist"):
        p = os.path.join(testdir, d, f)
        if os.path.exists(p):
            path = p
            break
    if path is None:
        log(f"run.py: no testlist in {d}")
        return []
    entries = []
    with open(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            left = None
            m = re.match(r"^\s*@(\w+)@(.*)$", line)
            if m:
                text, key = substitution(m.group(1))
                if text == "#":
                    left = (key, f"@{m.group(1)}@")
                line = m.group(2)
            line = re.sub(r"@(\w+)@", "", line)
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("!"):
                continue
            toks = line.split()
            prog = toks[0]
            np = int(toks[1]) if len(toks) > 1 and toks[1].isdigit() else 1
            e = Entry(d, prog, np, raw.strip(), lineno)
            for t in toks[2:]:
                if "=" not in t:
                    continue  # runtests ignores stray words
                k, v = t.split("=", 1)
                if k == "arg":
                    e.args.append(v)
                elif k == "env":
                    e.env.append(v)
                elif k == "xfail":
                    e.opts.setdefault("xfail", []).append(v)
                else:
                    e.opts[k] = v
            e.left_out = left
            entries.append(e)
    return entries


def parse_dtp_config(testdir, dirs):
    """The dtpools tests of maint/dtp-test-config.txt (MPICH's autogen turns each line into a
    testlist.dtp with one run per datatype and count); one left-out entry per line."""
    path = os.path.join(testdir, "maint", "dtp-test-config.txt")
    entries = []
    if FEATURES["dtpools"] or not os.path.exists(path):
        return entries
    for lineno, raw in enumerate(open(path), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split(":")
        if len(f) < 5 or os.path.dirname(f[0]) not in dirs:
            continue
        d, prog = os.path.dirname(f[0]), os.path.basename(f[0])
        np = int(f[4]) if f[4].isdigit() else 1
        e = Entry(d, prog, np, "testlist.dtp: " + line, 10000 + lineno)
        e.args = ["(testlist.dtp, counts " + f[2] + ")"]
        e.left_out = ("dtpools", "generated testlist.dtp")
        entries.append(e)
    return entries


def parse_makefile_am(path):
    """prog -> {'sources': [...], 'cppflags': [...], 'ldadd': [...]} from an automake file."""
    info = collections.defaultdict(dict)
    if not os.path.exists(path):
        return info
    text = open(path).read().replace("\\\n", " ")
    for line in text.splitlines():
        m = re.match(r"^\s*(\w+?)_(SOURCES|CPPFLAGS|LDADD)\s*=\s*(.*)$", line)
        if not m:
            continue
        prog, kind, val = m.groups()
        words = [w for w in val.split() if not w.startswith("$(")]
        if kind == "SOURCES":
            info[prog]["sources"] = words
        elif kind == "CPPFLAGS":
            info[prog]["cppflags"] = words
        else:
            info[prog]["ldadd"] = words
    return info


# ------------------------------------------------------------------------------------ building

def file_sig(path):
    try:
        st = os.stat(path)
        return f"{path}:{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        return f"{path}:missing"


def tree_sig(path):
    sigs = []
    for root, _dirs, files in os.walk(path):
        for f in sorted(files):
            sigs.append(file_sig(os.path.join(root, f)))
    return "\n".join(sorted(sigs))


def run_cmd(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def parse_compile_errors(out):
    """(missing symbols [(name, kind)], first error line, other errors?) from gcc's output."""
    missing = []
    first = None
    other = False
    for line in out.splitlines():
        if "error:" not in line:
            continue
        msg = line.split("error:", 1)[1].strip()
        if first is None:
            first = line.strip()
        q = r"[‘'`\"]([A-Za-z_]\w*)[’'`\"]"
        m = re.search(r"implicit declaration of function " + q, msg)
        if m:
            missing.append((m.group(1), "function"))
            continue
        m = re.search(q + r" undeclared", msg)
        if m:
            missing.append((m.group(1), "constant"))
            continue
        m = re.search(r"unknown type name " + q, msg)
        if m:
            missing.append((m.group(1), "type"))
            continue
        if re.search(r"some warnings being treated as errors", line):
            continue
        other = True
    seen = set()
    uniq = []
    for s in missing:
        if s[0] not in seen:
            seen.add(s[0])
            uniq.append(s)
    return uniq, first, other


class Builder:
    def __init__(self, args, testdir):
        self.args = args
        self.testdir = testdir
        self.smpicc = args.smpicc
        self.objroot = os.path.join(BUILD, "obj")
        self.env = dict(os.environ, LC_ALL="C", LANG="C")
        inc = smpi_include_dir(self.smpicc)
        self.base_sig = "\n".join([
            file_sig(self.smpicc), tree_sig(inc), file_sig(os.path.join(HERE, "mpitestconf.h")),
            " ".join(CFLAGS)])
        self.includes = ["-I" + HERE, "-I" + os.path.join(testdir, "include"),
                         "-I" + os.path.join(testdir, "dtpools", "include")]
        self.makefiles = {}
        self.lock = threading.Lock()
        self.prog_locks = collections.defaultdict(threading.Lock)
        self.cache = {}
        self.util = None
        self.exported = None

    def makefile(self, d):
        if d not in self.makefiles:
            self.makefiles[d] = parse_makefile_am(os.path.join(self.testdir, d, "Makefile.am"))
        return self.makefiles[d]

    def spec(self, d, prog):
        info = self.makefile(d).get(prog, {})
        srcs = info.get("sources") or [prog + ".c"]
        return ([os.path.join(self.testdir, d, s) for s in srcs], info.get("cppflags", []),
                [w for w in info.get("ldadd", []) if w.startswith("-l")])

    def stamp_ok(self, stamp, key, product):
        try:
            return os.path.exists(product) and open(stamp).read() == key
        except OSError:
            return False

    def exported_symbols(self):
        """MPI symbols smpirun exports to the programs it loads."""
        if self.exported is None:
            rc, out = run_cmd(["nm", "-D", "--defined-only", self.args.smpirun])
            self.exported = set()
            if rc == 0:
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 3 and MPI_SYMBOL.match(parts[2]):
                        self.exported.add(parts[2])
        return self.exported

    def build_util(self):
        """Build util/*.c once into build/obj/util/libmtest.a. Returns (ok, log)."""
        if self.util is not None:
            return self.util
        outdir = os.path.join(self.objroot, "util")
        os.makedirs(outdir, exist_ok=True)
        lib = os.path.join(outdir, "libmtest.a")
        srcs = [os.path.join(self.testdir, "util", s) for s in UTIL_SOURCES
                if os.path.exists(os.path.join(self.testdir, "util", s))]
        key = self.base_sig + "\n" + "\n".join(file_sig(s) for s in srcs)
        stamp = lib + ".stamp"
        if self.stamp_ok(stamp, key, lib):
            self.util = (True, "", lib)
            return self.util
        logs = []
        objs = []
        for s in srcs:
            o = os.path.join(outdir, os.path.basename(s)[:-2] + ".o")
            # util code is compiled leniently: calls to functions we lack become undefined
            # references, resolved lazily (a test fails only if it reaches one).
            cmd = [self.smpicc, "-c", "-O0", "-g", "-w"] + self.includes + [s, "-o", o]
            rc, out = run_cmd(cmd, env=self.env)
            logs.append(" ".join(cmd) + "\n" + out)
            if rc != 0:
                self.util = (False, "\n".join(logs), lib)
                return self.util
            objs.append(o)
        if os.path.exists(lib):
            os.unlink(lib)
        rc, out = run_cmd(["ar", "rcs", lib] + objs)
        if rc != 0:
            self.util = (False, out, lib)
            return self.util
        open(stamp, "w").write(key)
        self.util = (True, "\n".join(logs), lib)
        return self.util

    def build(self, d, prog):
        """Compile and link one program. Returns a dict with status and diagnostics (cached)."""
        k = (d, prog)
        with self.prog_locks[k]:
            if k in self.cache:
                return self.cache[k]
            r = self._build(d, prog)
            self.cache[k] = r
            return r

    def _build(self, d, prog):
        srcs, cppflags, libs = self.spec(d, prog)
        outdir = os.path.join(self.objroot, d)
        os.makedirs(outdir, exist_ok=True)
        exe = os.path.join(outdir, prog)
        logf = os.path.join(outdir, prog + ".build.log")
        res = {"ok": False, "exe": exe, "log": rel(logf), "missing": [], "first": None,
               "unresolved": [], "time": 0.0}
        ok_util, util_log, lib = self.build_util()
        if not ok_util:
            missing, first, _ = parse_compile_errors(util_log)
            res.update(first="util: " + (first or "build failed"), missing=missing)
            open(logf, "w").write(util_log)
            return res
        key = "\n".join([self.base_sig, file_sig(lib), " ".join(cppflags + libs)] +
                        [file_sig(s) for s in srcs])
        stamp = exe + ".stamp"
        t0 = time.time()
        if self.stamp_ok(stamp, key, exe) or self.stamp_ok(stamp, key, logf + ".failed"):
            saved = json.load(open(exe + ".json"))
            saved["time"] = 0.0
            return saved
        for f in (exe, logf + ".failed"):
            if os.path.exists(f):
                os.unlink(f)
        logs = []
        objs = []
        failed = False
        for s in srcs:
            o = os.path.join(outdir, prog + "." + os.path.basename(s)[:-2] + ".o")
            cmd = [self.smpicc, "-c"] + CFLAGS + self.includes + cppflags + [s, "-o", o]
            rc, out = run_cmd(cmd, cwd=outdir, env=self.env)
            logs.append("$ " + " ".join(cmd) + "\n" + out)
            if rc != 0:
                missing, first, _ = parse_compile_errors(out)
                res.update(missing=missing, first=first or out.strip().splitlines()[-1:] or None,
                           stage="compile")
                if isinstance(res["first"], list):
                    res["first"] = res["first"][0] if res["first"] else "compile failed"
                failed = True
                break
            objs.append(o)
        if not failed:
            # MPI functions the test calls that are declared in mpi.h but not exported by
            # smpirun (they fail at run time only if reached: lazy binding).
            exported = self.exported_symbols()
            unresolved = set()
            for o in objs:
                rc, out = run_cmd(["nm", "-u", o])
                for line in out.splitlines():
                    sym = line.split()[-1] if line.split() else ""
                    if MPI_SYMBOL.match(sym) and exported and sym not in exported:
                        unresolved.add(sym)
            res["unresolved"] = sorted(unresolved)
            cmd = [self.smpicc] + objs + [lib] + libs + ["-lm", "-o", exe]
            rc, out = run_cmd(cmd, cwd=outdir, env=self.env)
            logs.append("$ " + " ".join(cmd) + "\n" + out)
            if rc != 0:
                lines = [l for l in out.splitlines() if "error" in l or "undefined" in l]
                res.update(first=(lines or out.strip().splitlines() or ["link failed"])[0],
                           stage="link")
                failed = True
            else:
                res["ok"] = True
        res["time"] = time.time() - t0
        open(logf, "w").write("\n".join(logs))
        if failed:
            open(logf + ".failed", "w").write("")
        json.dump(res, open(exe + ".json", "w"))
        open(stamp, "w").write(key)
        return res

    def scan_features(self, d, prog):
        """Absent features the program's own code uses: [(feature, evidence)] (cached)."""
        k = ("scan", d, prog)
        with self.prog_locks[k]:
            if k not in self.cache:
                self.cache[k] = self._scan_features(d, prog)
            return self.cache[k]

    def _scan_features(self, d, prog):
        srcs, cppflags, _ = self.spec(d, prog)
        found = []
        for s in srcs:
            if not s.endswith(".c"):
                found.append(("fortran-cxx", os.path.basename(s)))
                continue
            if not os.path.exists(s):
                continue
            cmd = [self.smpicc, "-E"] + self.includes + cppflags + [s]
            rc, out = run_cmd(cmd, env=self.env)
            if rc == 0:
                text = own_lines(out, s)
            else:
                text = open(s, errors="replace").read()
            for feat, pat in FEATURE_PATTERNS:
                if FEATURES.get(feat):
                    continue
                m = pat.search(text)
                if m:
                    found.append((feat, m.group(0).rstrip("( ")))
        return found


_INCLUDE_DIR = {}


def smpi_include_dir(smpicc):
    """The directory holding the mpi.h that smpicc uses (found with gcc -H)."""
    if smpicc not in _INCLUDE_DIR:
        p = subprocess.run([smpicc, "-E", "-H", "-x", "c", "-", "-o", os.devnull],
                           input=b"#include <mpi.h>\n", stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        found = None
        for line in p.stderr.decode("utf-8", "replace").splitlines():
            m = re.match(r"^\.+ (.*/mpi\.h)$", line)
            if m:
                found = os.path.dirname(os.path.abspath(m.group(1)))
                break
        _INCLUDE_DIR[smpicc] = found or os.path.join(REPO, "smpi-shim", "include")
    return _INCLUDE_DIR[smpicc]


def own_lines(preprocessed, src):
    """Lines of gcc -E output that come from the file src itself (not from headers)."""
    keep = []
    mine = True
    base = os.path.basename(src)
    for line in preprocessed.splitlines():
        if line.startswith("# "):
            m = re.match(r'^# \d+ "([^"]*)"', line)
            if m:
                mine = os.path.basename(m.group(1)) == base
            continue
        if mine:
            keep.append(line)
    return "\n".join(keep)


# ------------------------------------------------------------------------------------ running

SIGNAMES = {getattr(signal, n): n for n in dir(signal) if n.startswith("SIG") and "_" not in n}
OK_LINE = re.compile(r"^\s*No [Ee]rrors\s*$")
TOLERATED = re.compile(r"^\s*(Test Passed|)\s*$")
SMPIRUN_NOISE = re.compile(r"^(smpirun: warning|\[smpirun\])")


def read_head(path, limit=200000):
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def normalize(msg):
    """A grouping key for an error line: numbers, addresses, ranks and hosts blanked out."""
    s = msg
    s = re.sub(r"^smpirun: error: ", "", s)
    s = re.sub(r"^rank \d+ \(on [^)]*\) failed at t=[0-9.e+-]+ s: ", "", s)
    s = re.sub(r"^deadlock detected at t=[0-9.e+-]+ s: every remaining rank is blocked \| ",
               "deadlock: ", s)
    s = re.sub(r"0x[0-9a-fA-F]+", "0x…", s)
    s = re.sub(r"\brank \d+ \(on [^)]*\)", "rank N", s)
    s = re.sub(r"t=[0-9.e+-]+ s", "t=… s", s)
    s = re.sub(r"/proc/self/fd/\d+", "<prog>", s)
    s = re.sub(r"\b\d+\b", "N", s)
    return s.strip()


def strip_paths(line):
    """Error lines without absolute paths (smpirun's, the per-rank copies')."""
    return re.sub(r"(/[^\s/:]+)+/([^\s/:]+)", r"\2", line)


def classify(entry, rc, timed_out, out, err, elapsed, limit):
    """(status, category, reason, first line, symbol)."""
    lines_out = out.splitlines()
    lines_err = [strip_paths(l) for l in err.splitlines()]
    both = lines_err + lines_out
    result_test = entry.opts.get("resultTest")

    def first_matching(pat, lines=both):
        for l in lines:
            if re.search(pat, l):
                return l.strip()
        return None

    if timed_out:
        last = next((l.strip() for l in reversed(both) if l.strip()), "")
        why = f"killed after {limit:g} s wall"
        if result_test == "TestErrFatal":
            why += " (test expects the launcher to enforce MPIEXEC_TIMEOUT)"
        return "fail", "timeout", why, last or why, None
    m = None
    for l in both:
        m = re.search(r"undefined symbol: (\S+)", l)
        if m:
            return ("fail", "link/load error", f"undefined symbol {m.group(1)}", l.strip(),
                    m.group(1))
    l = first_matching(r"cannot (read|load|open) program|error while loading")
    if l:
        return "fail", "link/load error", "cannot load program", l, None
    l = first_matching(r"^smpirun: error: (?!.*(failed at t=|deadlock detected))")
    if l and rc == 2:
        return "fail", "smpirun error", "smpirun did not start", l, None
    l = first_matching(r"panicked at")
    if l:
        nxt = ""
        for i, x in enumerate(lines_err):
            if "panicked at" in x and i + 1 < len(lines_err):
                nxt = lines_err[i + 1].strip()
                break
        return "fail", "crash", "simulator panic", (l + " " + nxt).strip(), None
    l = first_matching(r"crashed: ")
    if l:
        sig = re.search(r"crashed: (\S+)", l).group(1)
        libc = first_matching(r"^(corrupted |double free|free\(\)|malloc\(\)|realloc\(\)|"
                              r"\*\*\* stack smashing|munmap_chunk|.*Assertion .* failed)")
        return "fail", "crash", sig, (libc + " | " + l) if libc else l, None
    if rc < 0 or rc in (132, 134, 135, 136, 137, 139):
        sig = -rc if rc < 0 else rc - 128
        name = SIGNAMES.get(sig, f"signal {sig}")
        return "fail", "crash", name, first_matching(r"\S") or f"smpirun killed by {name}", None
    l = first_matching(r"deadlock detected")
    if l:
        detail = ""
        for i, x in enumerate(lines_err):
            if "deadlock detected" in x and i + 1 < len(lines_err):
                detail = lines_err[i + 1].strip()
                break
        return "fail", "deadlock", "deadlock", (l + " | " + detail).strip(" |"), None
    fatal = first_matching(r"^smpirun: error: .* failed at t=")
    mpi_err = None
    abort = None
    if fatal:
        msg = fatal.split(": ", 3)[-1] if fatal.count(": ") >= 3 else fatal
        msg = re.sub(r"^.*failed at t=[0-9.e+-]+ s: ", "", fatal)
        if re.match(r"^P?MPIX?_\w+", msg):
            mpi_err = msg
        elif msg.startswith("MPI_Abort"):
            abort = msg
    if result_test in ("TestStatus", "TestErrFatal"):
        if rc != 0:
            return "pass", None, f"exit status {rc} (expected non-zero)", None, None
        return ("fail", "wrong output", "expected a non-zero exit status, got 0",
                "exit status 0, expected non-zero", None)
    if mpi_err:
        call = re.match(r"^(P?MPIX?_\w+)", mpi_err).group(1)
        cls = re.search(r"\((MPI_ERR_\w+)\)\s*$", mpi_err)
        return ("fail", "MPI error", f"{call} {cls.group(1) if cls else ''}".strip(), fatal,
                None)
    found = any(OK_LINE.match(l) for l in lines_out)
    unexpected = [l for l in lines_out if not OK_LINE.match(l) and not TOLERATED.match(l)]
    unexpected += [l for l in lines_err if not SMPIRUN_NOISE.match(l) and not TOLERATED.match(l)
                   and not l.startswith("smpirun: error:")]
    if rc == 0:
        if found and not unexpected:
            return "pass", None, None, None, None
        if not found and not unexpected:
            return "fail", "wrong output", "no output", "(no ' No Errors' line)", None
        why = "unexpected output" if found else "no ' No Errors' line"
        detail = [l.strip() for l in unexpected if not re.match(r"^\s*Found \d+ errors?\s*$", l)]
        return "fail", "wrong output", why, (detail or [l.strip() for l in unexpected])[0], None
    detail = [l.strip() for l in unexpected if not re.match(r"^\s*Found \d+ errors?\s*$", l)]
    first = (detail or [l.strip() for l in unexpected] or [None])[0]
    if abort:
        return "fail", "non-zero exit", "MPI_Abort", first or abort, None
    if unexpected:
        # the test itself reported errors (and returned non-zero)
        return "fail", "wrong output", f"test reported errors, exit {rc}", first, None
    return "fail", "non-zero exit", f"exit {rc}", fatal or f"exit {rc}", None


class Runner:
    def __init__(self, args):
        self.args = args
        self.tmproot = os.path.join(BUILD, "tmp")
        self.logroot = os.path.join(BUILD, "logs")

    def command(self, entry, exe):
        cmd = [self.args.smpirun, "-platform", self.args.platform, "-np", str(entry.np),
               "--cfg=smpi/simulate-computation:no", "-quiet"]
        cmd += self.args.cfg
        cmd += ["./" + os.path.basename(exe)] + entry.args
        return cmd

    def repro(self, entry, exe):
        """A shell command, relative to the repository root, that reruns the test."""
        d = os.path.dirname(exe)
        up = os.path.relpath(REPO, d)
        cmd = [os.path.join(up, rel(self.args.smpirun)), "-platform",
               os.path.join(up, rel(self.args.platform)), "-np", str(entry.np),
               "--cfg=smpi/simulate-computation:no"] + self.args.cfg + ["./" + entry.prog]
        cmd += entry.args
        env = "".join(shlex.quote(e) + " " for e in entry.env)
        return f"(cd {rel(d)} && {env}{' '.join(shlex.quote(c) for c in cmd)})"

    def run(self, entry, exe, limit):
        os.makedirs(self.tmproot, exist_ok=True)
        logdir = os.path.join(self.logroot, entry.dir)
        os.makedirs(logdir, exist_ok=True)
        tag = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{entry.prog}.np{entry.np}.l{entry.lineno}")
        outp = os.path.join(logdir, tag + ".out")
        errp = os.path.join(logdir, tag + ".err")
        tmpdir = os.path.join(self.tmproot, tag)
        os.makedirs(tmpdir, exist_ok=True)
        cmd = self.command(entry, exe)
        cmd[-1 - len(entry.args):-1 - len(entry.args)] = ["-tmpdir", tmpdir]
        env = dict(os.environ)
        env["MPIEXEC_TIMEOUT"] = str(int(limit))
        env["TMPDIR"] = tmpdir  # smpirun's per-run link directory goes there too
        for e in entry.env:
            if "=" in e:
                k, v = e.split("=", 1)
                env[k] = v
        t0 = time.time()
        timed_out = False
        with open(outp, "wb") as fo, open(errp, "wb") as fe:
            p = subprocess.Popen(cmd, cwd=os.path.dirname(exe), env=env, stdout=fo, stderr=fe,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                # grace period: the launcher enforces MPIEXEC_TIMEOUT itself first
                rc = p.wait(timeout=limit + 10)
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                rc = p.wait()
        elapsed = time.time() - t0
        shutil.rmtree(tmpdir, ignore_errors=True)
        return rc, timed_out, read_head(outp), read_head(errp), elapsed, rel(outp), rel(errp)


# ------------------------------------------------------------------------------------ selection

def mpi_version(smpicc):
    try:
        text = open(os.path.join(smpi_include_dir(smpicc), "mpi.h")).read()
        v = int(re.search(r"#define\s+MPI_VERSION\s+(\d+)", text).group(1))
        s = int(re.search(r"#define\s+MPI_SUBVERSION\s+(\d+)", text).group(1))
        return (v, s)
    except (OSError, AttributeError):
        return (3, 1)


def static_left_out(e, builder, args):
    """Reason a testlist entry is not built nor run, or None."""
    if e.left_out:
        return e.left_out
    if e.opts.get("strict", "").lower() == "false" and not FEATURES["nonstrict"]:
        return ("nonstrict", "strict=false")
    if e.opts.get("mpix", "").lower() == "true" and not FEATURES["mpix"]:
        return ("mpix", "mpix=true")
    if "mpiversion" in e.opts:
        try:
            want = tuple(int(x) for x in e.opts["mpiversion"].split(".")[:2])
            if len(want) == 1:
                want = (want[0], 0)
            if want > mpi_version(args.smpicc):
                return ("mpiversion", f"mpiversion={e.opts['mpiversion']}")
        except ValueError:
            pass
    if "mem" in e.opts:
        try:
            if float(e.opts["mem"]) > args.max_mem:
                return ("mem", f"mem={e.opts['mem']} GB > {args.max_mem:g}")
        except ValueError:
            pass
    srcs, _, _ = builder.spec(e.dir, e.prog)
    if not any(os.path.exists(s) for s in srcs):
        return ("nosource", "no source " + ", ".join(os.path.basename(s) for s in srcs))
    feats = builder.scan_features(e.dir, e.prog)
    if feats:
        return feats[0][0], feats[0][1]
    return None


def select(entries, args):
    out = []
    fast = None
    if args.fast:
        fast = {}
        for f in FAST:
            parts = f.split()
            fast[(parts[0], int(parts[1]), tuple(parts[2:]))] = False
    for e in entries:
        if fast is not None:
            key = (e.name, e.np, tuple(e.args))
            if key not in fast or fast[key] or e.env:
                continue
            fast[key] = True
        if args.only and not any(fnmatch.fnmatchcase(e.name, pat) or
                                 fnmatch.fnmatchcase(e.prog, pat) for pat in args.only):
            continue
        out.append(e)
    if fast is not None:
        for k, seen in fast.items():
            if not seen:
                log(f"run.py: --fast entry not found in the testlists: {k[0]} {k[1]}")
    return out


# ------------------------------------------------------------------------------------ reports

def summarize(entries, dirs):
    rows = []
    tot = collections.Counter()
    tot_left = collections.Counter()
    for d in dirs + ["total"]:
        es = entries if d == "total" else [e for e in entries if e.dir == d]
        c = collections.Counter()
        left = collections.Counter()
        for e in es:
            r = e.result
            c["entries"] += 1
            if r["status"] == "left out":
                c["left out"] += 1
                left[LEFT_OUT_LABEL.get(r["category"], r["category"])] += 1
            else:
                c["run"] += 1
                if r["status"] == "pass":
                    c["passed"] += 1
                else:
                    c["failed"] += 1
                    c[r["category"]] += 1
        rows.append((d, c, left))
    return rows


def fmt_left(left):
    return ", ".join(f"{k} {v}" for k, v in sorted(left.items(), key=lambda kv: (-kv[1], kv[0])))


def print_table(rows, out=sys.stdout):
    hdr = ["dir", "run", "passed", "failed", "left out", "left-out reasons"]
    body = [[d, str(c["run"]), str(c["passed"]), str(c["failed"]), str(c["left out"]),
             fmt_left(left)] for d, c, left in rows]
    widths = [max(len(r[i]) for r in [hdr] + body) for i in range(len(hdr))]
    line = "  ".join(h.ljust(widths[i]) if i in (0, 5) else h.rjust(widths[i])
                     for i, h in enumerate(hdr))
    print(line, file=out)
    print("-" * len(line), file=out)
    for r in body:
        if r[0] == "total":
            print("-" * len(line), file=out)
        print("  ".join(x.ljust(widths[i]) if i in (0, 5) else x.rjust(widths[i])
                        for i, x in enumerate(r)), file=out)
    print(file=out)
    hdr2 = ["dir"] + CATEGORIES
    body2 = [[d] + [str(c[k]) for k in CATEGORIES] for d, c, _ in rows]
    widths = [max(len(r[i]) for r in [hdr2] + body2) for i in range(len(hdr2))]
    print("failures by category:", file=out)
    print("  ".join(h.rjust(widths[i]) if i else h.ljust(widths[i]) for i, h in enumerate(hdr2)),
          file=out)
    for r in body2:
        print("  ".join(x.rjust(widths[i]) if i else x.ljust(widths[i])
                        for i, x in enumerate(r)), file=out)


def md_escape(s):
    return (s or "").replace("|", "\\|").replace("\n", " ")[:220]


def symbol_tallies(entries):
    """Missing symbols: name -> {kind, compile: programs, runtime: programs, alone: programs}.

    compile: the program does not compile without it (gcc: implicit declaration, undeclared,
    unknown type); runtime: the dynamic loader did not find it when the test reached it;
    alone: it is the program's only missing symbol at compile time."""
    tally = {}
    for e in entries:
        r = e.result
        if r["status"] != "fail":
            continue
        if r["category"] == "compile error":
            syms = r.get("missing", [])
            for name, kind in syms:
                t = tally.setdefault(name, {"kind": kind, "compile": set(), "runtime": set(),
                                            "alone": set()})
                t["compile"].add(e.name)
                if len(syms) == 1:
                    t["alone"].add(e.name)
        elif r["category"] == "link/load error" and r.get("symbol"):
            t = tally.setdefault(r["symbol"], {"kind": "function", "compile": set(),
                                               "runtime": set(), "alone": set()})
            t["runtime"].add(e.name)
    return tally


def tally_order(kv):
    t = kv[1]
    return (-(len(t["compile"]) + len(t["runtime"])), -len(t["alone"]), kv[0])


def write_markdown(path, entries, rows, meta):
    L = []
    L.append("# MPICH 4.0.2 test suite on our simulator")
    L.append("")
    L.append(f"Generated by `{meta['command']}` on {meta['date']} (repository commit "
             f"`{meta['commit']}`{', with local changes' if meta['dirty'] else ''}). "
             f"Platform `{meta['platform']}`, `--cfg=smpi/simulate-computation:no`, "
             f"default time limit {meta['timeout']:g} s wall per test (or the testlist's "
             f"`timeLimit`). Total wall time {meta['wall']:.0f} s.")
    L.append("")
    L.append(f"Simulator: `{meta['smpirun']}` and `{meta['smpicc']}` (mpi.h from "
             f"`{meta['include']}`){'; ' + meta['label'] if meta.get('label') else ''}.")
    L.append("")
    L.append("A test passes when smpirun exits 0 and the output is ` No Errors` and nothing else "
             "(as MPICH's `runtests`). \"Left out\" tests are not built: they need a feature we "
             "declare absent (see `README.md`). Regenerate with "
             "`python3 tests/mpich/run.py --keep-going`.")
    L.append("")
    L.append("## Summary")
    L.append("")
    L.append("| dir | testlist entries | run | passed | failed | left out | left-out reasons |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for d, c, left in rows:
        b = "**" if d == "total" else ""
        L.append(f"| {b}{d}{b} | {c['entries']} | {c['run']} | {b}{c['passed']}{b} | "
                 f"{c['failed']} | {c['left out']} | {fmt_left(left)} |")
    L.append("")
    L.append("Failures by category:")
    L.append("")
    L.append("| dir | " + " | ".join(CATEGORIES) + " |")
    L.append("|---|" + "---:|" * len(CATEGORIES))
    for d, c, _ in rows:
        L.append(f"| {d} | " + " | ".join(str(c[k]) for k in CATEGORIES) + " |")
    L.append("")

    tally = symbol_tallies(entries)
    L.append("## Missing MPI symbols")
    L.append("")
    L.append("Identifiers our `mpi.h`/`smpirun` lack, by number of test programs they block. "
             "*compile*: the program does not compile without it (tests are compiled with "
             "`-Werror=implicit-function-declaration`, so every missing function of a program is "
             "listed, not just the first); *alone*: it is that program's only missing symbol, so "
             "adding it alone lets the program compile; *run time*: the dynamic loader did not "
             "find it when the test reached it (mostly calls made by MPICH's `util/mtest.c`, which "
             "is compiled leniently, e.g. the communicator factories `MTestGetIntracomm` and "
             "`MTestGetIntercomm`).")
    L.append("")
    L.append("| symbol | kind | programs | compile | alone | run time | examples |")
    L.append("|---|---|---:|---:|---:|---:|---|")
    for name, t in sorted(tally.items(), key=tally_order):
        progs = sorted(t["compile"] | t["runtime"])
        ex = ", ".join(progs[:4]) + (", …" if len(progs) > 4 else "")
        L.append(f"| `{name}` | {t['kind']} | {len(progs)} | {len(t['compile'])} | "
                 f"{len(t['alone'])} | {len(t['runtime'])} | {ex} |")
    L.append("")

    unres = collections.defaultdict(set)
    for e in entries:
        for s in e.result.get("unresolved", []):
            unres[s].add(e.name)
    if unres:
        L.append("Declared in `mpi.h` but not exported by `smpirun` (called by built tests; a test "
                 "fails only if it reaches the call):")
        L.append("")
        L.append("| symbol | programs |")
        L.append("|---|---:|")
        for s, ps in sorted(unres.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            L.append(f"| `{s}` | {len(ps)} |")
        L.append("")

    L.append("## Failures grouped by cause")
    L.append("")
    for cat in CATEGORIES:
        if cat == "compile error":
            continue
        groups = collections.defaultdict(list)
        for e in entries:
            r = e.result
            if r["status"] == "fail" and r["category"] == cat:
                key = r.get("reason") if cat in ("link/load error", "timeout") else r.get("first")
                groups[normalize(key or r.get("reason") or "")].append(e)
        if not groups:
            continue
        n = sum(len(v) for v in groups.values())
        L.append(f"### {cat} ({n})")
        L.append("")
        for key, es in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            L.append(f"- {len(es)} × `{md_escape(key)}`: "
                     + ", ".join(e.label for e in es[:12]) + (" …" if len(es) > 12 else ""))
        L.append("")
    other_compile = [e for e in entries if e.result["status"] == "fail"
                     and e.result["category"] == "compile error"
                     and not e.result.get("missing")]
    if other_compile:
        L.append(f"### compile errors not due to a missing symbol ({len(other_compile)})")
        L.append("")
        for e in other_compile:
            L.append(f"- {e.label}: `{md_escape(e.result.get('first'))}`")
        L.append("")

    L.append("## Left out")
    L.append("")
    groups = collections.defaultdict(list)
    for e in entries:
        if e.result["status"] == "left out":
            groups[LEFT_OUT_LABEL.get(e.result["category"], e.result["category"])].append(e)
    for k, es in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        L.append(f"- **{k}** ({len(es)}): " + ", ".join(
            f"{e.label} (`{md_escape(e.result['reason'])}`)" for e in es))
    L.append("")

    L.append("## All tests")
    L.append("")
    L.append("Reproduce one with `python3 tests/mpich/run.py --only DIR/PROG -v` (the `-v` output "
             "shows the smpirun command; logs are under `tests/mpich/build/logs/`).")
    L.append("")
    L.append("| test | np | args / env | status | reason | first error line | s |")
    L.append("|---|---:|---|---|---|---|---:|")
    for e in entries:
        r = e.result
        ae = " ".join(e.args + [f"[{x}]" for x in e.env])
        st = r["status"] if r["status"] != "fail" else f"FAIL: {r['category']}"
        if r["status"] == "left out":
            st = f"left out: {LEFT_OUT_LABEL.get(r['category'], r['category'])}"
        xf = " (MPICH xfail)" if e.opts.get("xfail") else ""
        reason = r.get("reason") or ""
        if r.get("missing"):
            reason = "missing " + ", ".join(s for s, _ in r["missing"][:6]) + \
                     (" …" if len(r["missing"]) > 6 else "")
        L.append(f"| {e.name} | {e.np} | {md_escape(ae)} | {st}{xf} | {md_escape(reason)} | "
                 f"{md_escape(r.get('first'))} | {r.get('time', 0):.1f} |")
    L.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(L))


# ------------------------------------------------------------------------------------ main

def git_info():
    try:
        c = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True).stdout.strip()
        d = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
        return c or "?", bool(d)
    except OSError:
        return "?", False


def main():
    ap = argparse.ArgumentParser(description="Run MPICH's test suite on smpirun.")
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS),
                    help="comma-separated test directories (default: %(default)s)")
    ap.add_argument("--fast", action="store_true", help="the fixed quick subset (CI)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only programs matching NAME (glob on 'dir/prog' or 'prog'; repeatable)")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="tests built/run concurrently (default 1)")
    ap.add_argument("--keep-going", "-k", action="store_true",
                    help="run every selected test (default: stop at the first failure)")
    ap.add_argument("--json", metavar="FILE", help="write per-test results as JSON")
    ap.add_argument("--results", metavar="FILE",
                    help="Markdown report (default: tests/mpich/results.md for a full run "
                         "with the default directories, none otherwise)")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="wall-clock limit per test, s, when the testlist has no timeLimit")
    ap.add_argument("--timeout-cap", type=float, default=0.0,
                    help="upper bound on a testlist's timeLimit (0: none)")
    ap.add_argument("--max-mem", type=float, default=2.0,
                    help="leave out tests whose mem= (GB) exceeds this (default %(default)s)")
    ap.add_argument("--platform", default=os.path.join(REPO, "platforms", "fat_tree.toml"))
    ap.add_argument("--smpicc", default=os.path.join(REPO, "target", "release", "smpicc"))
    ap.add_argument("--smpirun", default=os.path.join(REPO, "target", "release", "smpirun"))
    ap.add_argument("--cfg", action="append", default=[], metavar="KEY:VALUE",
                    help="extra --cfg for smpirun (repeatable)")
    ap.add_argument("--with", dest="with_", action="append", default=[], metavar="FEATURE",
                    help="treat FEATURE as present: " + ", ".join(FEATURES))
    ap.add_argument("--label", default="",
                    help="free text describing the simulator build, copied into the report")
    ap.add_argument("--list", action="store_true", help="list the selected tests and exit")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print commands and the output of failing tests")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-test progress lines")
    args = ap.parse_args()
    args.cfg = [c if c.startswith("--cfg=") else "--cfg=" + c for c in args.cfg]
    args.platform = os.path.abspath(args.platform)
    args.smpicc = os.path.abspath(args.smpicc)
    args.smpirun = os.path.abspath(args.smpirun)
    for f in args.with_:
        if f not in FEATURES:
            ap.error(f"unknown feature {f} (known: {', '.join(FEATURES)})")
        FEATURES[f] = True
    dirs = [d for d in args.dirs.split(",") if d]
    for tool in (args.smpicc, args.smpirun):
        if not os.access(tool, os.X_OK):
            ap.error(f"{tool} not found: cargo build --release -p smpi-shim")

    tree = os.path.join(BUILD, "src", "MPICH_TREE")
    if not os.path.exists(tree):
        log("run.py: MPICH sources missing, running tests/mpich/fetch.sh")
        if subprocess.run([os.path.join(HERE, "fetch.sh")]).returncode != 0:
            sys.exit("run.py: fetch.sh failed")
    conf = dict(l.strip().split("=", 1) for l in open(tree) if "=" in l)
    testdir = os.path.join(BUILD, "src", conf["MPICH_TESTDIR"])

    builder = Builder(args, testdir)
    runner = Runner(args)
    entries = []
    for d in dirs:
        entries += parse_testlist(testdir, d)
        entries += parse_dtp_config(testdir, [d])
    entries = select(entries, args)
    if not entries:
        sys.exit("run.py: no test selected")
    if args.list:
        for e in entries:
            print(e.label)
        return 0

    t_start = time.time()
    ok_util, util_log, _ = builder.build_util()
    if not ok_util:
        log("run.py: building util/ failed; every test will fail to compile:\n" + util_log[-3000:])
    stop = threading.Event()
    broken = threading.Event()
    print_lock = threading.Lock()
    counter = [0]
    streak = [0]

    def do(e):
        if stop.is_set():
            return
        t0 = time.time()
        r = {"status": None}
        lo = static_left_out(e, builder, args)
        if lo:
            r = {"status": "left out", "category": lo[0], "reason": lo[1]}
        else:
            b = builder.build(e.dir, e.prog)
            r["unresolved"] = b.get("unresolved", [])
            r["build_log"] = b["log"]
            if not b["ok"]:
                r.update(status="fail", category="compile error" if b.get("stage") != "link"
                         else "link/load error", reason="build failed", first=b.get("first"),
                         missing=b.get("missing", []))
                if b.get("missing"):
                    r["reason"] = "missing " + ", ".join(s for s, _ in b["missing"])
            else:
                limit = args.timeout
                tl = e.opts.get("timeLimit")
                if tl and tl.isdigit():
                    limit = float(tl)
                    if args.timeout_cap > 0:
                        limit = min(limit, args.timeout_cap)
                rc, to, out, err, el, outp, errp = runner.run(e, b["exe"], limit)
                st, cat, reason, first, sym = classify(e, rc, to, out, err, el, limit)
                r.update(status=st, category=cat, reason=reason, first=first, symbol=sym,
                         exit=rc, timed_out=to, run_time=round(el, 3), stdout=outp, stderr=errp,
                         command=runner.repro(e, b["exe"]))
                if args.verbose:
                    with print_lock:
                        print("$ " + r["command"])
                        if st != "pass":
                            sys.stdout.write(out[-4000:])
                            sys.stdout.write(err[-4000:])
        r["time"] = round(time.time() - t0, 3)
        e.result = r
        with print_lock:
            counter[0] += 1
            if not args.quiet:
                st = r["status"].upper() if r["status"] != "left out" else "left out"
                extra = ""
                if r["status"] == "fail":
                    extra = f" [{r['category']}] {r.get('reason') or ''}"
                elif r["status"] == "left out":
                    extra = f" [{LEFT_OUT_LABEL.get(r['category'], r['category'])}: {r['reason']}]"
                print(f"[{counter[0]:3}/{len(entries)}] {e.label:48} {st:8} "
                      f"{r['time']:6.1f}s{extra}", flush=True)
        if r["status"] == "fail" and not args.keep_going:
            stop.set()
        with print_lock:
            streak[0] = streak[0] + 1 if r.get("category") == "smpirun error" else 0
            if streak[0] >= BROKEN_LIMIT:
                broken.set()
                stop.set()

    if args.jobs <= 1:
        for e in entries:
            do(e)
            if stop.is_set():
                break
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            list(ex.map(do, entries))
    done = [e for e in entries if e.result is not None]
    wall = time.time() - t_start

    print()
    rows = summarize(done, [d for d in dirs if any(e.dir == d for e in done)])
    print_table(rows)
    tally = symbol_tallies(done)
    if tally:
        print("\nmost often missing symbols (programs blocked at compile / run time):")
        top = sorted(tally.items(), key=tally_order)[:20]
        print("  " + ", ".join(f"{k} {len(v['compile'])}/{len(v['runtime'])}" for k, v in top))
    print(f"\nwall time {wall:.1f} s")
    if stop.is_set() and len(done) < len(entries) and not broken.is_set():
        print(f"stopped at the first failure after {len(done)} of {len(entries)} tests "
              f"(--keep-going runs them all)")

    if broken.is_set():
        print(f"run.py: smpirun failed to start {BROKEN_LIMIT} times in a row ("
              f"{done[-1].result.get('first')}); stopping without writing a report")
        return 2

    commit, dirty = git_info()
    meta = {"command": "tests/mpich/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": commit,
            "dirty": dirty, "platform": rel(args.platform), "timeout": args.timeout,
            "wall": wall, "mpich": conf.get("MPICH_VERSION"), "smpirun": rel(args.smpirun),
            "smpicc": rel(args.smpicc), "include": rel(smpi_include_dir(args.smpicc)),
            "label": args.label}
    results = args.results
    full = not args.fast and not args.only and dirs == DEFAULT_DIRS and len(done) == len(entries)
    if results is None and full:
        results = os.path.join(HERE, "results.md")
    if results:
        write_markdown(results, done, rows, meta)
        print(f"wrote {rel(os.path.abspath(results))}")
    if args.json:
        data = {"meta": meta, "tests": [
            {"dir": e.dir, "program": e.prog, "np": e.np, "args": e.args, "env": e.env,
             "testlist_line": e.line, "xfail": e.opts.get("xfail"), **e.result} for e in done]}
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)
        print(f"wrote {args.json}")
    failed = any(e.result["status"] == "fail" for e in done)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
