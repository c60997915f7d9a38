#!/usr/bin/env bash
# Makes a local base image for the course's Dockerfile, without a registry:
# a minimal Ubuntu 24.04 (noble) root file system debootstrapped from the
# package mirror, imported into podman. It stands in for the CUDA base
# (nvidia/cuda:...-ubuntu24.04 is Ubuntu 24.04 plus CUDA): the same OS, the
# same apt sources and the same user "ubuntu" (uid 1000) as Docker's official
# ubuntu:24.04 image, and no CUDA, so that the image built on it is the
# CPU-only image (make test-image, scripts/test_image.sh).
#
#   scripts/image_base.sh [TAG]     default TAG: localhost/coalesce-base:$SUITE
#
# Environment (defaults in brackets):
#   SUITE    noble (Ubuntu 24.04) or trixie (Debian 13)                [noble]
#   MIRROR   the package mirror        [http://archive.ubuntu.com/ubuntu for noble,
#                                       http://deb.debian.org/debian for trixie]
#   FORCE    1 rebuilds the base even when TAG exists and is current    [0]
#   PODMAN   the podman command line     [podman --runtime /usr/bin/runc]
#   LOCAL_CA_CERTS  certificate authorities the base trusts beyond Ubuntu's
#            [this host's own: /usr/local/share/ca-certificates/*.crt]
#
# A machine whose TLS goes through an intercepting proxy (this one's does:
# its certificates are issued by a local CA) needs its CA in the base, as a
# site's own base image would carry it: LOCAL_CA_CERTS go to the base's
# /usr/local/share/ca-certificates, which the Dockerfile's install of
# ca-certificates adds to the system bundle, and /etc/pip.conf points pip
# (whose own bundle knows only the public CAs) at that bundle. Without
# local CAs the base has neither.
#
# The Ubuntu archive key does not come with Debian: the script fetches the
# ubuntu-keyring package from the mirror, checks it against a pinned SHA-256
# and checks that it holds the 2018 archive key by its pinned fingerprint;
# debootstrap then verifies the mirror's Release file with that key. Debian's
# suites are verified with the host's debian-archive-keyring. TAG carries a
# label with the hash of this script and the suite: an existing, current
# TAG is kept (FORCE=1 remakes it). Needs root, debootstrap, gpg and podman.
set -euo pipefail

say() { printf 'image_base.sh: %s\n' "$*"; }
die() { printf 'image_base.sh: ERROR: %s\n' "$*" >&2; exit 1; }

SUITE="${SUITE:-noble}"
TAG="${1:-localhost/coalesce-base:$SUITE}"
FORCE="${FORCE:-0}"
read -r -a PODMAN <<<"${PODMAN:-podman --runtime /usr/bin/runc}"

# ubuntu-keyring of noble's release pocket (frozen at release), and the
# fingerprint of "Ubuntu Archive Automatic Signing Key (2018)", which signs
# noble's Release files.
UBUNTU_KEYRING_DEB=pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb
UBUNTU_KEYRING_SHA256=36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8
UBUNTU_ARCHIVE_KEY=F6ECB3762474EDA9D21B7022871920D1991BC93C

case "$SUITE" in
  noble)
    MIRROR="${MIRROR:-http://archive.ubuntu.com/ubuntu}"
    # debootstrap 1.0.128 (Debian 12) has no script named noble; every
    # Ubuntu release since gutsy uses the same one.
    script=/usr/share/debootstrap/scripts/gutsy
    components=main,universe
    ;;
  trixie)
    MIRROR="${MIRROR:-http://deb.debian.org/debian}"
    script=/usr/share/debootstrap/scripts/sid
    components=main
    ;;
  *) die "SUITE=$SUITE: want noble (Ubuntu 24.04, the CUDA image's OS) or trixie (Debian 13)" ;;
esac

[[ "$(id -u)" == 0 ]] || die "debootstrap and podman's root storage need root"
for tool in debootstrap gpg curl "${PODMAN[0]}"; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH (apt-get install podman runc debootstrap gpg curl)"
done
[[ -f "$script" ]] || die "$script is missing: is debootstrap installed?"

if [[ -z "${LOCAL_CA_CERTS+set}" ]]; then
  LOCAL_CA_CERTS="$(ls /usr/local/share/ca-certificates/*.crt 2>/dev/null | tr '\n' ' ' || true)"
fi
read -r -a cas <<<"$LOCAL_CA_CERTS"
for ca in "${cas[@]}"; do [[ -f "$ca" ]] || die "LOCAL_CA_CERTS: no such file $ca"; done

