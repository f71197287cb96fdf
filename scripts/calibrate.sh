#!/usr/bin/env bash
# Calibrate this machine with a REAL MPI (Debian's Open MPI) and a REAL BLAS (OpenBLAS):
# network (apps/calibration/calib_net, 2 ranks) and compute kernels (calib_compute, one
# process per core, all cores busy; once with the uniform-product dgemm design and every
# kernel, once with dgemm at K = NB = 128 for HPL). The CSV files (apps/calibration/FORMAT.md)
# and a manifest.json land in the output directory, with machine-probe.tsv: the machine's speed
# (calib_probe, HPL's update dgemm on every core at once, 3 times) right before and right after
# the compute runs, which smpi-validate compares with the same probe taken before each real run.
#
#   scripts/calibrate.sh [--quick|--full] [--out DIR] [--seed S] [--nb K] [--lda L] [--nice N]
#                        [--keep-blas-env] [--heldout-per-qd H] [--heldout-reps R]
#                        [--parts K] [--between CMD] [--setup-only]
#
#   --quick          about a minute (default)          --full   at most ~20 minutes on 2 cores
#   --out DIR        output directory (created)         [calibration-<host>-<UTC time>]
#   --seed S         seed of the designs: network and compute use S, the fixed-K dgemm/dtrsm run
#                    uses S+1 (distinct file names; its metadata says fixed_k)          [1]
#   --nb K           K of the fixed-K run (HPL's NB: dgemm's K, dtrsm's triangle, at most K
#                    rows per HPL_dlaswp* call); 0 skips that run                      [128]
#   --lda L          both compute runs with HPL's operand layout (calib_compute --lda L):
#                    the operands HPL takes from its local matrix are blocks of a matrix
#                    with leading dimension max(L, rows), and HPL_dlaswp* gather and swap
#                    rows from all of it; 0: tight operands (leading dimension = rows)    [0]
#   --nice N         run the measures under `nice -n N` (a shared machine)               [0]
#   --heldout-per-qd H  the network run also times H held-out ping-pong sizes per quarter decade
#                    (calib_net --heldout-per-quarter-decade: kind pingpong_heldout, interleaved
#                    with the calibration's measures, so under the same machine states; never
#                    fitted, smpi-validate checks the fitted model on them); 0: none   [1]
#   --heldout-reps R repetitions of each held-out size (8000, ~35 s: medians' 95 % CIs
#                    within +-1.4 % above 4 kB and +-2-5 % below, where the clock's 10 ns steps
#                    are 1-2 % of a round trip, on this VM, 2026-11-26; 2000: up to +-5.5 %,
#                    too wide to tell a 5 % miss from sampling)                  [full 8000 | quick 50]
#   --parts K        the compute calibration as K parts, each a design of its own (seeds S,
#                    S+2, ...; fixed-K runs S+1, S+3, ...) with 1/K of the mode's dgemm
#                    grids and draws of the other kernels (rounded up), timed one after the
#                    other: with --between, other measurements go between them        [1]
#   --between CMD    run `CMD I K` after compute part I (of K), with OPENBLAS_CORETYPE and
#                    OPENBLAS_L2_SIZE as this script found them: scripts/validate-here.sh --interleave measures
#                    a block of its real HPL runs there, so that the calibration and the
#                    runs see the same machine states; its output goes to logs/between-I.log
#                    and its dates to logs/steps.tsv
#   --setup-only     install the packages, build the real HPL and the programs, measure nothing
#   --keep-blas-env  keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (by default both are
#                    unset for the runs: on some machines they select a kernel ~40% slower
#                    than the one OpenBLAS picks by itself; their old values are recorded)
#
# Installs openmpi-bin, libopenmpi-dev and libopenblas-dev with apt-get when they are missing
# (root only), builds the real HPL (apps/hpl/build-real.sh: its libhpl.a provides the HPL
# kernels) and the programs (make -C apps/calibration). Every run has
# OPENBLAS_NUM_THREADS=1 and OPENBLAS_VERBOSE=2 (OpenBLAS prints the core it chose, kept in
# logs/ and in manifest.json). Open MPI is confined to shared memory
# (--mca pml ob1 --mca btl self,vader) and binds one rank per core.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CAL=$REPO/apps/calibration

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "calibrate.sh: error: $*" >&2; exit 2; }
log() { echo "calibrate.sh: $*" >&2; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

MODE=quick OUT="" SEED=1 NB=128 LDA=0 NICE=0 KEEP_ENV=0 HELDOUT_QD=1 HELDOUT_REPS="" PARTS=1 BETWEEN="" SETUP_ONLY=0
ARGV=("$0" "$@")
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage 0 ;;
        --quick) MODE=quick; shift ;;
        --full) MODE=full; shift ;;
        --keep-blas-env) KEEP_ENV=1; shift ;;
        --setup-only) SETUP_ONLY=1; shift ;;
        --out|--seed|--nb|--lda|--nice|--heldout-per-qd|--heldout-reps|--parts|--between)
            [ $# -ge 2 ] || die "$1 needs a value"
            case $1 in
                --out) OUT=$2 ;;
                --seed) [[ $2 =~ ^[0-9]+$ ]] && [ ${#2} -le 18 ] || die "--seed: '$2' is not a non-negative integer"; SEED=$2 ;;
                --nb) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -le 8192 ] || die "--nb: '$2' is not an integer in 0..8192"; NB=$2 ;;
                --lda) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -le 100000 ] || die "--lda: '$2' is not an integer in 0..100000"; LDA=$2 ;;
                --heldout-per-qd) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -le 100 ] || die "--heldout-per-qd: '$2' is not an integer in 0..100"; HELDOUT_QD=$2 ;;
                --heldout-reps) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 2 ] && [ "$2" -le 100000 ] || die "--heldout-reps: '$2' is not an integer in 2..100000"; HELDOUT_REPS=$2 ;;
                --parts) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le 20 ] || die "--parts: '$2' is not an integer in 1..20"; PARTS=$2 ;;
                --between) [ -x "$2" ] && [ -f "$2" ] || die "--between: '$2' is not an executable file"; BETWEEN=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
                --nice) [[ $2 =~ ^-?[0-9]+$ ]] && [ "$2" -ge -20 ] && [ "$2" -le 19 ] || die "--nice: '$2' is not in -20..19"; NICE=$2 ;;
            esac
            shift 2 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done
