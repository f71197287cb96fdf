#!/usr/bin/env bash
# Fetch SimGrid 3.32's examples/smpi/NAS (EP, IS, DT in C; never committed): extracted with
# SimGrid's other examples by tests/simgrid_examples/fetch.sh from the Debian simgrid source
# package (downloaded by tests/mbi/fetch.sh). Prints the NAS directory on stdout.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$REPO/tests/simgrid_examples/fetch.sh" >&2
# shellcheck disable=SC1091
. "$REPO/tests/simgrid_examples/build/EXAMPLES"
echo "$SIMGRID_EXAMPLES/smpi/NAS"
