#!/usr/bin/env bash
# Installs a Go toolchain into DEST from the Go module proxy's golang.org/toolchain
# module: the same zip the go command downloads for GOTOOLCHAIN=goX.Y.Z, checked
# here against a pinned SHA-256 (the Dockerfile pins it; the go command checks
# the same zip against the checksum database instead).
#
#   GO_VERSION=1.26.8 GO_ZIP_SHA256=<sha256 of the zip> scripts/install_go.sh /usr/local/go
#
# Environment:
#   GO_VERSION      Go release, without the "go" prefix           (required)
#   GO_ZIP_SHA256   SHA-256 of the module zip, hex                 (required)
#   GOPROXY_URL     module proxy base URL  [https://proxy.golang.org]
#   GO_OS, GO_ARCH  platform of the toolchain  [linux, from uname -m]
#
# A module zip keeps no file modes and cannot hold go.mod files below its root
# (the toolchain stores them as _go.mod): this script restores both, as cmd/go
# does after a GOTOOLCHAIN download. It needs curl, python3 (to unzip) and
# sha256sum. DEST must not exist yet. Exits non-zero, saying why, on any failure.
set -euo pipefail

die() { printf 'install_go.sh: ERROR: %s\n' "$*" >&2; exit 1; }

[[ $# == 1 ]] || die "usage: GO_VERSION=X.Y.Z GO_ZIP_SHA256=HEX $0 DEST"
dest="$1"
: "${GO_VERSION:?install_go.sh: set GO_VERSION (e.g. 1.26.8)}"
: "${GO_ZIP_SHA256:?install_go.sh: set GO_ZIP_SHA256 (SHA-256 of the module zip)}"
[[ "$GO_ZIP_SHA256" =~ ^[0-9a-f]{64}$ ]] || die "GO_ZIP_SHA256 must be 64 lower-case hex digits, got '$GO_ZIP_SHA256'"
proxy="${GOPROXY_URL:-https://proxy.golang.org}"
goos="${GO_OS:-linux}"
if [[ -z "${GO_ARCH:-}" ]]; then
  case "$(uname -m)" in
    x86_64) GO_ARCH=amd64 ;;
    aarch64 | arm64) GO_ARCH=arm64 ;;
    *) die "unknown machine $(uname -m): set GO_ARCH" ;;
  esac
fi
[[ ! -e "$dest" ]] || die "$dest already exists"

version="v0.0.1-go${GO_VERSION}.${goos}-${GO_ARCH}"
url="${proxy%/}/golang.org/toolchain/@v/${version}.zip"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

curl -fsSL --retry 3 -o "$tmp/go.zip" "$url" || die "downloading $url failed"
got="$(sha256sum "$tmp/go.zip" | cut -d' ' -f1)"
[[ "$got" == "$GO_ZIP_SHA256" ]] ||
  die "checksum mismatch for $url: got $got, want $GO_ZIP_SHA256"

python3 -m zipfile -e "$tmp/go.zip" "$tmp/x" || die "unzipping $url failed"
root="$tmp/x/golang.org/toolchain@${version}"
[[ -f "$root/bin/go" ]] || die "$url holds no golang.org/toolchain@${version}/bin/go"

# Execute bits: what cmd/go sets after a toolchain download (pkg/tool, the
# go_*_exec helpers in lib, bin).
find "$root/pkg/tool" "$root/bin" -type f -exec chmod 0755 {} +
if [[ -d "$root/lib" ]]; then
  find "$root/lib" -type f -name 'go_?*_?*_exec' -exec chmod 0755 {} +
fi
# go.mod files: the zip holds them as _go.mod.
find "$root" -type f -name _go.mod -print0 |
  while IFS= read -r -d '' f; do cp "$f" "${f%/_go.mod}/go.mod"; done

# Check the toolchain before it goes in place (go finds its GOROOT from its
# own path), so that a failure leaves DEST absent.
have="$(cd / && env -u GOROOT GOTOOLCHAIN=local "$root/bin/go" env GOVERSION)" || die "bin/go of $url does not run"
[[ "$have" == "go${GO_VERSION}" ]] || die "bin/go of $url is $have, want go${GO_VERSION}"
mkdir -p "$(dirname "$dest")"
mv "$root" "$dest"
printf 'install_go.sh: installed %s (%s/%s) in %s\n' "$have" "$goos" "$GO_ARCH" "$dest"
