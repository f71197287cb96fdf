#!/usr/bin/env python3
"""Runs MPICH 4.0.2's Fortran and C++ tests (test/mpi/f77, f90, cxx) with smpiff/smpif90/smpicxx + smpirun.

A first, separate runner (run.py handles the C directories; merging the two is future work).
For each `<dir>/<sub>/testlist` entry `prog np [arg=...]`: compiles the sources named by the
Makefile.am (`prog_SOURCES`, else `prog.f` / `prog.f90`) with the `.h.in` headers of the
directory substituted for our feature set (MPI_Aint and MPI_Offset are `integer*8`), links
util/mtest_f77.f, mtest_f90.f90 or mtest_cxx.cxx (the cxx tests use MPI's C++ bindings,
smpi-shim/include/mpicxx.h), runs it, and passes when the output is `No Errors` (blanks around it allowed, as MPICH's runtests does).
Subdirectories for features we lack (io, rma, spawn) are left out.

Usage: python3 tests/mpich/run_fortran.py [--dirs f77,f90,cxx] [--only GLOB] [--fast] [-v]
Exit status 1 when a test of the FAST subset ran and failed.
"""
import argparse, fnmatch, os, re, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(HERE, "build/src/mpich-4.0.2/test/mpi")
OBJ = os.path.join(HERE, "build/fobj")
BIN = os.path.join(REPO, "target/release")
SKIP_SUBDIRS = {"io", "rma", "spawn"}
C_UTIL = ["mtest.c", "mtest_common.c", "mtest_single.c", "dtypes.c"]
# A quick subset (a few seconds) covering each binding mechanism: generated
# bindings, hand-written ones (strings, attributes, callbacks), the Fortran
# datatypes, `use mpi` (MPI_SIZEOF), C parts, and the C++ bindings. scripts/test.sh runs it with
# --fast; the exit status is non-zero when one of these fails.
FAST = ["f77/pt2pt/sendf", "f77/coll/exscanf", "f77/datatype/typenamef", "f77/info/infogetstrf",
        "f77/comm/commerrf", "f77/pt2pt/greqf", "f77/attr/commattrf", "f90/datatype/sizeof",
        "f90/datatype/createf90", "f90/pt2pt/mprobef90", "f90/info/infocrenvf90", "f90/datatype/bottom",
        "cxx/coll/icallreducex", "cxx/errhan/commcallx", "cxx/attr/attrtx"]
SUBST = {"F77_MPI_ADDRESS": "integer*8", "F77_MPI_OFFSET": "integer*8",
         "FC_MPI_ADDRESS": "integer(kind=MPI_ADDRESS_KIND)", "ALLOCMEMF": "", "ALLOCMEMFC": ""}