[ -n "$HELDOUT_REPS" ] || { [ "$MODE" = full ] && HELDOUT_REPS=8000 || HELDOUT_REPS=50; }
HOST=$(hostname)
[ -n "$OUT" ] || OUT=calibration-$HOST-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT/logs" "$OUT/system" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
STEPS=$OUT/logs/steps.tsv   # step, start, end, exit status, command
: > "$STEPS"
T_START=$(now)

# step NAME LOG CMD...: runs CMD with stdout+stderr in LOG, records its dates and status.
step() {
    local name=$1 logf=$2 s e rc=0
    shift 2
    s=$(now)
    log "$name: $*"
    "$@" > "$logf" 2>&1 || rc=$?
    e=$(now)
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$s" "$e" "$rc" "$*" >> "$STEPS"
    if [ "$rc" != 0 ]; then
        tail -n 30 "$logf" >&2
        die "$name failed (exit $rc; log: $logf)"
    fi
}

# ---------------------------------------------------------------- packages
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
dpkg -s libopenblas-dev >/dev/null 2>&1 || need+=(libopenblas-dev)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || \
        die "missing packages: ${need[*]} (install them: apt-get install ${need[*]})"
    log "apt-get install -y ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q "${need[@]}" > "$OUT/logs/apt.log" 2>&1; then
        log "install failed; apt-get update and retry"
        apt-get update -q >> "$OUT/logs/apt.log" 2>&1
        apt-get install -y -q "${need[@]}" >> "$OUT/logs/apt.log" 2>&1 || die "apt-get install failed (see $OUT/logs/apt.log)"
    fi
fi

# ---------------------------------------------------------------- builds
step build-hpl "$OUT/logs/build-real.log" "$REPO/apps/hpl/build-real.sh"
step build-programs "$OUT/logs/make.log" make -C "$CAL" all
NET=$CAL/build/calib_net
COMP=$CAL/build/calib_compute
PROBE=$CAL/build/calib_probe
if [ "$SETUP_ONLY" = 1 ]; then
    log "set up (--setup-only): Open MPI, OpenBLAS, the real HPL and the calibration programs are ready"
    exit 0
fi

