#!/usr/bin/env bash
# The course image's CUDA, in one place: the Dockerfile's guarded CUDA step,
# and what the image says about CUDA at start and in its health check. The
# image is built on a CUDA base (the default, nvidia/cuda:...-devel) or on a
# CPU-only one (make test-image builds on plain Ubuntu); nothing else differs,
# and this script is where the difference is decided and said.
#
#   image_cuda.sh setup BASE     (build time, as root) on a CUDA base: nvcc must
#                                be there; ncu is installed when missing
#                                (cuda-nsight-compute-X-Y, X.Y from
#                                CUDA_VERSION); g++ when missing (nvcc's host
#                                compiler); then nvcc compiles a kernel and ncu
#                                runs, or the build fails. On a base without
#                                CUDA (no nvcc, no CUDA_VERSION, no
#                                /usr/local/cuda): nothing is installed and the
#                                image is recorded as having no CUDA.
#   image_cuda.sh status [--brief]  one line: the image's CUDA (or "no CUDA"),
#                                and, unless --brief, whether a GPU is visible
#   image_cuda.sh start CMD...   prints the status line on stderr, then runs CMD
#                                (the image's ENTRYPOINT, under tini)
#
# A base that looks like CUDA but is not complete (CUDA_VERSION set but no
# nvcc, ncu neither there nor installable) fails the build, saying which: a
# CUDA image that silently cannot measure would be worse than none.
#
# Environment: CUDA_VERSION, set by NVIDIA's images; and, for deploy's
# tests, COALESCE_CUDA_RECORD (the record setup writes and status reads)
# [/usr/local/lib/coalesce/cuda], COALESCE_CUDA_HOME [/usr/local/cuda],
# COALESCE_APT_LISTS (emptied after an install) [/var/lib/apt/lists].
set -euo pipefail

RECORD="${COALESCE_CUDA_RECORD:-/usr/local/lib/coalesce/cuda}"
CUDA_HOME_DIR="${COALESCE_CUDA_HOME:-/usr/local/cuda}"
APT_LISTS="${COALESCE_APT_LISTS:-/var/lib/apt/lists}"
DEFAULT_BASE=nvidia/cuda:13.0.2-devel-ubuntu24.04

