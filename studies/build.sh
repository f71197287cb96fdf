#!/usr/bin/env bash
# Builds what the ready-made studies run: the C benchmarks into studies/bin/ (with our smpicc)
# and the real HPL (apps/hpl/build.sh -> apps/hpl/build/xhpl).
# Usage: studies/build.sh [path/to/smpicc]   (default: target/release/smpicc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
smpicc=${1:-$root/target/release/smpicc}
[ -x "$smpicc" ] || { echo "studies/build.sh: no $smpicc (cargo build --release -p smpi-shim)" >&2; exit 1; }
mkdir -p "$here/bin"
"$smpicc" -O2 "$root/apps/pingpong.c" -o "$here/bin/pingpong"
"$smpicc" -O2 "$root/apps/coll/coll_time.c" -o "$here/bin/coll_time"
[ -x "$root/apps/hpl/build/xhpl" ] || "$root/apps/hpl/build.sh" "$smpicc"
echo "studies/build.sh: built studies/bin/pingpong, studies/bin/coll_time, apps/hpl/build/xhpl" >&2
