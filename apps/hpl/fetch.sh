#!/usr/bin/env bash
# Fetch the REAL, UNMODIFIED HPL sources into apps/hpl/build/src/ (git-ignored).
#
#   apps/hpl/fetch.sh            # idempotent: does nothing if a tree is already extracted
#   HPL_FETCH_FORCE=1 apps/hpl/fetch.sh   # wipe build/src and fetch again
#
# Order of preference:
#   1. netlib hpl-2.3.tar.gz (only if www.netlib.org answers within a few seconds;
#      the SHA-256 is checked),
#   2. Debian bookworm's `hpcc` source package, whose orig tarball carries HPL 2.0 under
#      hpcc-<ver>/hpl/. It is downloaded with apt-get through a PRIVATE apt configuration
#      (own sources list, lists and cache directories), so the system's apt state is not
#      touched. Only the hpl/ tree is extracted.
#
# Result: build/src/hpl-2.3/ or build/src/hpcc-<ver>/hpl/, described by build/src/HPL_TREE
# (shell syntax: HPL_FLAVOR=netlib|hpcc, HPL_DIR=<path relative to build/src>, HPL_VERSION=...).
#
# Environment: HPL_BUILD_DIR (default apps/hpl/build), HPL_NETLIB_URL, HPL_DEBIAN_MIRROR,
# HPL_SKIP_NETLIB=1 (go straight to Debian).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${HPL_BUILD_DIR:-$HERE/build}
SRC=$BUILD/src
DL=$BUILD/download
NETLIB_URL=${HPL_NETLIB_URL:-https://www.netlib.org/benchmark/hpl/hpl-2.3.tar.gz}
NETLIB_SHA256=32c5c17d22330e6f2337b681aded51637fb6008d3f0eb7c277b163fadd612830

log() { echo "fetch.sh: $*" >&2; }

if [ "${HPL_FETCH_FORCE:-0}" = 1 ]; then
    rm -rf "$SRC"
fi

# ---------------------------------------------------------------- idempotency
if [ -f "$SRC/HPL_TREE" ]; then
    # shellcheck disable=SC1091
    . "$SRC/HPL_TREE"
    if [ -f "$SRC/$HPL_DIR/Make.top" ] && [ -f "$SRC/$HPL_DIR/testing/ptest/HPL_pdinfo.c" ]; then
        log "already extracted: $SRC/$HPL_DIR ($HPL_FLAVOR HPL $HPL_VERSION)"
        exit 0
    fi
    log "stale $SRC/HPL_TREE, fetching again"
    rm -f "$SRC/HPL_TREE"
fi

mkdir -p "$SRC" "$DL"

# ---------------------------------------------------------------- 1. netlib
fetch_netlib() {
    [ "${HPL_SKIP_NETLIB:-0}" = 1 ] && return 1
    command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 || return 1
    local tgz=$DL/hpl-2.3.tar.gz
    if [ ! -s "$tgz" ]; then
        log "trying $NETLIB_URL (short timeout)"
        if command -v curl >/dev/null 2>&1; then
            curl -fsSL --connect-timeout 5 --max-time 120 -o "$tgz.part" "$NETLIB_URL" || { rm -f "$tgz.part"; return 1; }
        else
            timeout 120 wget -q -T 5 -t 1 -O "$tgz.part" "$NETLIB_URL" || { rm -f "$tgz.part"; return 1; }
        fi
        mv "$tgz.part" "$tgz"
    fi
    if ! echo "$NETLIB_SHA256  $tgz" | sha256sum -c --status -; then
        log "checksum mismatch for $tgz, discarding it"
        rm -f "$tgz"
        return 1
    fi
    rm -rf "$SRC/hpl-2.3"
    tar -xzf "$tgz" -C "$SRC"
    [ -f "$SRC/hpl-2.3/Make.top" ] || { log "hpl-2.3 tarball has no Make.top?"; return 1; }
    printf 'HPL_FLAVOR=netlib\nHPL_DIR=hpl-2.3\nHPL_VERSION=2.3\n' > "$SRC/HPL_TREE"
    log "extracted netlib HPL 2.3 into $SRC/hpl-2.3"
}

# ---------------------------------------------------------------- 2. Debian hpcc
debian_mirror() {
    # Copy the Debian mirror URL from the system's apt sources (one-line or deb822 format).
    if [ -n "${HPL_DEBIAN_MIRROR:-}" ]; then echo "$HPL_DEBIAN_MIRROR"; return; fi
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

fetch_hpcc() {
    command -v apt-get >/dev/null 2>&1 || { log "apt-get not found"; return 1; }
    local apt=$BUILD/apt mirror keyring opts signed=""
    mirror=$(debian_mirror)
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] && signed="[signed-by=$keyring] "
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$DL/hpcc"
    echo "deb-src ${signed}$mirror bookworm main" > "$apt/sources.list"
    opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
          -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$apt/lists"
          -o "Dir::Cache=$apt/cache"
          -o "APT::Sandbox::User=root")
    if ! ls "$DL"/hpcc/hpcc_*.orig.tar.gz >/dev/null 2>&1; then
        log "apt-get update with a private deb-src list ($mirror bookworm main)"
        apt-get -q "${opts[@]}" update >&2
        log "apt-get source --download-only hpcc"
        # The Debian packaging tarball (.debian.tar.xz) is not needed; tolerate its failure
        # as long as the .dsc and the orig tarball arrived.
        (cd "$DL/hpcc" && apt-get -q "${opts[@]}" source --download-only hpcc >&2) || \
            log "apt-get source reported an error; checking what was downloaded"
    fi
    local orig dsc sum
    orig=$(ls "$DL"/hpcc/hpcc_*.orig.tar.gz 2>/dev/null | awk 'NR == 1' || true)
    dsc=$(ls "$DL"/hpcc/hpcc_*.dsc 2>/dev/null | awk 'NR == 1' || true)
    [ -n "$orig" ] || { log "no hpcc orig tarball downloaded"; return 1; }
    if [ -n "$dsc" ]; then
        sum=$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$dsc")
        if [ -n "$sum" ] && ! echo "$sum  $orig" | sha256sum -c --status -; then
            log "SHA-256 of $orig does not match $dsc"; rm -f "$orig"; return 1
        fi
    fi
    local top ver
    top=$(tar -tzf "$orig" | awk -F/ 'NR == 1 { print $1 }')
    ver=${top#hpcc-}
    rm -rf "${SRC:?}/$top"
    tar -xzf "$orig" -C "$SRC" "$top/hpl"
    [ -f "$SRC/$top/hpl/Make.top" ] || { log "no hpl/Make.top in $orig"; return 1; }
    local hplver
    hplver=$(sed -n 's/^ *HPL \([0-9.]*\) - .*/\1/p' "$SRC/$top/hpl/README" | awk 'NR == 1')
    printf 'HPL_FLAVOR=hpcc\nHPL_DIR=%s/hpl\nHPL_VERSION=%s\nHPCC_VERSION=%s\n' \
        "$top" "${hplver:-2.0}" "$ver" > "$SRC/HPL_TREE"
    log "extracted HPL ${hplver:-?} from Debian hpcc $ver into $SRC/$top/hpl"
}

if fetch_netlib; then exit 0; fi
log "netlib not reachable; falling back to Debian's hpcc source package"
fetch_hpcc
