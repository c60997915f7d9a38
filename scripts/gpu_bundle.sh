#!/usr/bin/env bash
# Builds, here, what `make test-gpu` needs on a GPU machine that has nvcc, ncu
# and Python but no Go and no network (scripts/gpu_unpack.sh unpacks it
# there). Each piece is a file of its own under OUT, so that the pieces can
# travel to that machine a few at a time:
#
#   go.tar.xz     the Go toolchain (linux/amd64) cut to what `go build` uses:
#                 bin/go, the compile, link, asm and cgo tools, the standard
#                 library's sources without tests or testdata, pkg/include,
#                 lib/time, go.env and VERSION
#   gomod.tar.xz  a module cache holding the course's build list offline
#                 (GOPROXY=off): every module's .mod, .info and .ziphash, and
#                 the sources of the modules whose packages the course, GoNB's
#                 gonbui and the notebooks' cells compile; no .zip files
#   tools.tar.xz  gonb and goimports at go.mod's versions, static
#                 (CGO_ENABLED=0), with the stamp scripts/install.sh writes
#                 for them (INSTALL_GOPLS=0), so that it does not rebuild them
#   wheels.tar    the wheels of requirements.txt for CPython PYVERS on
#                 manylinux x86_64, for `pip install --no-index`
#
#   scripts/gpu_bundle.sh            (make gpu-bundle)
#
# Environment (defaults in brackets):
#   OUT        where the pieces go                     [$ROOT/.gpubundle]
#   PYVERS     CPython versions of the wheels, spaced  [3.12: the GPU machine's python3]
#   MAX_MIB    the largest a piece may be, in MiB      [48]
#   GOPROXY    where modules come from                 [the local module cache, then proxy.golang.org]
# It prints each piece's size and the total, and fails when a piece is over
# MAX_MIB or a check of the cut toolchain and module cache fails (an
# offline `go build ./...` with them, from an empty build cache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/.gpubundle}"
PYVERS="${PYVERS:-3.12}"
MAX_MIB="${MAX_MIB:-48}"

