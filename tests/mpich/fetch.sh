#!/usr/bin/env bash
# Fetch the MPICH test suite (test/mpi/ of MPICH 4.0.2) into tests/mpich/build/src/ (git-ignored).
#
#   tests/mpich/fetch.sh                      # idempotent: does nothing if already extracted
#   MPICH_FETCH_FORCE=1 tests/mpich/fetch.sh  # wipe build/src and extract again
#
# Source: Debian bookworm's `mpich` source package (4.0.2). It is downloaded with apt-get through
# a PRIVATE apt configuration (own sources list, lists and cache directories under build/apt), so
# the system's apt state is not touched. The SHA-256 of the orig tarball is checked against the
# .dsc, and only <top>/test/mpi/ is extracted.
#
# Result: build/src/mpich-<ver>/test/mpi/, described by build/src/MPICH_TREE
# (shell syntax: MPICH_VERSION=..., MPICH_TESTDIR=<path relative to build/src>).
#
# Environment: MPICH_BUILD_DIR (default tests/mpich/build), MPICH_DEBIAN_MIRROR,
# MPICH_DEBIAN_SUITE (default bookworm).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${MPICH_BUILD_DIR:-$HERE/build}
SRC=$BUILD/src
DL=$BUILD/download
SUITE=${MPICH_DEBIAN_SUITE:-bookworm}

log() { echo "fetch.sh: $*" >&2; }

if [ "${MPICH_FETCH_FORCE:-0}" = 1 ]; then
    rm -rf "$SRC"
fi

# ---------------------------------------------------------------- idempotency
if [ -f "$SRC/MPICH_TREE" ]; then
    # shellcheck disable=SC1091
    . "$SRC/MPICH_TREE"
    if [ -f "$SRC/$MPICH_TESTDIR/util/mtest.c" ] && [ -f "$SRC/$MPICH_TESTDIR/pt2pt/testlist.in" ]; then
        log "already extracted: $SRC/$MPICH_TESTDIR (MPICH $MPICH_VERSION)"
        exit 0
    fi
    log "stale $SRC/MPICH_TREE, extracting again"
    rm -f "$SRC/MPICH_TREE"
fi

mkdir -p "$SRC" "$DL"

debian_mirror() {
    # Copy the Debian mirror URL from the system's apt sources (one-line or deb822 format).
    if [ -n "${MPICH_DEBIAN_MIRROR:-}" ]; then echo "$MPICH_DEBIAN_MIRROR"; return; fi
    local f url
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        url=$(grep -hE '^[[:space:]]*(deb|deb-src)[[:space:]]' "$f" 2>/dev/null \
              | sed -E 's/\[[^]]*\]//' | awk '{print $2}' \
              | grep -E '/debian/?$' | grep -v -- '-security' | head -n1 || true)
        [ -n "$url" ] && { echo "${url%/}"; return; }
        url=$(grep -hE '^[[:space:]]*URIs:' "$f" 2>/dev/null | awk '{for (i=2;i<=NF;i++) print $i}' \
              | grep -E '/debian/?$' | grep -v -- '-security' | head -n1 || true)
        [ -n "$url" ] && { echo "${url%/}"; return; }
    done
    echo "http://deb.debian.org/debian"
}

command -v apt-get >/dev/null 2>&1 || { log "apt-get not found"; exit 1; }

apt=$BUILD/apt
mirror=$(debian_mirror)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[ -f "$keyring" ] && signed="[signed-by=$keyring] "
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$DL/mpich"
echo "deb-src ${signed}$mirror $SUITE main" > "$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$apt/lists"
      -o "Dir::Cache=$apt/cache"
      -o "APT::Sandbox::User=root")

find_orig() { ls "$DL"/mpich/mpich_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | awk 'NR == 1' || true; }

if [ -z "$(find_orig)" ]; then
    log "apt-get update with a private deb-src list ($mirror $SUITE main)"
    apt-get -q "${opts[@]}" update >&2
    log "apt-get source --download-only mpich"
    # The Debian packaging tarball is not needed; tolerate its failure as long as the .dsc and
    # the orig tarball arrived.
    (cd "$DL/mpich" && apt-get -q "${opts[@]}" source --download-only mpich >&2) || \
        log "apt-get source reported an error; checking what was downloaded"
fi

orig=$(find_orig)
dsc=$(ls "$DL"/mpich/mpich_*.dsc 2>/dev/null | awk 'NR == 1' || true)
[ -n "$orig" ] || { log "no mpich orig tarball downloaded"; exit 1; }
if [ -n "$dsc" ]; then
    sum=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$dsc")
    if [ -n "$sum" ] && ! echo "$sum  $orig" | sha256sum -c --status -; then
        log "SHA-256 of $orig does not match $dsc; removing it"; rm -f "$orig"; exit 1
    fi
fi

top=$(tar -tf "$orig" | awk -F/ 'NR == 1 { print $1 }')
ver=${top#mpich-}
rm -rf "${SRC:?}/$top"
tar -xf "$orig" -C "$SRC" "$top/test/mpi"
[ -f "$SRC/$top/test/mpi/util/mtest.c" ] || { log "no test/mpi/util/mtest.c in $orig"; exit 1; }
printf 'MPICH_VERSION=%s\nMPICH_TESTDIR=%s/test/mpi\n' "$ver" "$top" > "$SRC/MPICH_TREE"
log "extracted MPICH $ver test suite into $SRC/$top/test/mpi"
