#!/usr/bin/env bash
# Engine-speed benchmark (prints a table): a ring of 1024 ranks, each doing
# 1000 MPI_Sendrecv of 8 bytes with its right neighbour, on the 1024-host fat
# tree, computation not simulated; plus start-up time and memory at 1024 and
# 4096 ranks (one Sendrecv each). When SimGrid's smpirun is installed
# (/usr/bin/smpirun) the same runs go through SMPI 3.32 and the ratio is shown.
#
# Usage: scripts/bench_engine.sh [iterations]   (default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ITERS=${1:-1000}
OURS_RUN=$REPO/target/release/smpirun
OURS_CC=$REPO/target/release/smpicc
SG_RUN=/usr/bin/smpirun
SG_CC=/usr/bin/smpicc
WORK=$(mktemp -d /tmp/bench-engine.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cargo build --release -p smpi-shim >/dev/null 2>&1
"$OURS_CC" -O2 apps/bench/sendrecv_ring.c -o "$WORK/ring_ours"
have_sg=0
if [ -x "$SG_RUN" ] && [ -x "$SG_CC" ]; then
  "$SG_CC" -O2 apps/bench/sendrecv_ring.c -o "$WORK/ring_sg" 2>/dev/null && have_sg=1
fi

# SimGrid needs XML platforms and hostfiles: generate the same fat trees.
xml() { # hosts topo file
  cat >"$3" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="ft" prefix="node-" suffix="" radical="0-$(($1 - 1))" speed="1Gf" bw="10GBps" lat="1us"
           sharing_policy="SPLITDUPLEX" topology="FAT_TREE" topo_parameters="$2"/>
</platform>
EOF
}
xml 1024 "2;32,32;1,32;1,1" "$WORK/ft1024.xml"
xml 4096 "3;16,16,16;1,16,16;1,1,1" "$WORK/ft4096.xml"
for n in 1024 4096; do seq 0 $((n - 1)) | sed 's/^/node-/' >"$WORK/hosts$n"; done

measure() { # label np iters runner cc-binary platform hostfile
  local out
  out=$( { /usr/bin/time -f "TIME %e %M" "$4" -platform "$6" -hostfile "$7" -np "$2" \
      --cfg=smpi/simulate-computation:no "$5" "$3" 2>&1 >/dev/stdout; } 2>&1 )
  local sim wall rss
  sim=$(echo "$out" | sed -n 's/.*simulated_time=\([0-9.e+-]*\).*/\1/p' | head -1)
  wall=$(echo "$out" | awk '/^TIME/ {print $2}')
  rss=$(echo "$out" | awk '/^TIME/ {print $3}')
  echo "$sim $wall $rss"
}

printf '%-28s %14s %10s %12s %12s | %10s %12s %8s\n' scenario "simulated s" "wall s" "msgs/s" "maxRSS MB" "SMPI wall" "SMPI msgs/s" speedup
line() { # label np iters platform-ours platform-sg hostfile
  read -r sim wall rss <<<"$(measure "$1" "$2" "$3" "$OURS_RUN" "$WORK/ring_ours" "$4" "$6")"
  local msgs=$(($2 * $3)) rate
  rate=$(python3 -c "print(f'{$msgs/$wall:.0f}' if $wall > 0 else 'inf')")
  local sg="n/a" sgrate="n/a" ratio="n/a"
  if [ $have_sg = 1 ]; then
    read -r ssim swall _ <<<"$(measure "$1" "$2" "$3" "$SG_RUN" "$WORK/ring_sg" "$5" "$6")"
    sg=$swall
    sgrate=$(python3 -c "print(f'{$msgs/$swall:.0f}')")
    ratio=$(python3 -c "print(f'{$swall/$wall:.1f}x')")
    [ "$ssim" = "$sim" ] || echo "  note: simulated times differ: ours $sim, SMPI $ssim" >&2
  fi
  printf '%-28s %14s %10s %12s %12.1f | %10s %12s %8s\n' "$1" "$sim" "$wall" "$rate" "$(python3 -c "print($rss/1024)")" "$sg" "$sgrate" "$ratio"
}
line "ring 1024 x $ITERS sendrecv" 1024 "$ITERS" "$WORK/ft1024.xml" "$WORK/ft1024.xml" "$WORK/hosts1024"
line "start-up 1024 ranks" 1024 1 "$WORK/ft1024.xml" "$WORK/ft1024.xml" "$WORK/hosts1024"
line "start-up 4096 ranks" 4096 1 "$WORK/ft4096.xml" "$WORK/ft4096.xml" "$WORK/hosts4096"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB; $(date -u +%F)"
