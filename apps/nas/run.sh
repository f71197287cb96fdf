#!/usr/bin/env bash
# Build SimGrid's NAS EP, IS and DT (class S) with our smpicc and run them with our smpirun, and,
# when SimGrid is installed (/usr/bin/smpicc, /usr/bin/smpirun), with SMPI 3.32 too; prints a
# Markdown table: benchmark, ranks, verification, both simulated times ("Time in seconds" of the
# benchmark, and smpirun's), both wall times.
#
#   apps/nas/run.sh [extra smpirun options, e.g. --cfg=smpi/simulate-computation:no]
#
# Platform: SimGrid's small_platform.xml (5 hosts; ranks wrap around), --cfg=smpi/host-speed:1Gf.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN=${BIN:-$REPO/target/release}
SG=${SMPI_BIN:-/usr/bin}
NAS=$("$HERE/fetch.sh")
# shellcheck disable=SC1091
. "$REPO/tests/simgrid_examples/build/EXAMPLES"
PLATFORM=$SIMGRID_EXAMPLES/platforms/small_platform.xml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
EXTRA=("$@")

build() { # <smpicc> <out dir>
  mkdir -p "$2"
  "$1" -O2 "$NAS/ep.c" "$NAS/nas_common.c" -lm -o "$2/ep"
  "$1" -O2 "$NAS/is.c" "$NAS/nas_common.c" -lm -o "$2/is"
  "$1" -O2 "$NAS/dt.c" "$NAS/nas_common.c" "$NAS/DGraph.c" -lm -o "$2/dt"
}
build "$BIN/smpicc" "$WORK/ours"
have_sg=0
if [ -x "$SG/smpicc" ] && [ -x "$SG/smpirun" ]; then build "$SG/smpicc" "$WORK/smpi" 2>/dev/null && have_sg=1; fi

# run <smpirun> <dir> <np> <prog> <args...>: prints "verified simulated_time wall" (the simulated
# time of the whole run: ours from smpirun's summary, SMPI's from smpi/display-timing)
run() {
  local runner=$1 dir=$2 np=$3; shift 3
  local start end out
  start=$(date +%s.%N)
  out=$(cd "$dir" && "$runner" -np "$np" -platform "$PLATFORM" --cfg=smpi/host-speed:1Gf --cfg=smpi/display-timing:yes "${EXTRA[@]}" "$@" \
        --log=smpi_config.thres:warning --log=xbt_cfg.thres:warning 2>&1) || true
  end=$(date +%s.%N)
  local v t
  v=$(sed -n 's/^ *Verification *= *\([A-Z]*\).*/\1/p' <<< "$out" | head -n1)
  t=$(sed -n -e 's/^\[smpirun\] simulated time: \([0-9.e+-]*\) s .*/\1/p' \
        -e 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' <<< "$out" | head -n1)
  echo "${v:-none} ${t:--} $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')"
}

printf '| benchmark | class | ranks | verified (ours) | verified (SMPI) | simulated (s, ours) | simulated (s, SMPI) | wall (s, ours) | wall (s, SMPI) |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for c in "ep|4|S" "is|4|S" "dt|12|S BH" "dt|12|S WH" "dt|12|S SH"; do
  IFS='|' read -r b np args <<< "$c"
  # shellcheck disable=SC2086
  read -r v1 t1 w1 <<< "$(run "$BIN/smpirun" "$WORK/ours" "$np" "./$b" "$np" $args)"
  v2=- t2=- w2=-
  # shellcheck disable=SC2086
  [ $have_sg = 1 ] && read -r v2 t2 w2 <<< "$(run "$SG/smpirun" "$WORK/smpi" "$np" "./$b" "$np" $args)"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$b" "$args" "$np" "$v1" "$v2" "$t1" "$t2" "$w1" "$w2"
done