# ---------------------------------------------------------------- environment of the runs
OLD_CORETYPE=${OPENBLAS_CORETYPE-unset}
OLD_L2=${OPENBLAS_L2_SIZE-unset}
# --between gets OpenBLAS's variables as this script found them (smpi-validate handles them
# itself and records what they were).
BETWEEN_ENV=(env)
[ "$OLD_CORETYPE" != unset ] && BETWEEN_ENV+=("OPENBLAS_CORETYPE=$OLD_CORETYPE")
[ "$OLD_L2" != unset ] && BETWEEN_ENV+=("OPENBLAS_L2_SIZE=$OLD_L2")
if [ "$KEEP_ENV" = 1 ]; then
    export CALIB_ENV_OPENBLAS_CORETYPE="$OLD_CORETYPE (kept)"
    export CALIB_ENV_OPENBLAS_L2_SIZE="$OLD_L2 (kept)"
else
    # both together: OpenBLAS then picks its kernel from the CPU itself
    unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
    export CALIB_ENV_OPENBLAS_CORETYPE="$OLD_CORETYPE (unset for the run)"
    export CALIB_ENV_OPENBLAS_L2_SIZE="$OLD_L2 (unset for the run)"
fi
export OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2
export CALIB_ENV_NOTE="scripts/calibrate.sh $MODE"

CORES=$(nproc)
MPIRUN=(mpirun)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
MPIRUN+=(--mca pml ob1 --mca btl self,vader --bind-to core)
NICE_CMD=()
[ "$NICE" != 0 ] && NICE_CMD=(nice -n "$NICE")
net_np_opts=()
[ "$CORES" -lt 2 ] && net_np_opts=(--oversubscribe)

# ---------------------------------------------------------------- system description
{
    uname -a; echo
    lscpu 2>/dev/null || true; echo
    grep -m1 -E '^(model name|flags)' /proc/cpuinfo || true
} > "$OUT/system/cpu.txt"
cp /proc/cpuinfo "$OUT/system/cpuinfo.txt" 2>/dev/null || true
env | grep -E '^(OPENBLAS_|OMP_|OMPI_|CALIB_ENV_)' | sort > "$OUT/system/env-of-runs.txt" || true

# ---------------------------------------------------------------- runs
NET_CSV=$OUT/network-$HOST-$SEED.csv
step network "$OUT/logs/network.log" "${NICE_CMD[@]}" "${MPIRUN[@]}" "${net_np_opts[@]}" -np 2 \
    "$NET" "--$MODE" --seed "$SEED" --heldout-per-quarter-decade "$HELDOUT_QD" --heldout-reps "$HELDOUT_REPS" --out "$NET_CSV"
# The machine's speed right before and right after the compute calibration (calib_probe: HPL's
# update dgemm on every core at once, then a memory-bound row gather): smpi-validate compares it
# with the same probe taken before every real run, which says whether the machine changed speed between calibration and validation.
PROBE_TSV=$OUT/machine-probe.tsv
PROBE_ARGS=(--lda "$LDA" --k "$([ "$NB" != 0 ] && echo "$NB" || echo 128)")
{ echo "# calib_probe ${PROBE_ARGS[*]}"; printf 'when\tdate\tgflops_per_rank\tgather_ns_per_rank\n'; } > "$PROBE_TSV"
probe() { # label
    local i line gather
    for i in 1 2 3; do
        step "probe-$1-$i" "$OUT/logs/probe-$1-$i.log" "${NICE_CMD[@]}" "${MPIRUN[@]}" -np "$CORES" \
            "$PROBE" "${PROBE_ARGS[@]}"
        line=$(grep -m1 '^PROBE_GFLOPS' "$OUT/logs/probe-$1-$i.log") || die "calib_probe printed no PROBE_GFLOPS line (log: $OUT/logs/probe-$1-$i.log)"
        gather=$(grep -m1 '^PROBE_GATHER_NS' "$OUT/logs/probe-$1-$i.log") || die "calib_probe printed no PROBE_GATHER_NS line (log: $OUT/logs/probe-$1-$i.log)"
        printf '%s\t%s\t%s\t%s\n' "$1" "$(now)" "${line#PROBE_GFLOPS }" "${gather#PROBE_GATHER_NS }" >> "$PROBE_TSV"
    done
}
probe before-compute
# HPL's biases, K = NB: dgemm's K, dtrsm's triangle, and at most NB rows per row swap (the
# uniform design draws up to 1024 rows and rarely times HPL's few-row swaps, whose per-column
# cost it then over-predicts).
FIXED_K_KERNELS=dgemm,dtrsm,HPL_dlaswp00N,HPL_dlaswp01T,HPL_dlaswp02N,HPL_dlaswp03T,HPL_dlaswp04T,HPL_dlaswp05T,HPL_dlaswp06T,HPL_dlaswp10N
# A part's share of the mode's design (calib_compute --help: quick 1 grid and 40 draws, full 3
# grids and 300 draws), rounded up.
if [ "$MODE" = full ]; then GRIDS_ALL=3 DRAWS_ALL=300; else GRIDS_ALL=1 DRAWS_ALL=40; fi
part_opts=()
[ "$PARTS" -gt 1 ] && part_opts=(--grids $(( (GRIDS_ALL + PARTS - 1) / PARTS )) --draws $(( (DRAWS_ALL + PARTS - 1) / PARTS )))
COMPUTE_SEEDS=() FIXED_K_SEEDS=()
for ((part = 1; part <= PARTS; part++)); do
    seed=$((SEED + 2 * (part - 1)))
    suffix=""
    [ "$PARTS" -gt 1 ] && suffix=-part$part
    COMPUTE_SEEDS+=("$seed")
    step "compute$suffix" "$OUT/logs/compute$suffix.log" "${NICE_CMD[@]}" "${MPIRUN[@]}" -np "$CORES" \
        "$COMP" "--$MODE" --seed "$seed" "${part_opts[@]}" --lda "$LDA" --out-dir "$OUT"
    if [ "$NB" != 0 ]; then
        FIXED_K_SEEDS+=("$((seed + 1))")
        step "compute-fixed-k$suffix" "$OUT/logs/compute-fixed-k$suffix.log" "${NICE_CMD[@]}" "${MPIRUN[@]}" -np "$CORES" \
            "$COMP" "--$MODE" --seed "$((seed + 1))" "${part_opts[@]}" --fixed-k "$NB" --lda "$LDA" --kernels "$FIXED_K_KERNELS" --out-dir "$OUT"
    fi
    if [ -n "$BETWEEN" ]; then
        step "between-$part" "$OUT/logs/between-$part.log" "${BETWEEN_ENV[@]}" "$BETWEEN" "$part" "$PARTS"
    fi
