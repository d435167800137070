#!/usr/bin/env bash
# tools/run.sh [ARGS...]: install missing packages, configure, build the plancert
# program and run `plancert certify ARGS...`. With no arguments it certifies the
# embedded default example. Exits with plancert's exit code.
#
# Set-up output (apt, cmake, ninja) goes to stderr, so stdout carries only
# plancert's own output. Environment hooks: see tools/common.sh.
set -euo pipefail
# shellcheck source=tools/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

{
  plancert_configure
  cmake --build "$BUILD_DIR" --target plancert -j"$(nproc)"
} >&2

# Run from the caller's directory so relative paths in ARGS work.
cd "$PLANCERT_CALLER_PWD"
exec "$BUILD_DIR/cli/plancert" certify "$@"
