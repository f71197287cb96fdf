#!/usr/bin/env bash
# Build the real HPL 2.0 (Debian hpcc 1.5.0 orig tarball, unmodified) with the REAL
# SimGrid 3.32 smpicc, with the BLAS replaced by the model library blas_model.c.
#
#   apps/hpl/simgrid/build.sh                # -> apps/hpl/simgrid/build/xhpl
#   VARIANT=dt HPL_EXTRA_OPTS=-DHPL_DETAILED_TIMING apps/hpl/simgrid/build.sh
#                                            # -> apps/hpl/simgrid/build-dt/xhpl
#
#   SG_SMPICC=target/release/smpicc VARIANT=ours apps/hpl/simgrid/build.sh
#                                            # -> the same xhpl (same blas_model.c) built for
#                                            #    OUR simulator (run it without -model)
#
#   VARIANT=trace HPL_TRACE_MPI=1 build.sh   # + trace_mpi.c: every MPI p2p call logged
#
#   VARIANT=plain HPL_TIME_WRAP=0 build.sh   # without the per-rank HPL_pdgesv timer (its two
#                                            # MPI_Wtime calls): the same MPI calls as
#                                            # apps/hpl/build/xhpl, for the benchmark
#
# Environment: SG_SMPICC (default /usr/bin/smpicc), VARIANT (suffix of the build dir),
# HPL_EXTRA_OPTS (extra -D options for HPL), BLAS_MODEL_IDAMAX (0 loop, 1 zero, 2 random:
# compile-time default of the idamax variant; env BLAS_MODEL_IDAMAX=loop|zero|random at run
# time overrides it), HPL_CCFLAGS (default -O3 -fomit-frame-pointer -funroll-loops).
#
# The HPL sources are extracted from the hpcc orig tarball already downloaded by
# apps/hpl/fetch.sh (apps/hpl/build/download/hpcc/) into our own build dir, so the tree
# apps/hpl/build/src used by our simulator's build is never touched.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HPL=$(cd "$HERE/.." && pwd)
SMPICC=${SG_SMPICC:-/usr/bin/smpicc}
BUILD=$HERE/build${VARIANT:+-$VARIANT}
CCFLAGS_OPT=${HPL_CCFLAGS:--O3 -fomit-frame-pointer -funroll-loops}
HPL_OPTS="-DHPL_CALL_CBLAS${HPL_EXTRA_OPTS:+ $HPL_EXTRA_OPTS}"
log() { echo "simgrid/build.sh: $*" >&2; }
die() { echo "simgrid/build.sh: error: $*" >&2; exit 1; }

# ---- sources
ORIG=$(ls "$HPL"/build/download/hpcc/hpcc_*.orig.tar.gz 2>/dev/null | head -n1 || true)
if [ -z "$ORIG" ]; then
    log "no hpcc tarball yet: running apps/hpl/fetch.sh"
    HPL_SKIP_NETLIB=1 "$HPL/fetch.sh"
    ORIG=$(ls "$HPL"/build/download/hpcc/hpcc_*.orig.tar.gz | head -n1)
fi
TOPNAME=$(tar -tzf "$ORIG" | awk -F/ 'NR==1{print $1}')
TOP=$BUILD/src/$TOPNAME/hpl
if [ ! -f "$TOP/Make.top" ]; then
    mkdir -p "$BUILD/src"
    tar -xzf "$ORIG" -C "$BUILD/src" "$TOPNAME/hpl"
fi
log "HPL tree: $TOP"

