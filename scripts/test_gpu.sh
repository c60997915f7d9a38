#!/usr/bin/env bash
# make test-gpu: every notebook executed headless through the GoNB kernel on
# this machine's GPU, strictly live (COALESCE_MEASURE=strict: a cell that
# would take the recording's or the model's numbers for a measurement
# fails), with the notebooks' own checks (scripts/run_notebooks.py). It
# writes a log, LOG (build/gpu/test-gpu.log), naming the GPU, its driver,
# nvcc and ncu, the time of the first harness build, each notebook's wall
# time and verdict, and the total; commit it under runs/log/.
#
# It needs nvidia-smi, nvcc and ncu on PATH, and what `make setup` installs
# (the Makefile runs that first, after `scripts/test_gpu.sh --check`, which
# only looks for the three). Environment (defaults in brackets):
#   LOG                    the log                       [build/gpu/test-gpu.log]
#   NOTEBOOK_TIMEOUT       seconds a cell may take        [300]
#   NOTEBOOK_TOTAL_BUDGET  seconds all may take           [3600: the goal, 600, is
#                          reported, not enforced: a slow GPU run is a finding]
#   NOTEBOOK_JOBS          notebooks run at once          [run_notebooks.py's: 2]
#   NOTEBOOKS              which notebooks                [all of notebooks/]
#   COALESCE_CACHE         the harness cache: emptied first, so that the first
#                          harness build is timed        [build/gpu/cache]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOG="${LOG:-$ROOT/build/gpu/test-gpu.log}"
VPY="${VENV:-$ROOT/.venv}/bin/python"
GOAL_S=600

die() { printf 'test_gpu.sh: ERROR: %s\n' "$*" >&2; exit 2; }

missing=()
for tool in nvidia-smi nvcc ncu; do command -v "$tool" >/dev/null || missing+=("$tool"); done
((${#missing[@]} == 0)) || die "not on PATH: ${missing[*]}. make test-gpu runs the notebooks live on an NVIDIA GPU: it needs the driver (nvidia-smi), the CUDA toolkit (nvcc) and Nsight Compute (ncu); make test-notebooks runs them on the recording"
case "${1:-}" in
  --check) exit 0 ;;
  "") ;;
  *) die "usage: $0 [--check]; got '$1'" ;;
esac
command -v go >/dev/null || die "go is not on PATH (scripts/gpu_unpack.sh brings one to a machine without)"
[[ -x "$VPY" ]] || die "$VPY is missing: run make setup (or scripts/gpu_unpack.sh) first"

mkdir -p "$(dirname "$LOG")"
: >"$LOG"
log() { printf '%s\n' "$*" | tee -a "$LOG"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t_all="$(now)"
log "# make test-gpu: every notebook live through the GoNB kernel, COALESCE_MEASURE=strict"
log "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
log "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with changes)')"
log "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1) (name, memory, driver)"
log "nvcc: $(nvcc --version 2>&1 | grep -i release || nvcc --version 2>&1 | tail -1)"
log "ncu: $(ncu --version 2>&1 | tail -1)"
log "go: $(go version)"
log "python: $("$VPY" -V 2>&1)"
log "cpus: $(nproc); notebooks at once: ${NOTEBOOK_JOBS:-the default of run_notebooks.py}"

export COALESCE_MEASURE=strict
export COALESCE_CACHE="${COALESCE_CACHE:-$ROOT/build/gpu/cache}"
export NOTEBOOK_TIMEOUT="${NOTEBOOK_TIMEOUT:-300}"
export NOTEBOOK_TOTAL_BUDGET="${NOTEBOOK_TOTAL_BUDGET:-3600}"
rm -rf "$COALESCE_CACHE"
mkdir -p "$COALESCE_CACHE" "$ROOT/build/gpu"

# The harness, built here once into the emptied cache: every cell is a
# process of its own and finds it there (cuda.Builder's content key).
t="$(now)"
go build -o "$ROOT/build/gpu/coalesce" ./cmd/coalesce || die "go build ./cmd/coalesce failed"
log "go build ./cmd/coalesce: $(since "$t") s (the build cache warmed for the cells)"
t="$(now)"
if ! harness="$("$ROOT/build/gpu/coalesce" run -harness 2>>"$LOG")"; then
  log "FAIL the first harness build (coalesce run -harness): see above"
  exit 1
fi
log "first harness build: $(since "$t") s ($harness)"
log "harness --info: $("$harness" --info 2>&1 | head -1)"

set +e
t="$(now)"
"$VPY" scripts/run_notebooks.py ${NOTEBOOKS:-} 2>&1 | tee -a "$LOG"
rc="${PIPESTATUS[0]}"
set -e
total="$(since "$t_all")"
log "notebooks: $(since "$t") s; make test-gpu in all: $total s (goal $GOAL_S s, $(awk -v t="$total" -v g="$GOAL_S" 'BEGIN { print (t <= g) ? "met" : "MISSED" }'))"
verdict=PASS
((rc == 0)) || verdict="FAIL (run_notebooks.py exit $rc)"
log "result: $verdict"
log "log: $LOG; executed notebooks, HTML and kernel logs: build/notebooks/"
exit "$rc"
