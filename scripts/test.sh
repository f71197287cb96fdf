#!/usr/bin/env bash
# Runs every test: unit, property, platform, kernel and end-to-end tests
# (the end-to-end tests build C programs with smpicc and run them with smpirun).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins
cargo test --release --workspace
