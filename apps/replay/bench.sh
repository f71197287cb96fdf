#!/usr/bin/env bash
# Replay speed: each program is run online (its computation executed and benchmarked, as SMPI),
# recorded (-trace-ti), then replayed (-replay) on the same platform; prints a table of both
# simulated times and wall times. Not a test: wall times depend on the machine.
#
#   apps/replay/bench.sh            # needs target/release/smpicc and smpirun
#
# Columns: simulated times (s) online and replayed, their relative difference, wall times (s) of
# the online run and of the replay, and the speed-up (online wall / replay wall). When SimGrid's
# smpirun is installed, a second table times a communication-only ring recorded and replayed by
# both simulators (replay has no computation to skip there: SMPI's own replayer is the yardstick).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN=${BIN:-$REPO/target/release}
PLATFORM=${PLATFORM:-$REPO/platforms/cluster_4.toml}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# name | source | np | program arguments
CASES=(
  "ring|apps/ring.c|4|-l 200 -s 100000"
  "collectives|apps/collectives.c|4|"
  "stencil 256x256x200|apps/stencil.c|4|-n 256 -m 256 -i 200"
  "stencil 512x512x100|apps/stencil.c|4|-n 512 -m 512 -i 100"
  "ti_calls|apps/replay/ti_calls.c|4|"
)

summary() { # the simulated time and wall time of smpirun's summary line
  sed -n 's/^\[smpirun\] simulated time: \([0-9.e+-]*\) s .* wall \([0-9.]*\) s .*/\1 \2/p' "$1"
}

printf '| program | ranks | simulated online (s) | simulated replay (s) | rel. diff | wall online (s) | wall replay (s) | speed-up |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for c in "${CASES[@]}"; do
  IFS='|' read -r name src np args <<< "$c"
  exe=$WORK/$(basename "$src" .c)
  "$BIN/smpicc" -O2 "$REPO/$src" -lm -o "$exe"
  # shellcheck disable=SC2086
  (cd "$WORK" && "$BIN/smpirun" -platform "$PLATFORM" -np "$np" --cfg=smpi/host-speed:1Gf \
      -trace-ti -trace-file trace "$exe" $args > /dev/null 2> online.err) || { cat "$WORK/online.err"; exit 1; }
  (cd "$WORK" && "$BIN/smpirun" -platform "$PLATFORM" -replay trace > /dev/null 2> replay.err) \
      || { cat "$WORK/replay.err"; exit 1; }
  read -r t_on w_on <<< "$(summary "$WORK/online.err")"
  read -r t_re w_re <<< "$(summary "$WORK/replay.err")"
  awk -v n="$name" -v np="$np" -v a="$t_on" -v b="$t_re" -v wa="$w_on" -v wb="$w_re" 'BEGIN {
    d = (a > b ? a - b : b - a) / a
    printf "| %s | %s | %.9f | %.9f | %.1e | %.3f | %.3f | %.1fx |\n", n, np, a, b, d, wa, wb, wa / wb }'
  rm -rf "$WORK"/trace*
done

# Communication only, at scale, against SMPI's own replayer: a 64-rank ring of 1000-byte
# messages (2000 laps) recorded and replayed by each simulator on the same platform, wall times
# of the whole smpirun (computation not simulated, so only communication is left to skip).
SG_RUN=/usr/bin/smpirun
SG_CC=/usr/bin/smpicc
if [ -x "$SG_RUN" ] && [ -x "$SG_CC" ]; then
  P64=$REPO/platforms/fat_tree_64.xml
  seq 0 63 | sed 's/^/node-/' > "$WORK/hosts64"
  "$BIN/smpicc" -O2 "$REPO/apps/ring.c" -lm -o "$WORK/ring_ours"
  "$SG_CC" -O2 "$REPO/apps/ring.c" -lm -o "$WORK/ring_sg" 2>/dev/null
  wall() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
  cd "$WORK"
  o_on=$(wall "$BIN/smpirun" -platform "$P64" -hostfile hosts64 -np 64 --cfg=smpi/simulate-computation:no \
    -trace-ti -trace-file ours ./ring_ours -l 2000 -s 1000)
  o_re=$(wall "$BIN/smpirun" -platform "$P64" -hostfile hosts64 -replay ours)
  s_on=$(wall "$SG_RUN" -platform "$P64" -hostfile hosts64 -np 64 --cfg=smpi/simulate-computation:no \
    -trace-ti --cfg=tracing/filename:sg ./ring_sg -l 2000 -s 1000)
  s_re=$(wall "$SG_RUN" -platform "$P64" -hostfile hosts64 -np 64 -replay sg)
  printf '\n| ring 64 ranks x 2000 laps, 1000 B, communication only | online (s) | replay (s) | speed-up |\n'
  printf '|---|---|---|---|\n'
  awk -v a="$o_on" -v b="$o_re" 'BEGIN { printf "| ours | %.2f | %.2f | %.1fx |\n", a, b, a / b }'
  awk -v a="$s_on" -v b="$s_re" 'BEGIN { printf "| SMPI 3.32 | %.2f | %.2f | %.1fx |\n", a, b, a / b }'
fi
