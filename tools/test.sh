#!/usr/bin/env bash
# tools/test.sh: install missing packages, configure, build everything and run
# every test with ctest, except the long campaigns labelled `fuzz` and
# `bench-long`. Fails if any test fails or if ctest ran no test at all.
#
# Environment hooks (see also tools/common.sh):
#   PLANCERT_BUILD_DIR   build directory (default: build)
#   PLANCERT_CTEST_ARGS  extra ctest arguments (word-split), e.g. "-L unit" or "-R diag"
set -euo pipefail
# shellcheck source=tools/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

plancert_configure
cmake --build "$BUILD_DIR" -j"$(nproc)"

extra=()
read -r -a extra <<<"${PLANCERT_CTEST_ARGS:-}"
mkdir -p "$BUILD_DIR/Testing"
log="$BUILD_DIR/Testing/plancert-ctest.log"

set +e
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j"$(nproc)" \
  -LE 'fuzz|bench-long' "${extra[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

echo
summary_rc=0
"$PLANCERT_ROOT/tools/ctest_summary.sh" "$log" || summary_rc=$?
if ((rc != 0)); then
  echo "test.sh: ctest failed (exit code $rc)" >&2
  exit "$rc"
fi
exit "$summary_rc"