# ---- arch file
ARCHF=$(mktemp); trap 'rm -f "$ARCHF"' EXIT
cat > "$ARCHF" <<EOT
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = \$(arch)
TOPdir       = $TOP
INCdir       = \$(TOPdir)/include
BINdir       = \$(TOPdir)/bin/\$(ARCH)
LIBdir       = \$(TOPdir)/lib/\$(ARCH)
HPLlib       = \$(LIBdir)/libhpl.a
MPdir        =
MPinc        =
MPlib        =
LAdir        =
LAinc        =
LAlib        =
F2CDEFS      =
HPL_INCLUDES = -I\$(INCdir) -I\$(INCdir)/\$(ARCH)
HPL_LIBS     = \$(HPLlib) -lm
HPL_OPTS     = $HPL_OPTS
HPL_DEFS     = \$(F2CDEFS) \$(HPL_OPTS) \$(HPL_INCLUDES)
CC           = $SMPICC
CCNOOPT      = \$(HPL_DEFS)
CCFLAGS      = \$(HPL_DEFS) $CCFLAGS_OPT
LINKER       = $SMPICC
LINKFLAGS    = \$(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
EOT
if [ -f "$TOP/Make.simgrid" ] && ! cmp -s "$ARCHF" "$TOP/Make.simgrid"; then
    (cd "$TOP" && make -s -f Make.top clean_arch_all arch=simgrid >/dev/null 2>&1) || true
fi
cmp -s "$ARCHF" "$TOP/Make.simgrid" 2>/dev/null || cp "$ARCHF" "$TOP/Make.simgrid"

log "make arch=simgrid (log: $BUILD/make.log)"
(cd "$TOP" && make -j1 arch=simgrid) > "$BUILD/make.log" 2>&1 || { tail -n 30 "$BUILD/make.log" >&2; die "HPL build failed"; }
[ -f "$TOP/lib/simgrid/libhpl.a" ] || die "no libhpl.a"

# ---- model library + main, then link: blas_model.o BEFORE libhpl.a, so that the
# archive member HPL_pdmatgen.o is never pulled in (blas_model.o already defines it).
mkdir -p "$BUILD/obj"
# -Bsymbolic: the calls from HPL to cblas_* / HPL_pdmatgen bind to blas_model.o inside xhpl
# even when the loader exports symbols of the same names (our smpirun exports cblas_*).
BSYM=-Wl,-Bsymbolic
INC="-I$TOP/include -I$TOP/include/simgrid"
# shellcheck disable=SC2086
"$SMPICC" $HPL_OPTS $INC $CCFLAGS_OPT -DBLAS_MODEL_IDAMAX=${BLAS_MODEL_IDAMAX:-0} \
    -c "$HERE/blas_model.c" -o "$BUILD/obj/blas_model.o"
# hpl_main_sg.c = hpl_main.c + a per-rank timer around HPL_pdgesv (HPL_TIME_WRAP=0: without)
MAIN_SRC=$HERE/hpl_main_sg.c TIME_WRAP=-Wl,--wrap=HPL_pdgesv
if [ "${HPL_TIME_WRAP:-1}" = 0 ]; then MAIN_SRC=$HPL/hpl_main.c TIME_WRAP=""; fi
# shellcheck disable=SC2086
"$SMPICC" $HPL_OPTS $INC $CCFLAGS_OPT -c "$MAIN_SRC" -o "$BUILD/obj/hpl_main.o"
TRACE_OBJ="" TRACE_WRAP=""
if [ "${HPL_TRACE_MPI:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    "$SMPICC" $INC $CCFLAGS_OPT -c "$HERE/trace_mpi.c" -o "$BUILD/obj/trace_mpi.o"
    TRACE_OBJ=$BUILD/obj/trace_mpi.o
    for f in Send Ssend Recv Irecv Isend Issend Wait Iprobe Probe Test; do
        TRACE_WRAP="$TRACE_WRAP -Wl,--wrap=MPI_$f"
    done
fi
# shellcheck disable=SC2086
"$SMPICC" $CCFLAGS_OPT -o "$BUILD/xhpl.new" "$BUILD/obj/hpl_main.o" "$BUILD/obj/blas_model.o" \
    $TRACE_OBJ $TRACE_WRAP -Wl,--wrap=fopen $TIME_WRAP $BSYM "$TOP/lib/simgrid/libhpl.a" -lm
mv "$BUILD/xhpl.new" "$BUILD/xhpl"
# Check that the archive's generator was not linked: its helpers (HPL_xjumpm, HPL_lmul,
# used only by HPL_pdmatgen/HPL_pdrand) must be absent.
if nm "$BUILD/xhpl" | grep -q ' T HPL_xjumpm$'; then
    die "HPL's own HPL_pdmatgen.o was linked in"
fi
log "built $BUILD/xhpl"
echo "$BUILD/xhpl"