done
probe after-compute
T_END=$(now)

# ---------------------------------------------------------------- manifest
export CAL_OUT=$OUT CAL_REPO=$REPO CAL_MODE=$MODE CAL_SEED=$SEED CAL_NB=$NB CAL_LDA=$LDA CAL_NICE=$NICE
export CAL_START=$T_START CAL_END=$T_END CAL_OLD_CORETYPE=$OLD_CORETYPE CAL_OLD_L2=$OLD_L2
export CAL_KEEP_ENV=$KEEP_ENV CAL_CORES=$CORES CAL_HOST=$HOST CAL_PARTS=$PARTS
export CAL_COMPUTE_SEEDS="${COMPUTE_SEEDS[*]}" CAL_FIXED_K_SEEDS="${FIXED_K_SEEDS[*]}" CAL_BETWEEN=$BETWEEN
CAL_ARGV=$(printf '%q ' "${ARGV[@]}")
export CAL_ARGV
python3 - <<'EOF'
import hashlib, json, os, re, subprocess

def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # a missing tool is recorded, not fatal
        return f"unavailable ({e.__class__.__name__})"

def first(s):
    return s.splitlines()[0] if s else ""

def pkg(name):
    v = sh("dpkg-query", "-W", "-f=${Version}", name)
    return v or None

out, repo = os.environ["CAL_OUT"], os.environ["CAL_REPO"]
steps = []
with open(os.path.join(out, "logs", "steps.tsv")) as f:
    for line in f:
        name, start, end, rc, cmd = line.rstrip("\n").split("\t", 4)
        steps.append({"step": name, "start": start, "end": end, "exit": int(rc), "command": cmd})

files = []
kernels = {}
for name in sorted(os.listdir(out)):
    p = os.path.join(out, name)
    if not (name.endswith(".csv") and os.path.isfile(p)):
        continue
    data = open(p, "rb").read()
    meta, rows = {}, 0
    for line in data.decode("utf-8", "replace").splitlines():
        m = re.match(r"^# ([A-Za-z0-9_]+): (.*)$", line)
        if m:
            meta[m.group(1)] = m.group(2)
        elif line and not line.startswith("#"):
            rows += 1
    files.append({
        "file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "kind": meta.get("kind"), "seed": meta.get("seed"), "core": meta.get("core"),
        "data_rows": rows - 1, "end": meta.get("end"), "design_hash": meta.get("design_hash"),
        "blas_kernel": meta.get("blas_kernel"), "fixed_k": meta.get("fixed_k"), "lda": meta.get("lda"),
    })
    if meta.get("kind") == "compute":
        kernels[name] = meta.get("blas_kernel")

