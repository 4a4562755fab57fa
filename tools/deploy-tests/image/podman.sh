# Sourced by the image scripts: podman and buildah as they work on these machines (root, no Docker
# engine, hybrid cgroups): vfs storage, cgroupfs, runc (crun refuses the hybrid cgroup mount), and
# no default ulimits (crun's and runc's setrlimit RLIMIT_NOFILE is refused here otherwise).
set -euo pipefail
if ! command -v podman >/dev/null || ! command -v buildah >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "image: installing podman, buildah, runc, debootstrap (Debian)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap >/dev/null
fi
IMAGE_STATE="${IMAGE_STATE:-/var/tmp/dw-image}"
mkdir -p "$IMAGE_STATE"
export CONTAINERS_CONF="$IMAGE_STATE/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' > "$CONTAINERS_CONF"
pm() { podman --storage-driver=vfs --cgroup-manager=cgroupfs --runtime /usr/sbin/runc "$@"; }
