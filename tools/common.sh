# shellcheck shell=bash
# tools/common.sh: shared by tools/run.sh and tools/test.sh (sourced, not run).
#
# Environment hooks:
#   PLANCERT_BUILD_DIR   build directory, relative to the repository root or absolute (default: build)
#   PLANCERT_CMAKE_ARGS  extra arguments for the configure step (word-split), e.g. -DPLANCERT_SANITIZE=ON

# The caller's directory (run.sh runs plancert there, so relative file
# arguments keep their meaning); the scripts themselves work from the
# repository root, the parent of the folder holding this file.
# shellcheck disable=SC2034  # used by run.sh
PLANCERT_CALLER_PWD="$PWD"
PLANCERT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$PLANCERT_ROOT" || exit 1
BUILD_DIR="${PLANCERT_BUILD_DIR:-build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$PLANCERT_ROOT/$BUILD_DIR"

# Runs tools/bootstrap.sh, then configures the build directory with Ninja.
# An existing build directory keeps the generator it was made with.
plancert_configure() {
  "$PLANCERT_ROOT/tools/bootstrap.sh"
  local extra=()
  read -r -a extra <<<"${PLANCERT_CMAKE_ARGS:-}"
  if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" "${extra[@]}"
  else
    cmake -S . -B "$BUILD_DIR" -G Ninja "${extra[@]}"
  fi
}