verbose_cores = set()
for log in sorted(os.listdir(os.path.join(out, "logs"))):
    p = os.path.join(out, "logs", log)
    if log.startswith("compute") and log.endswith(".log"):
        for line in open(p, errors="replace"):
            m = re.match(r"^\s*Core:\s*(\S+)", line)
            if m:
                verbose_cores.add(m.group(1))

probe = None
pp = os.path.join(out, "machine-probe.tsv")
if os.path.exists(pp):
    data = open(pp, "rb").read()
    probe = {"file": "machine-probe.tsv", "sha256": hashlib.sha256(data).hexdigest(), "args": [], "runs": []}
    for line in data.decode().splitlines():
        if line.startswith("# calib_probe"):
            probe["args"] = line.split()[2:]
        elif line and not line.startswith(("#", "when\t")):
            when, date, g, *gather = line.split("\t")
            run = {"when": when, "date": date, "gflops_per_rank": [float(x) for x in g.split()]}
            if gather:
                run["gather_ns_per_rank"] = [float(x) for x in gather[0].split()]
            probe["runs"].append(run)

git = {"commit": sh("git", "-C", repo, "rev-parse", "HEAD"),
       "dirty": bool(sh("git", "-C", repo, "status", "--porcelain", "--untracked-files=no"))}
build_info = {}
bi = os.path.join(repo, "apps", "hpl", "build-real", "BUILD_INFO")
if os.path.exists(bi):
    for line in open(bi):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            build_info[k] = v

manifest = {
    "format": "smpi-calibration-manifest/1",
    "command": os.environ["CAL_ARGV"].strip(),
    "mode": os.environ["CAL_MODE"],
    "seeds": {"network": int(os.environ["CAL_SEED"]), "compute": int(os.environ["CAL_SEED"]),
              **({"compute_fixed_k": int(os.environ["CAL_SEED"]) + 1} if os.environ["CAL_NB"] != "0" else {}),
              "compute_parts": [int(x) for x in os.environ["CAL_COMPUTE_SEEDS"].split()],
              "compute_fixed_k_parts": [int(x) for x in os.environ["CAL_FIXED_K_SEEDS"].split()]},
    "parts": int(os.environ["CAL_PARTS"]),
    "between": os.environ["CAL_BETWEEN"] or None,
    "fixed_k": int(os.environ["CAL_NB"]),
    "lda": int(os.environ["CAL_LDA"]),
    "start": os.environ["CAL_START"], "end": os.environ["CAL_END"],
    "steps": steps,
    "host": os.environ["CAL_HOST"],
    "cores": int(os.environ["CAL_CORES"]),
    "nice": int(os.environ["CAL_NICE"]),
    "tools": {
        "kernel": sh("uname", "-srm"),
        "os": first(sh("sh", "-c", ". /etc/os-release && echo \"$PRETTY_NAME\"")),
        "cpu": first(sh("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-")).strip(),
        "cc": first(sh("cc", "--version")),
        "mpicc": first(sh("mpicc", "--showme:version")),
        "mpirun": first(sh("mpirun", "--version")),
        "openmpi_package": pkg("openmpi-bin"),
        "openblas_package": pkg("libopenblas0-pthread") or pkg("libopenblas0") or pkg("libopenblas-dev"),
        "python": first(sh("python3", "--version")),
    },
    "hpl_build": build_info,
    "git": git,
    "environment": {
        "OPENBLAS_CORETYPE_before": os.environ["CAL_OLD_CORETYPE"],
        "OPENBLAS_L2_SIZE_before": os.environ["CAL_OLD_L2"],
        "openblas_env_unset_for_runs": os.environ["CAL_KEEP_ENV"] != "1",
        "OPENBLAS_NUM_THREADS": "1", "OPENBLAS_VERBOSE": "2",
        "mpirun_transport": "--mca pml ob1 --mca btl self,vader --bind-to core",
    },
    "blas_kernel": {"openblas_verbose": sorted(verbose_cores), "csv_metadata": kernels},
    "files": files,
    "machine_probe": probe,
}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
print(f"calibrate.sh: {len(files)} CSV files, BLAS core(s) {sorted(verbose_cores) or sorted(set(kernels.values()))}")
EOF
log "done in $(( $(date -u +%s) - $(date -u -d "$T_START" +%s) )) s: $OUT (manifest.json, $(ls "$OUT"/*.csv | wc -l) CSV files)"
echo "$OUT"
