#!/usr/bin/env bash
# Write an HPL input file (HPL.dat format, 31 lines) for apps/hpl/build/xhpl.
#
# Both builds read it from the working directory under the name HPL.dat: netlib HPL 2.3
# natively, the HPL 2.0 of Debian's hpcc through apps/hpl/hpl_main.c (which redirects HPCC's
# hard-wired "hpccinf.txt" to HPL.dat).
#
# Usage: gen_dat.sh --n N --nb NB --p P --q Q [options]     (writes ./HPL.dat)
#   --n LIST         problem sizes, comma-separated (e.g. 500 or 500,1000)
#   --nb LIST        block sizes
#   --p LIST --q LIST  process grids, pairwise (P[i] x Q[i]); same length
#   --bcast LIST     panel broadcast 0=1ring 1=1ringM 2=2ring 3=2ringM 4=long 5=longM  [1]
#   --depth LIST     look-ahead depth (>= 0)                                           [1]
#   --swap S         0=binary exchange 1=spread-roll (long) 2=mix                      [2]
#   --swap-threshold T  column threshold for --swap 2                                  [64]
#   --pfact LIST     panel factorization 0=left 1=Crout 2=right                        [1]
#   --rfact LIST     recursive panel factorization 0=left 1=Crout 2=right              [2]
#   --nbmin LIST     recursion stopping criterion (>= 1)                               [4]
#   --ndiv LIST      panels in recursion (>= 2)                                        [2]
#   --threshold X    residual check threshold; <= 0 skips the checks                  [16.0]
#   --pmap M         0=row-major 1=column-major process mapping                        [0]
#   --l1 F           L1 form: 0=transposed 1=not transposed                            [0]
#   --u F            U form:  0=transposed 1=not transposed                            [0]
#   --equil E        equilibration 0/1                                                 [1]
#   --align A        memory alignment in doubles (> 0)                                 [8]
#   --device D       output: 6=stdout 7=stderr other=file named by --outfile           [6]
#   --outfile NAME   output file name used when --device is not 6 or 7               [HPL.out]
#   -o FILE          where to write the input file; "-" = stdout                      [HPL.dat]
# Every combination of the list values is run by HPL (at most 20 values per list).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }
die() { echo "gen_dat.sh: $*" >&2; exit 2; }

N="" NB="" P="" Q=""
BCAST=1 DEPTH=1 SWAP=2 SWAPTHR=64 PFACT=1 RFACT=2 NBMIN=4 NDIV=2 THRESH=16.0
PMAP=0 L1=0 UFORM=0 EQUIL=1 ALIGN=8 DEVICE=6 OUTFILE=HPL.out OUT=HPL.dat

while [ $# -gt 0 ]; do
    opt=$1
    case $opt in
        -h|--help) usage 0 ;;
    esac
    [ $# -ge 2 ] || die "option $opt needs a value"
    val=$2; shift 2
    case $opt in
        --n|-N) N=$val ;;
        --nb|-NB) NB=$val ;;
        --p|-P) P=$val ;;
        --q|-Q) Q=$val ;;
        --bcast) BCAST=$val ;;
        --depth) DEPTH=$val ;;
        --swap) SWAP=$val ;;
        --swap-threshold) SWAPTHR=$val ;;
        --pfact) PFACT=$val ;;
        --rfact) RFACT=$val ;;
        --nbmin) NBMIN=$val ;;
        --ndiv) NDIV=$val ;;
        --threshold) THRESH=$val ;;
        --pmap) PMAP=$val ;;
        --l1) L1=$val ;;
        --u) UFORM=$val ;;
        --equil) EQUIL=$val ;;
        --align) ALIGN=$val ;;
        --device) DEVICE=$val ;;
        --outfile) OUTFILE=$val ;;
        -o) OUT=$val ;;
        *) die "unknown option $opt (see --help)" ;;
    esac
done
[ -n "$N" ] && [ -n "$NB" ] && [ -n "$P" ] && [ -n "$Q" ] || die "--n, --nb, --p and --q are required (see --help)"

