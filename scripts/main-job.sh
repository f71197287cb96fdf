#!/usr/bin/env bash
# The main job on a fresh machine: build the simulator, fetch and build the real
# HPL with smpicc, and emulate a small HPL run (8x8 grid, N=10000, NB=128) on the
# shipped 64-host fat tree with modelled BLAS and memory folding.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

echo "== build the simulator (scripts/build-dist.sh: LTO + PGO; trains on a small HPL run)"
scripts/build-dist.sh

echo "== fetch and build HPL (apps/hpl/build.sh)"
apps/hpl/build.sh "$REPO/target/dist/smpicc"

RUN=$(mktemp -d /tmp/hpl-main-job.XXXXXX)
apps/hpl/gen_dat.sh --n 10000 --nb 128 --p 8 --q 8 --bcast 1 --depth 1 --swap 0 --threshold -1 -o "$RUN/HPL.dat" >/dev/null
echo "== HPL 8x8, N=10000 on platforms/fat_tree.toml (run dir $RUN)"
cd "$RUN"
"$REPO/target/dist/smpirun" -platform "$REPO/platforms/fat_tree.toml" -np 64 \
  --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
  --cfg=smpi/auto-shared-malloc-thresh:33554432 --cfg=smpi/auto-shared-malloc-cow-thresh:1048576 \
  -model "$REPO/apps/hpl/models/smpi_reference.toml" \
  --json "$RUN/summary.json" "$REPO/apps/hpl/build/xhpl" | grep -E "^(T/V|W[RC]|-{10})" || true
echo "summary: $RUN/summary.json"
