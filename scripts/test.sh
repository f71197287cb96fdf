#!/usr/bin/env bash
# Runs every test: a fast subset of the MPICH test suite (fetched from Debian's
# mpich source package and built with smpicc; every selected test must pass),
# then the unit, property, platform, kernel and end-to-end tests (the
# end-to-end tests build C programs with smpicc, including the real HPL, and
# run them with smpirun).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins
python3 tests/mpich/run.py --fast
cargo test --release --workspace