say() { printf 'image_cuda.sh: %s\n' "$*"; }
die() { printf 'image_cuda.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# quiet CMD...: runs CMD, showing its output only when it fails.
quiet() {
  local log
  log="$(mktemp)"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# apt_install PKG...: installs PKG from the base's apt sources, leaving no lists.
apt_install() {
  quiet apt-get update &&
    DEBIAN_FRONTEND=noninteractive quiet apt-get install -y --no-install-recommends "$@" &&
    apt-get clean && rm -rf "${APT_LISTS:?}"/*
}

# record KEY: the value of KEY= in the record, or "".
record() { sed -n "s/^$1=//p" "$RECORD" 2>/dev/null | head -n1; }

setup() {
  local base="${1:?usage: image_cuda.sh setup BASE}"
  mkdir -p "$(dirname "$RECORD")"
  local cuda_base=0
  [[ -n "${CUDA_VERSION:-}" || -d "$CUDA_HOME_DIR" ]] && cuda_base=1
  if [[ "$cuda_base" == 0 ]] && ! command -v nvcc >/dev/null; then
    printf 'cuda=none\nbase=%s\n' "$base" >"$RECORD"
    say "no CUDA in $base (no nvcc, no CUDA_VERSION, no $CUDA_HOME_DIR): this is the CPU-only image," \
      "without nvcc and ncu; the notebooks will use the recorded H200 measurements, and say so"
    return 0
  fi

  command -v nvcc >/dev/null ||
    die "$base looks like a CUDA image (CUDA_VERSION=${CUDA_VERSION:-unset}, $CUDA_HOME_DIR) but has no nvcc on PATH: use a -devel variant (the default is $DEFAULT_BASE)"
  local release
  release="$(nvcc --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p' | head -n1)"
  [[ -n "$release" ]] || die "nvcc --version names no release: $(nvcc --version 2>&1 | tail -n1)"
  if ! command -v ncu >/dev/null; then
    # NVIDIA's devel images carry ncu on amd64; their recipe installs it
    # from this package of their apt repository (configured in the image).
    local ver="${CUDA_VERSION:-$release}"
    local pkg="cuda-nsight-compute-$(cut -d. -f1 <<<"$ver")-$(cut -d. -f2 <<<"$ver")"
    say "ncu is not on PATH: installing $pkg"
    apt_install "$pkg" || die "installing $pkg (ncu, for the profiling lessons) failed"
    if ! command -v ncu >/dev/null; then
      local ncu_bin
      ncu_bin="$(find "$CUDA_HOME_DIR/" /opt/nvidia -name ncu -type f -perm -u+x 2>/dev/null | head -n1 || true)"
      [[ -n "$ncu_bin" ]] || die "$pkg is installed but no ncu is on PATH or under $CUDA_HOME_DIR, /opt/nvidia"
      ln -s "$ncu_bin" /usr/local/bin/ncu
    fi
  fi
  if ! command -v g++ >/dev/null; then
    say "g++ is missing (nvcc's host compiler): installing it"
    apt_install g++ || die "installing g++ failed"
  fi

  # nvcc compiles a kernel (no GPU needed for that), ncu runs: what the
  # lessons do on a GPU, minus the GPU.
  local tmp
  tmp="$(mktemp -d)"
  printf '__global__ void copy(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }\n' >"$tmp/k.cu"
  nvcc -c -o "$tmp/k.o" "$tmp/k.cu" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; die "nvcc cannot compile a kernel in $base"; }
  rm -rf "$tmp"
  local nvcc_v ncu_v
  nvcc_v="$(nvcc --version | grep -i 'release' | head -n1 | sed 's/^.*release /release /')"
  ncu_v="$(ncu --version 2>&1 | tail -n1)" || die "ncu --version failed: $ncu_v"
  printf 'cuda=%s\nnvcc=%s\nncu=%s\nbase=%s\n' "$release" "$nvcc_v" "$ncu_v" "$base" >"$RECORD"
  say "CUDA $release in $base: nvcc $nvcc_v compiles, ncu $ncu_v runs"
}

status() {
  local brief=0
  [[ "${1:-}" == --brief ]] && brief=1
  [[ -f "$RECORD" ]] || { echo "coalesce image: CUDA unknown ($RECORD is missing: not built by the course's Dockerfile?)"; return 0; }
  local cuda base
  cuda="$(record cuda)"
  base="$(record base)"
  if [[ "$cuda" == none ]]; then
    echo "coalesce image: no CUDA: built on $base, a base without the CUDA toolkit (no nvcc, no ncu), so nothing is measured on a GPU here; the notebooks use the measurements recorded on an NVIDIA H200 and label them so. For live measurements build on $DEFAULT_BASE (the Dockerfile's default BASE_IMAGE) and run with --gpus all."
    return 0
  fi
  local line="coalesce image: CUDA $cuda (nvcc $(record nvcc); ncu $(record ncu)), base $base"
  if [[ "$brief" == 1 ]]; then
    echo "$line"
  elif command -v nvidia-smi >/dev/null && gpu="$(timeout 10 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)" && [[ -n "$gpu" ]]; then
    echo "$line; GPU: $gpu (name, driver)"
  else
    echo "$line; no GPU visible in this container (docker run --gpus all gives it one): the notebooks use the recorded H200 measurements until then"
  fi
}

case "${1:-}" in
  setup) shift; setup "$@" ;;
  status) shift; status "$@" ;;
  start)
    shift
    (($# > 0)) || die "usage: image_cuda.sh start CMD..."
    status >&2 || true
    exec "$@"
    ;;
  *) die "usage: image_cuda.sh setup BASE | status [--brief] | start CMD...; got '${1:-}'" ;;
esac
