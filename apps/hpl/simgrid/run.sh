#!/usr/bin/env bash
# Run one HPL scenario on the real SimGrid ("sg") or on our simulator ("ours": apps/hpl/build/xhpl
# with the model file; "ours-bm": our smpirun running the blas_model.c xhpl) and print one
# summary line:  <sim> <label> time=<HPL time> gflops=<..> wall=<s> line="<HPL result line>"
#
#   apps/hpl/simgrid/run.sh sg|ours  --n 2000 --p 2 --q 2 [gen_dat options] [-- extra smpirun args]
#
# Defaults: --nb 128 --bcast 1 --depth 1 --swap 0 --threshold -1 (the reference scenario).
# Platform: platforms/fat_tree_64.xml (env PLATFORM: another SimGrid XML file), hosts node-0..node-63 in numeric order (hostfile
# shared/reference/smpi-3.32/hosts_64.txt) for both simulators.
# Environment: SG_XHPL (default apps/hpl/simgrid/build/xhpl), OURS_XHPL (apps/hpl/build/xhpl),
# OURS_SMPIRUN (target/release/smpirun, else /tmp/mybuild-target/release/smpirun),
# MODEL (default apps/hpl/models/smpi_reference.toml), KEEP_DIR (keep the run dir and print it),
# TIMEOUT (seconds per run, default 900), LOG (file to append the summary line to), HOSTFILE (another hostfile; "none" = no -hostfile),
# BLAS_MODEL_IDAMAX=loop|zero|random (idamax variant of blas_model.c; sg and ours-bm only).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
sim=$1; shift
gen=(--nb 128 --bcast 1 --depth 1 --swap 0 --threshold -1)
extra=()
label=""
while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
    gen+=("$1" "$2"); label="$label $1 $2"; shift 2
done
PLAT=${PLATFORM:-$REPO/platforms/fat_tree_64.xml}
HOSTS=${HOSTFILE:-/work/shared/reference/smpi-3.32/hosts_64.txt}
hf=(-hostfile "$HOSTS")
[ "$HOSTS" = none ] && hf=()   # HOSTFILE=none: no -hostfile (simulator's default placement)
d=$(mktemp -d /tmp/hplrun.XXXXXX)
"$REPO/apps/hpl/gen_dat.sh" "${gen[@]}" -o "$d/HPL.dat" 2>/dev/null
P=$(sed -n 11p "$d/HPL.dat" | awk '{print $1}'); Q=$(sed -n 12p "$d/HPL.dat" | awk '{print $1}')
NP=$((P * Q))
cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf
     --cfg=smpi/auto-shared-malloc-thresh:33554432)
t0=$(date +%s.%N)
case $sim in
sg)
    XHPL=${SG_XHPL:-$HERE/build/xhpl}
    (cd "$d" && timeout "${TIMEOUT:-900}" /usr/bin/smpirun -platform "$PLAT" "${hf[@]}" -np $NP \
        --cfg=smpi/shared-malloc:global "${cfg[@]}" "${extra[@]}" "$XHPL") > "$d/out" 2> "$d/err" || true
    ;;
ours-bm)
    # the xhpl built by `SG_SMPICC=target/release/smpicc VARIANT=ours build.sh`: same
    # blas_model.c as the SimGrid build, run by our smpirun WITHOUT a model file
    XHPL=${OURS_BM_XHPL:-$HERE/build-ours/xhpl}
    RUN=${OURS_SMPIRUN:-$REPO/target/release/smpirun}
    [ -x "$RUN" ] || RUN=/tmp/mybuild-target/release/smpirun
    (cd "$d" && timeout "${TIMEOUT:-900}" "$RUN" -platform "$PLAT" "${hf[@]}" -np $NP "${cfg[@]}" \
        "${extra[@]}" "$XHPL") > "$d/out" 2> "$d/err" || true
    ;;
ours)
    XHPL=${OURS_XHPL:-$REPO/apps/hpl/build/xhpl}
    RUN=${OURS_SMPIRUN:-$REPO/target/release/smpirun}
    [ -x "$RUN" ] || RUN=/tmp/mybuild-target/release/smpirun
    (cd "$d" && timeout "${TIMEOUT:-900}" "$RUN" -platform "$PLAT" "${hf[@]}" -np $NP "${cfg[@]}" \
        -model "${MODEL:-$REPO/apps/hpl/models/smpi_reference.toml}" "${extra[@]}" "$XHPL") > "$d/out" 2> "$d/err" || true
    ;;
*) echo "usage: run.sh sg|ours|ours-bm ..." >&2; exit 2 ;;
esac
t1=$(date +%s.%N)
line=$(grep -E '^W[RC][0-9]' "$d/out" | head -n1 | tr -s ' ' || true)
time=$(echo "$line" | awk '{print $6}'); gf=$(echo "$line" | awk '{print $7}')
# precise time: max over ranks of the pdgesv_time lines (xhpl of apps/hpl/simgrid only);
# otherwise from the Gflops (4 digits): t = (2/3 N^3 + 3/2 N^2) / (Gflops * 1e9).
ptime=$(awk '$1=="pdgesv_time" { if ($3 > m) m = $3; n++ } END { if (n) printf "%.9f", m }' "$d/err")
if [ -z "$ptime" ] && [ -n "$gf" ]; then
    N=$(echo "$line" | awk '{print $2}')
    ptime=$(awk -v n="$N" -v g="$gf" 'BEGIN { printf "~%.5f", (2.0/3*n*n*n + 1.5*n*n) / (g * 1e9) }')
fi
time=${ptime:-$time}
wall=$(echo "$t1 - $t0" | bc)
[ -n "${BLAS_MODEL_IDAMAX:-}" ] && label="$label idamax=$BLAS_MODEL_IDAMAX"
[ "$HOSTS" = none ] && label="$label nohostfile"
[ -n "${BLAS_MODEL_SKIP_EMPTY:-}" ] && label="$label skip-empty-dgemm"
summary="$sim |$label ${extra[*]:-} | time=${time:-FAIL} gflops=${gf:-} wall=${wall}"
echo "$summary"
[ -n "${LOG:-}" ] && echo "$summary" >> "$LOG"
if [ -z "$line" ] || [ -n "${KEEP_DIR:-}" ]; then
    echo "run dir: $d" >&2
    [ -z "$line" ] && tail -n 20 "$d/err" >&2
else
    rm -rf "$d"
fi