say() { printf 'gpu_bundle.sh: %s\n' "$*"; }
die() { printf 'gpu_bundle.sh: ERROR: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "go is not on PATH"
command -v xz >/dev/null || die "xz is not on PATH (the pieces are tar.xz)"
command -v python3 >/dev/null || die "python3 is not on PATH (pip downloads the wheels)"
[[ "$(go env GOOS)/$(go env GOARCH)" == linux/amd64 ]] ||
  die "this Go is for $(go env GOOS)/$(go env GOARCH); the GPU machine is linux/amd64"
[[ "$MAX_MIB" =~ ^[1-9][0-9]*$ ]] || die "MAX_MIB must be a whole number of MiB, got '$MAX_MIB'"

cd "$ROOT"
export GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
goroot="$(go env GOROOT)"
goversion="$(go env GOVERSION)"
want="go$(sed -n 's/^go //p' go.mod)"
[[ "$goversion" == "$want" ]] || die "go is $goversion; go.mod asks for $want"

tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$OUT"

# ------------------------------------------------------------ the toolchain
say "cutting $goroot ($goversion)"
g="$tmp/go"
mkdir -p "$g/bin" "$g/pkg/tool/linux_amd64" "$g/lib"
cp "$goroot/VERSION" "$goroot/go.env" "$g/"
cp "$goroot/bin/go" "$goroot/bin/gofmt" "$g/bin/"
# go build runs compile, link and asm; cgo only when CGO_ENABLED=1, which
# gpu_unpack.sh turns off, but a learner's cell with import "C" should say
# why it fails, not that a tool is missing.
for t in compile link asm cgo; do cp "$goroot/pkg/tool/linux_amd64/$t" "$g/pkg/tool/linux_amd64/"; done
cp -r "$goroot/pkg/include" "$g/pkg/"
cp -r "$goroot/lib/time" "$g/lib/"
# The standard library: src without cmd (the go command's own sources; only
# cmd/go.mod, which go reads to know the cmd module), tests or testdata.
(cd "$goroot/src" && find . \( -path ./cmd -o -name testdata \) -prune -o \
  -type f ! -name '*_test.go' -print0) |
  (cd "$goroot/src" && tar --null -T - -cf -) | (mkdir -p "$g/src" && cd "$g/src" && tar -xf -)
mkdir -p "$g/src/cmd" && cp "$goroot/src/cmd/go.mod" "$goroot/src/cmd/go.sum" "$g/src/cmd/"

# ------------------------------------------------------------ the module cache
mc="$tmp/gomod"
full="$tmp/gomod-full"
local_cache="$(go env GOMODCACHE)/cache/download"
proxy="${GOPROXY:-file://$local_cache,https://proxy.golang.org}"
say "downloading the course's build list into a fresh module cache"
# Every module of the build list: `go list -m all` reads each one's .info
# and .mod, and install.sh asks for the tools' versions so. go mod download
# writes the go.sum lines of what it fetches, so it works on a copy of
# go.mod and go.sum (-modfile): the repository's go.sum stays as it is.
mkdir -p "$tmp/modfile"
cp go.mod go.sum "$tmp/modfile/"
GOMODCACHE="$full" GOPROXY="$proxy" GOFLAGS="-mod=mod -modfile=$tmp/modfile/go.mod" go mod download all
# The cut cache: the whole of cache/download but the .zip files (the go
# command reads the graph's .mod and .info files, and checks an extracted
# module's .ziphash against go.sum), and of the extracted modules only the
# files of the packages that get compiled (the course's, gonbui's: every
# cell imports it), without tests, and each module's go.mod. The go
# command does not hash an extracted module's files again; `go mod verify`
# would fail on the cut cache, which nothing here runs.
chmod -R u+w "$full"
mkdir -p "$mc/cache"
(cd "$full/cache" && find download -type f ! -name '*.zip' ! -name '*.lock' -print0 | tar --null -T - -cf -) |
  (cd "$mc/cache" && tar -xf -)
# A package's files: all of its folder's but tests, whatever their build
# tags, and the files it embeds, which may lie in folders below.
CGO_ENABLED=0 GOMODCACHE="$full" GOPROXY=off go list -deps \
  -f '{{if .Module}}{{if not .Module.Main}}{{.Module.Dir}} {{.Dir}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}' \
  ./... github.com/janpfeifer/gonb/gonbui | sort -u >"$tmp/dirs"
while read -r moddir pkgdir embeds; do
  find "$pkgdir" -maxdepth 1 -type f ! -name '*_test.go' -print
  for e in $embeds; do printf '%s/%s\n' "$pkgdir" "$e"; done
  for f in "$moddir"/go.mod "$moddir"/LICENSE*; do [[ -f "$f" ]] && printf '%s\n' "$f"; done
done <"$tmp/dirs" | sort -u | sed "s|^$full/||" >"$tmp/files"
(cd "$full" && tar -T "$tmp/files" -cf -) | (cd "$mc" && tar -xf -)
chmod -R u+w "$full" && rm -rf "$full"

# ------------------------------------------------------------ the check
# The cut toolchain and cache must build the course offline from an empty
# build cache, as the GPU machine will.
say "checking: an offline go build ./... with the cut toolchain and module cache"
(env -u GOROOT PATH="$g/bin:$PATH" GOMODCACHE="$mc" GOPROXY=off GOCACHE="$tmp/gocache" \
  CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local \
  sh -c '"$0" list -m all >/dev/null && "$0" build ./... github.com/janpfeifer/gonb/gonbui' "$g/bin/go") ||
  die "the cut toolchain or module cache cannot build the course offline (see above)"
[[ "$(env -u GOROOT "$g/bin/go" env GOROOT)" == "$g" ]] || die "the cut toolchain does not find its own GOROOT"

# ------------------------------------------------------------ the tools
say "building gonb and goimports (static)"
tools="$tmp/tools"
mkdir -p "$tools/bin"
CGO_ENABLED=0 go build -o "$tools/bin/gonb" github.com/janpfeifer/gonb
CGO_ENABLED=0 go build -o "$tools/bin/goimports" golang.org/x/tools/cmd/goimports
# install.sh's stamp for these tools, computed as it computes it (step 2),
# with INSTALL_GOPLS=0: it then takes them as built.
tool_mods="$(go list -m -f '{{.Path}}@{{.Version}}' github.com/janpfeifer/gonb golang.org/x/tools golang.org/x/tools/gopls)"
{ cat scripts/install.sh; echo "$tool_mods $goversion 0"; } | sha256sum | cut -d' ' -f1 >"$tools/bin/.coalesce-tools.sha256"

# ------------------------------------------------------------ the wheels
# What scripts/run_notebooks.py imports (nbformat, jupyter_client, nbclient,
# nbconvert for the HTML copies, ipython_pygments_lexers for nbconvert to
# colour the cells as it does with requirements.txt), with what they need,
# at requirements.txt's
# versions: the kernel is GoNB, a Go program, so no ipykernel; no
# JupyterLab, JupyterHub or their server, which a headless run never starts
# (their wheels, with babel and debugpy, are 50 of requirements.txt's 75 MiB).
wheels="$tmp/wheels"
mkdir -p "$wheels"
gpu_reqs=(nbclient nbconvert nbformat jupyter_client jupyter_core ipython_pygments_lexers)
for r in "${gpu_reqs[@]}"; do
  grep -iE "^${r//_/[-_]}==" requirements.txt || die "requirements.txt pins no $r"
done >"$wheels/requirements-gpu.txt"
for v in $PYVERS; do
  say "downloading the wheels of $(tr '\n' ' ' <"$wheels/requirements-gpu.txt")and what they need, for CPython $v"
  python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --implementation cp --python-version "$v" \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    -d "$wheels" -c requirements.txt -r "$wheels/requirements-gpu.txt" ||
    die "pip could not download the wheels for CPython $v"
done

# ------------------------------------------------------------ the manifest
# What the pieces were built from: gpu_unpack.sh refuses pieces built from
# other files than its checkout's, since the tools' stamp, the module cache
# and the wheels follow from them.
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "go $goversion"
  echo "pythons $PYVERS"
  sha256sum go.mod go.sum requirements.txt scripts/install.sh
} >"$tmp/MANIFEST"
for piece in go gomod tools wheels; do cp "$tmp/MANIFEST" "$tmp/$piece/MANIFEST"; done

