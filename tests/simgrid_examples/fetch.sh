#!/usr/bin/env bash
# Extract the parts of SimGrid 3.32's examples/ that our tests use (never committed) into
# tests/simgrid_examples/build/ (git-ignored):
#
#   examples/smpi/replay/        time-independent traces and replay.tesh (expected replay timestamps)
#   examples/smpi/hostfile       the hostfile of those examples
#   examples/smpi/NAS/           NAS Parallel Benchmarks EP, IS, DT in C, adapted by SimGrid
#   examples/smpi/energy/        SimGrid's DVFS and energy example and its tesh
#   examples/platforms/          SimGrid's example platforms (profiles/ included)
#
#   tests/simgrid_examples/fetch.sh      # idempotent
#
# The Debian `simgrid` source package is downloaded by tests/mbi/fetch.sh (private apt
# configuration, SHA-256 of the orig tarball checked against the .dsc); this script reuses that
# tarball and only extracts other paths from it.
#
# Result: build/simgrid-3.32/examples/..., and build/EXAMPLES (shell syntax:
# SIMGRID_EXAMPLES=<absolute path of examples/>).
# Exit codes: 0 extracted (or already there); 1 download failed (see tests/mbi/fetch.sh).
# Environment: SIMGRID_EXAMPLES_BUILD_DIR (default tests/simgrid_examples/build),
# MBI_BUILD_DIR (where tests/mbi/fetch.sh keeps the download; default tests/mbi/build).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${SIMGRID_EXAMPLES_BUILD_DIR:-$HERE/build}
MBI_BUILD=${MBI_BUILD_DIR:-$REPO/tests/mbi/build}
PATHS=(examples/smpi/replay examples/smpi/hostfile examples/smpi/NAS examples/smpi/energy examples/platforms)

log() { echo "fetch.sh: $*" >&2; }

if [ -f "$BUILD/EXAMPLES" ]; then
    # shellcheck disable=SC1091
    . "$BUILD/EXAMPLES"
    if [ -f "$SIMGRID_EXAMPLES/smpi/replay/replay.tesh" ] && [ -d "$SIMGRID_EXAMPLES/smpi/NAS" ] \
        && [ -f "$SIMGRID_EXAMPLES/smpi/energy/energy.tesh" ] && [ -f "$SIMGRID_EXAMPLES/platforms/vivaldi.xml" ]; then
        log "already extracted: $SIMGRID_EXAMPLES"
        exit 0
    fi
fi

find_orig() { ls "$MBI_BUILD"/download/simgrid/simgrid_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | awk 'NR == 1' || true; }
if [ -z "$(find_orig)" ]; then
    log "downloading the simgrid source package with tests/mbi/fetch.sh"
    MBI_BUILD_DIR="$MBI_BUILD" "$REPO/tests/mbi/fetch.sh" || exit 1
fi
orig=$(find_orig)
[ -n "$orig" ] || { log "no simgrid orig tarball under $MBI_BUILD/download"; exit 1; }
top=$(tar -tf "$orig" | awk -F/ 'NR == 1 { print $1 }')
mkdir -p "$BUILD"
rm -rf "${BUILD:?}/$top"
tar -xf "$orig" -C "$BUILD" "${PATHS[@]/#/$top/}"
printf 'SIMGRID_EXAMPLES=%s\n' "$BUILD/$top/examples" > "$BUILD/EXAMPLES"
log "extracted ${PATHS[*]} of $(basename "$orig") into $BUILD/$top"
