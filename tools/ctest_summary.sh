#!/usr/bin/env bash
# tools/ctest_summary.sh LOG: find ctest's summary line in LOG, e.g.
#   "100% tests passed, 0 tests failed out of 57"
# print it, and exit non-zero if there is none or if it counts zero tests.
# (A run that selects no test at all must not pass as green.)
set -euo pipefail

log="${1:?usage: ctest_summary.sh LOG}"
line="$(grep -E '^[[:space:]]*[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+[[:space:]]*$' "$log" | tail -n 1 || true)"
if [[ -z "$line" ]]; then
  echo "ctest_summary: no ctest summary line found (did ctest run any test?)" >&2
  exit 1
fi
echo "$line"
total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")"
if ((10#$total == 0)); then
  echo "ctest_summary: ctest ran zero tests" >&2
  exit 1
fi