# ------------------------------------------------------------ the pieces
pack() { # pack NAME DIR-IN-TMP COMPRESS
  local name="$1" what="$2" z="$3"
  rm -f "$OUT/$name"
  if [[ "$z" == xz ]]; then
    tar -C "$tmp" --owner=0 --group=0 --sort=name -cf - "$what" | xz -T0 -6 >"$OUT/$name.part"
  else
    tar -C "$tmp" --owner=0 --group=0 --sort=name -cf "$OUT/$name.part" "$what"
  fi
  mv "$OUT/$name.part" "$OUT/$name"
}
pack go.tar.xz go xz
pack gomod.tar.xz gomod xz
pack tools.tar.xz tools xz
# Wheels are zip files already: xz would gain little and cost minutes.
pack wheels.tar wheels none

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
total=0
over=()
for p in go.tar.xz gomod.tar.xz tools.tar.xz wheels.tar; do
  b="$(stat -c %s "$OUT/$p")"
  total=$((total + b))
  printf 'gpu_bundle.sh: %-13s %6s MiB\n' "$p" "$(mib "$b")"
  ((b <= MAX_MIB * 1048576)) || over+=("$p")
done
printf 'gpu_bundle.sh: %-13s %6s MiB (each piece at most %d MiB)\n' total "$(mib "$total")" "$MAX_MIB"
((${#over[@]} == 0)) || die "over $MAX_MIB MiB: ${over[*]}"
say "done: $OUT (unpack there with scripts/gpu_unpack.sh)"
