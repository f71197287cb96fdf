#!/usr/bin/env bash
# Fetch the MPI Bugs Initiative (MBI) generators into tests/mbi/build/src/ (git-ignored).
#
#   tests/mbi/fetch.sh                     # idempotent: does nothing if already extracted
#   MBI_FETCH_FORCE=1 tests/mbi/fetch.sh   # wipe build/src and extract again
#
# Source: Debian bookworm's `simgrid` source package (SimGrid 3.32), whose orig tarball carries
# MBI under <top>/teshsuite/smpi/MBI/ (Python generators *Generator.py, generator_utils.py, MBI.py
# and scripts/). It is downloaded with `apt-get source --download-only` through a PRIVATE apt
# configuration (own sources list with a deb-src line built from the system's Debian mirror, own
# lists and cache directories under build/apt), so the system's apt state is not touched; the
# same approach as apps/hpl/fetch.sh and tests/mpich/fetch.sh. The SHA-256 of the orig tarball is
# checked against the .dsc, and only teshsuite/smpi/MBI/ is extracted.
#
# Result: build/src/<top>/teshsuite/smpi/MBI/, described by build/src/MBI_TREE
# (shell syntax: MBI_SIMGRID_VERSION=..., MBI_DIR=<path relative to build/src>).
#
# Exit codes: 0 extracted (or already there); 1 download or checksum failure (no network to the
# mirror, package missing, ...); 2 the tarball has no MBI tree.
#
# Environment: MBI_BUILD_DIR (default tests/mbi/build), MBI_DEBIAN_MIRROR (default: the first
# Debian mirror of /etc/apt/sources.list*, else http://deb.debian.org/debian),
# MBI_DEBIAN_SUITE (default bookworm).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${MBI_BUILD_DIR:-$HERE/build}
SRC=$BUILD/src
DL=$BUILD/download
SUITE=${MBI_DEBIAN_SUITE:-bookworm}
PKG=simgrid
SUBDIR=teshsuite/smpi/MBI

log() { echo "fetch.sh: $*" >&2; }

if [ "${MBI_FETCH_FORCE:-0}" = 1 ]; then
    rm -rf "$SRC"
fi

# ---------------------------------------------------------------- idempotency
if [ -f "$SRC/MBI_TREE" ]; then
    # shellcheck disable=SC1091
    . "$SRC/MBI_TREE"
    if [ -f "$SRC/$MBI_DIR/generator_utils.py" ] && [ -f "$SRC/$MBI_DIR/MBI.py" ]; then
        log "already extracted: $SRC/$MBI_DIR (SimGrid $MBI_SIMGRID_VERSION)"
        exit 0
    fi
    log "stale $SRC/MBI_TREE, extracting again"
    rm -f "$SRC/MBI_TREE"
fi

mkdir -p "$SRC" "$DL"

debian_mirror() {
    # Copy the Debian mirror URL from the system's apt sources (one-line or deb822 format).
    if [ -n "${MBI_DEBIAN_MIRROR:-}" ]; then echo "$MBI_DEBIAN_MIRROR"; return; fi
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
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$DL/$PKG"
echo "deb-src ${signed}$mirror $SUITE main" > "$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$apt/lists"
      -o "Dir::Cache=$apt/cache"
      -o "APT::Sandbox::User=root"
      -o "Acquire::Retries=1"
      -o "Acquire::http::Timeout=20")

find_orig() { ls "$DL/$PKG/${PKG}"_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | awk 'NR == 1' || true; }

if [ -z "$(find_orig)" ]; then
    log "apt-get update with a private deb-src list ($mirror $SUITE main)"
    if ! apt-get -q "${opts[@]}" update >&2; then
        log "apt-get update failed (no network to $mirror?)"; exit 1
    fi
    log "apt-get source --download-only $PKG"
    # The Debian packaging tarball is not needed; tolerate its failure as long as the .dsc and
    # the orig tarball arrived.
    (cd "$DL/$PKG" && apt-get -q "${opts[@]}" source --download-only "$PKG" >&2) || \
        log "apt-get source reported an error; checking what was downloaded"
fi

orig=$(find_orig)
dsc=$(ls "$DL/$PKG/${PKG}"_*.dsc 2>/dev/null | awk 'NR == 1' || true)
[ -n "$orig" ] || { log "no $PKG orig tarball downloaded"; exit 1; }
[ -n "$dsc" ] || { log "no $PKG .dsc downloaded: cannot check $orig"; exit 1; }
sum=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$dsc")
[ -n "$sum" ] || { log "$dsc lists no SHA-256 for $(basename "$orig")"; exit 1; }
if ! echo "$sum  $orig" | sha256sum -c --status -; then
    log "SHA-256 of $orig does not match $dsc; removing it"; rm -f "$orig"; exit 1
fi
log "SHA-256 of $(basename "$orig") matches $(basename "$dsc")"

top=$(tar -tf "$orig" | awk -F/ 'NR == 1 { print $1 }')
ver=$(sed -n 's/^Version: *//p' "$dsc" | awk 'NR == 1')
rm -rf "${SRC:?}/$top"
tar -xf "$orig" -C "$SRC" "$top/$SUBDIR" || { log "no $SUBDIR in $orig"; exit 2; }
[ -f "$SRC/$top/$SUBDIR/generator_utils.py" ] || { log "no $SUBDIR/generator_utils.py in $orig"; exit 2; }
printf 'MBI_SIMGRID_VERSION=%s\nMBI_DIR=%s/%s\n' "$ver" "$top" "$SUBDIR" > "$SRC/MBI_TREE"
log "extracted MBI from Debian $PKG $ver into $SRC/$top/$SUBDIR"
