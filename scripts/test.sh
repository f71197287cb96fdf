#!/usr/bin/env bash
# Runs every test: a fast subset of the MPICH test suite (fetched from Debian's
# mpich source package and built with smpicc, smpiff and smpif90; every
# selected test must pass),
# then the unit, property, platform, kernel and end-to-end tests (the
# end-to-end tests build C, C++ and Fortran programs with smpicc, smpicxx and
# smpif90, including the real HPL and SimGrid's NAS kernels, and run them with
# smpirun). Ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins
python3 tests/readme_commands.py
python3 tests/mpich/run.py --fast
# The same for the Fortran and C++ directories (f77, f90, cxx): 15 tests, a few seconds.
python3 tests/mpich/run_fortran.py --fast
# SimGrid's replay and NAS examples (the replay oracle and the NAS tests skip without them).
tests/simgrid_examples/fetch.sh || echo "warning: SimGrid's examples could not be fetched: their tests are skipped" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --release --workspace 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
exit "$status"