# list_of NAME VALUE MIN MAX: check a comma/space separated list of integers, print
# "<count>|<values separated by single spaces>" (HPL_pdinfo needs single spaces and no
# leading blank on value lines).
list_of() {
    local name=$1 value=$2 min=$3 max=$4 v out="" count=0
    for v in ${value//,/ }; do
        [[ $v =~ ^[0-9]+$ ]] || die "$name: '$v' is not a non-negative integer"
        [ "$v" -ge "$min" ] || die "$name: $v < $min"
        [ -z "$max" ] || [ "$v" -le "$max" ] || die "$name: $v > $max"
        out="${out:+$out }$v"; count=$((count + 1))
    done
    [ $count -ge 1 ] || die "$name: empty list"
    [ $count -le 20 ] || die "$name: more than 20 values (HPL_MAX_PARAM)"
    echo "$count|$out"
}
one_of() { # NAME VALUE MIN MAX: a single integer
    local r; r=$(list_of "$@"); [ "${r%%|*}" = 1 ] || die "$1: a single value is expected"; echo "${r#*|}"
}

Ns=$(list_of N "$N" 0 "")
NBs=$(list_of NB "$NB" 1 "")
Ps=$(list_of P "$P" 1 "")
Qs=$(list_of Q "$Q" 1 "")
[ "${Ps%%|*}" = "${Qs%%|*}" ] || die "--p and --q must have the same number of values"
PFs=$(list_of PFACT "$PFACT" 0 2)
NBMs=$(list_of NBMIN "$NBMIN" 1 "")
NDVs=$(list_of NDIV "$NDIV" 2 "")
RFs=$(list_of RFACT "$RFACT" 0 2)
BCs=$(list_of BCAST "$BCAST" 0 5)
DHs=$(list_of DEPTH "$DEPTH" 0 "")
SWAP=$(one_of SWAP "$SWAP" 0 2)
SWAPTHR=$(one_of "swapping threshold" "$SWAPTHR" 0 "")
PMAP=$(one_of PMAP "$PMAP" 0 1)
L1=$(one_of L1 "$L1" 0 1)
UFORM=$(one_of U "$UFORM" 0 1)
EQUIL=$(one_of EQUIL "$EQUIL" 0 1)
ALIGN=$(one_of ALIGN "$ALIGN" 1 "")
DEVICE=$(one_of device "$DEVICE" 0 "")
[[ $THRESH =~ ^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$ ]] || die "threshold: '$THRESH' is not a number"
[[ $OUTFILE =~ ^[^[:space:]]+$ ]] || die "output file name must be one word"

row() { # VALUE COMMENT: value padded to 13 columns, then the comment
    local v=$1; shift
    if [ ${#v} -lt 13 ]; then printf '%-13s%s\n' "$v" "$*"; else printf '%s %s\n' "$v" "$*"; fi
}

emit() {
    echo "HPLinpack benchmark input file"
    echo "Generated by apps/hpl/gen_dat.sh"
    row "$OUTFILE" "output file name (if any)"
    row "$DEVICE" "device out (6=stdout,7=stderr,file)"
    row "${Ns%%|*}" "# of problems sizes (N)"
    row "${Ns#*|}" "Ns"
    row "${NBs%%|*}" "# of NBs"
    row "${NBs#*|}" "NBs"
    row "$PMAP" "PMAP process mapping (0=Row-,1=Column-major)"
    row "${Ps%%|*}" "# of process grids (P x Q)"
    row "${Ps#*|}" "Ps"
    row "${Qs#*|}" "Qs"
    row "$THRESH" "threshold"
    row "${PFs%%|*}" "# of panel fact"
    row "${PFs#*|}" "PFACTs (0=left, 1=Crout, 2=Right)"
    row "${NBMs%%|*}" "# of recursive stopping criterium"
    row "${NBMs#*|}" "NBMINs (>= 1)"
    row "${NDVs%%|*}" "# of panels in recursion"
    row "${NDVs#*|}" "NDIVs"
    row "${RFs%%|*}" "# of recursive panel fact."
    row "${RFs#*|}" "RFACTs (0=left, 1=Crout, 2=Right)"
    row "${BCs%%|*}" "# of broadcast"
    row "${BCs#*|}" "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"
    row "${DHs%%|*}" "# of lookahead depth"
    row "${DHs#*|}" "DEPTHs (>=0)"
    row "$SWAP" "SWAP (0=bin-exch,1=long,2=mix)"
    row "$SWAPTHR" "swapping threshold"
    row "$L1" "L1 in (0=transposed,1=no-transposed) form"
    row "$UFORM" "U  in (0=transposed,1=no-transposed) form"
    row "$EQUIL" "Equilibration (0=no,1=yes)"
    row "$ALIGN" "memory alignment in double (> 0)"
}

content=$(emit)
long=$(printf '%s\n' "$content" | awk 'length > 253 { print NR }' | tr '\n' ' ')
[ -z "$long" ] || die "line(s) ${long% } longer than HPL_pdinfo reads (fgets of 254 bytes)"
if [ "$OUT" = - ]; then
    printf '%s\n' "$content"
else
    printf '%s\n' "$content" > "$OUT"
    echo "gen_dat.sh: wrote $OUT" >&2
fi
