#!/usr/bin/env bash
# tools/bootstrap.sh: install the Debian (bookworm) packages that plancert needs.
#
# Idempotent. Each package is checked with dpkg-query first; when every one is
# installed the script does nothing (in particular, no network access). When
# some are missing it runs `apt-get update` once, then installs only the
# missing ones with --no-install-recommends. Needs root (or password-less sudo)
# only when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libz3-dev z3
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsodium-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  doxygen python3-sphinx python3-breathe libjs-mathjax
  clang libclang-rt-14-dev
)

is_installed() {
  # Multi-arch packages may print one line per architecture; any installed one counts.
  dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed
}

missing() {
  local p
  for p in "${PACKAGES[@]}"; do
    is_installed "$p" || printf '%s\n' "$p"
  done
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "bootstrap: dpkg-query not found; this script supports Debian bookworm only" >&2
  exit 1
fi

mapfile -t todo < <(missing)
if ((${#todo[@]} == 0)); then
  exit 0
fi

echo "bootstrap: installing missing packages: ${todo[*]}" >&2

as_root=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo -n)
  else
    echo "bootstrap: not root and sudo is unavailable; install as root: apt-get install ${todo[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-o DPkg::Lock::Timeout=300)
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${todo[@]}"

mapfile -t still < <(missing)
if ((${#still[@]} != 0)); then
  echo "bootstrap: still missing after apt-get install: ${still[*]}" >&2
  exit 1
fi
echo "bootstrap: done" >&2