want="$( { cat "${BASH_SOURCE[0]}"; echo "$SUITE $MIRROR"; cat "${cas[@]}" </dev/null; } | sha256sum | cut -d' ' -f1)"
have="$("${PODMAN[@]}" image inspect --format '{{index .Labels "coalesce.base.recipe"}}' "$TAG" 2>/dev/null || true)"
if [[ "$FORCE" != 1 && "$have" == "$want" ]]; then
  say "$TAG is current (recipe ${want:0:12}); FORCE=1 remakes it"
  exit 0
fi

tmp="$(mktemp -d /var/tmp/coalesce-base.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
rootfs="$tmp/rootfs"
keyring_args=()
if [[ "$SUITE" == noble ]]; then
  say "fetching $MIRROR/$UBUNTU_KEYRING_DEB"
  curl -fsS --retry 3 -o "$tmp/keyring.deb" "$MIRROR/$UBUNTU_KEYRING_DEB" || die "cannot fetch $MIRROR/$UBUNTU_KEYRING_DEB"
  got="$(sha256sum "$tmp/keyring.deb" | cut -d' ' -f1)"
  [[ "$got" == "$UBUNTU_KEYRING_SHA256" ]] || die "$UBUNTU_KEYRING_DEB: SHA-256 $got, want $UBUNTU_KEYRING_SHA256"
  dpkg-deb -x "$tmp/keyring.deb" "$tmp/keyring"
  keyring="$tmp/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg"
  gpg --batch --no-default-keyring --keyring "$keyring" --with-colons --list-keys 2>/dev/null |
    grep -q "^fpr:*$UBUNTU_ARCHIVE_KEY:" || die "$keyring does not hold the Ubuntu archive key $UBUNTU_ARCHIVE_KEY"
  keyring_args=(--keyring="$keyring")
fi

say "debootstrap $SUITE from $MIRROR (minbase; a few minutes)"
t0="$(date +%s)"
if ! debootstrap --variant=minbase --components="$components" "${keyring_args[@]}" \
  "$SUITE" "$rootfs" "$MIRROR" "$script" >"$tmp/debootstrap.log" 2>&1; then
  tail -n 40 "$tmp/debootstrap.log" >&2
  [[ -f "$rootfs/debootstrap/debootstrap.log" ]] && tail -n 40 "$rootfs/debootstrap/debootstrap.log" >&2
  die "debootstrap $SUITE failed"
fi
say "debootstrap took $(($(date +%s) - t0)) s"

# What Docker's official image of the same OS has beyond minbase: its apt
# sources (all components, updates and security), no package lists (an
# image's first RUN does apt-get update), apt's docker-clean (no .deb kept
# after an install), and, for Ubuntu since 23.04, the user "ubuntu" with
# uid 1000 (the course's Dockerfile removes it).
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
rm -f "$rootfs/etc/apt/sources.list"
mkdir -p "$rootfs/etc/apt/sources.list.d"
if [[ "$SUITE" == noble ]]; then
  cat >"$rootfs/etc/apt/sources.list.d/ubuntu.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: noble noble-updates noble-backports
Components: main universe restricted multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg

Types: deb
URIs: http://security.ubuntu.com/ubuntu/
Suites: noble-security
Components: main universe restricted multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg
EOF
  [[ -f "$rootfs/usr/share/keyrings/ubuntu-archive-keyring.gpg" ]] || cp "$keyring" "$rootfs/usr/share/keyrings/"
  chroot "$rootfs" useradd --create-home --uid 1000 --user-group --shell /bin/bash ubuntu
else
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
if ((${#cas[@]})); then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp "${cas[@]}" "$rootfs/usr/local/share/ca-certificates/"
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
  say "the base trusts this host's local CAs: ${cas[*]##*/}"
fi
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs/debootstrap" \
  "$rootfs"/var/log/*.log "$rootfs"/tmp/* "$rootfs"/var/tmp/*
# No device nodes or mounts left from debootstrap: the runtime provides them.
find "$rootfs/dev" -mindepth 1 -delete 2>/dev/null || true

say "importing into podman as $TAG"
tar --numeric-owner --xattrs -C "$rootfs" -c . |
  "${PODMAN[@]}" import --quiet \
    --change 'CMD ["/bin/bash"]' \
    --change "LABEL coalesce.base.recipe=$want" \
    --change "LABEL coalesce.base.suite=$SUITE" \
    --message "debootstrap $SUITE from $MIRROR by scripts/image_base.sh" \
    - "$TAG" >/dev/null
say "$TAG: $("${PODMAN[@]}" image inspect --format '{{.Size}}' "$TAG") bytes"