def sources(mk, prog, ext):
    m = re.search(r"^%s_SOURCES\s*=\s*(.*?)(?<!\\)$" % re.escape(prog), mk, re.M | re.S)
    if m:
        return m.group(1).replace("\\\n", " ").split()
    return [prog + ext]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dirs", default="f77,f90,cxx")
    ap.add_argument("--only", action="append")
    ap.add_argument("--fast", action="store_true", help="only the FAST subset")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    if a.fast:
        a.only = (a.only or []) + FAST
    if not os.path.isdir(SRC):
        sys.exit(f"{SRC} is missing: run tests/mpich/fetch.sh")
    # Some tests have C parts, which include `../../include/mpitestconf.h` (found
    # relative to OBJ/<top>/<sub> on the -I path: OBJ/include) and "mpitest.h"
    # (MPICH's include dir): run.py's configure results plus gfortran's name mapping.
    inc = os.path.join(OBJ, "include")
    os.makedirs(inc, exist_ok=True)
    conf = open(os.path.join(HERE, "mpitestconf.h")).read()
    open(os.path.join(inc, "mpitestconf.h"), "w").write(
        conf + "\n/* run_fortran.py: gfortran's external names (lowercase, one underscore) */\n"
        "#define F77_NAME_LOWER_USCORE 1\n"
        "/* the cxx tests: standard C++ headers and namespace */\n"
        "#define HAVE_IOSTREAM 1\n#define HAVE_NAMESPACE_STD 1\n#define HAVE_NAMESPACES 1\n")
    # mtest_cxx.cxx calls MTest_finalize_gpu & co. of the C util/mtest_common.c.
    common_o = os.path.join(OBJ, "mtest_common.o")
    subprocess.run([os.path.join(BIN, "smpicc"), "-c", "-O0", "-w", "-I" + inc, "-I" + os.path.join(SRC, "include"),
                    os.path.join(SRC, "util", "mtest_common.c"), "-o", common_o], check=True)
    results = {}
    for top in a.dirs.split(","):
        tool, ext, mt = {"f77": ("smpiff", ".f", "mtest_f77.f"), "f90": ("smpif90", ".f90", "mtest_f90.f90"),
                         "cxx": ("smpicxx", ".cxx", "mtest_cxx.cxx")}[top]
        for sub in sorted(os.listdir(os.path.join(SRC, top))):
            d = os.path.join(SRC, top, sub)
            tl = os.path.join(d, "testlist")
            if not os.path.exists(tl):
                # Unconfigured lists: their @feature@ lines are left out below.
                tl += ".in"
            if sub in SKIP_SUBDIRS or not os.path.exists(tl):
                continue
            mk = open(os.path.join(d, "Makefile.am")).read()
            work = os.path.join(OBJ, top, sub)
            os.makedirs(work, exist_ok=True)
            for f in os.listdir(d):
                if f.endswith(".h.in"):
                    t = re.sub(r"@(\w+)@", lambda m: SUBST.get(m.group(1), m.group(0)), open(os.path.join(d, f)).read())
                    open(os.path.join(work, f[:-3]), "w").write(t)
            for line in open(tl):
                w = line.split()
                if not w or w[0].startswith("#") or w[0].startswith("@"):
                    continue
                prog, np_ = w[0], int(w[1]) if len(w) > 1 and w[1].isdigit() else 1
                if any(x.startswith("mpiversion=") or x == "strict=false" for x in w[2:]):
                    pass
                args = [x[4:] for x in w[2:] if x.startswith("arg=")]
                base = f"{top}/{sub}/{prog}"
                if a.only and not any(fnmatch.fnmatch(base, g) or fnmatch.fnmatch(prog, g) for g in a.only):
                    continue
                # A program listed twice (other arguments) is two tests.
                name = " ".join([base] + w[2:])
                srcs = [os.path.join(d, s) for s in sources(mk, prog, ext)]
                exe = os.path.join(work, prog)
                # A test written in C alone (f90types) is built as run.py builds C tests.
                c_only = all(x.endswith(".c") for x in srcs)
                util = [os.path.join(SRC, "util", u) for u in C_UTIL] if c_only else [os.path.join(SRC, "util", mt)]
                if top == "cxx":
                    util.append(common_o)
                cmd = [os.path.join(BIN, "smpicc" if c_only else tool), "-O0", "-w", "-I" + work, "-I" + d,
                       "-I" + inc, "-I" + os.path.join(SRC, "include")] + srcs + util + ["-o", exe]
                p = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
                if p.returncode != 0:
                    results[name] = ("compile error", p.stderr.strip().splitlines()[-3:])
                else:
                    run = [os.path.join(BIN, "smpirun"), "-platform", os.path.join(REPO, "platforms/fat_tree.toml"),
                           "-np", str(np_), "--cfg=smpi/simulate-computation:no", "-quiet", exe] + args
                    try:
                        r = subprocess.run(run, cwd=work, capture_output=True, text=True, timeout=60)
                        out = [l for l in r.stdout.splitlines() if l.strip()]
                        ok = r.returncode == 0 and [l.strip() for l in out] == ["No Errors"]
                        results[name] = ("pass", []) if ok else ("fail (exit %d)" % r.returncode,
                                                                  (out + r.stderr.splitlines())[-4:])
                    except subprocess.TimeoutExpired:
                        results[name] = ("timeout", [])
                st, why = results[name]
                print(f"{st:14} {name}")
                if a.v and why:
                    for l in why:
                        print("      " + l)
    for top in a.dirs.split(","):
        sel = [v for k, v in results.items() if k.startswith(top + "/")]
        n = sum(1 for s, _ in sel if s == "pass")
        print(f"{top}: {n}/{len(sel)} pass")
    failed_fast = [k for k, (st, _) in results.items() if k in FAST and st != "pass"]
    if failed_fast:
        print("failed in the fast set: " + ", ".join(failed_fast))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
