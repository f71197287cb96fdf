#!/usr/bin/env bash
# compare.sh "<run.sh scenario args>" [sims...]: run one scenario on several simulators
# (default: sg ours-bm ours) and print one table row:
#   | scenario | sg | ours-bm | ours | ours-bm - sg | ours - sg |
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scen=$1; shift
sims=("$@"); [ ${#sims[@]} -eq 0 ] && sims=(sg ours-bm ours)
declare -A T
for s in "${sims[@]}"; do
    # shellcheck disable=SC2086
    out=$("$HERE/run.sh" "$s" $scen 2>/dev/null | tail -n1)
    T[$s]=$(echo "$out" | sed -n 's/.*time=\([^ ]*\).*/\1/p')
done
row="| $scen ${BLAS_MODEL_IDAMAX:+idamax=$BLAS_MODEL_IDAMAX }${HOSTFILE:+hostfile=$HOSTFILE }${BLAS_MODEL_SKIP_EMPTY:+skip-empty-dgemm }|"
for s in "${sims[@]}"; do row="$row ${T[$s]} |"; done
for s in "${sims[@]}"; do
    [ "$s" = sg ] && continue
    a=${T[sg]:-}; b=${T[$s]#\~}
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != FAIL ] && [ "$b" != FAIL ]; then
        row="$row $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.3f%%", (b - a) / a * 100 }') |"
    else row="$row ? |"; fi
done
echo "$row"
[ -n "${TABLE:-}" ] && echo "$row" >> "$TABLE"
