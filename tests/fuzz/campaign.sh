#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Long fuzzing runs, one target after another (one core each):
#   tests/fuzz/campaign.sh [BUILD_DIR] [SECONDS_PER_TARGET] [TARGET...]
# BUILD_DIR is a `cmake --preset fuzz` build (default build-fuzz); each target stops after SECONDS_PER_TARGET
# (default 3600) or 10 million executions. The growing corpus is kept in BUILD_DIR/fuzz-corpus/<target> (the
# committed seeds in tests/fuzz/corpus are only read), findings and logs in BUILD_DIR/fuzz-findings/.
# Exits non-zero if any target found something; the last lines of each log give executions, exec/s and coverage.
# FUZZ_ARGS adds libFuzzer options to every target, e.g. FUZZ_ARGS=-max_len=8192 (libFuzzer otherwise tries inputs up
# to the largest in the corpus: the torch.profiler corpus holds 0.5 MB files, which cut its rate to a third).
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build-fuzz}
seconds=${2:-3600}
shift $(( $# >= 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(figurespec rules kineto otf2)
out=$build/fuzz-findings
mkdir -p "$out"
status=0
for t in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$t
  mkdir -p "$corpus"
  log=$out/$t.log
  [ -e "$log" ] && mv "$log" "$out/$t.$(date +%Y%m%d-%H%M%S).log" # keep earlier runs' logs
  echo "== fuzz_$t: up to ${seconds}s or 10M executions, log $log"
  # OTF2 mallocs whatever a corrupt count asks for and handles the failure: only the resident size is limited.
  extra=()
  [ "$t" = otf2 ] && extra=(-malloc_limit_mb=65536)
  QT_QPA_PLATFORM=offscreen "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -runs=10000000 -timeout=25 \
    "${extra[@]}" ${FUZZ_ARGS:-} -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$out/$t-" "$corpus" "$src/tests/fuzz/corpus/$t" \
    >"$log" 2>&1
  rc=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)|cov: .*(DONE|pulse)' "$log" | tail -4
  if [ $rc -eq 72 ] && grep -q 'libFuzzer: run interrupted' "$log"; then
    echo "fuzz_$t: interrupted (Ctrl+C or SIGINT), nothing found"
  elif [ $rc -ne 0 ]; then
    echo "fuzz_$t: FINDING (exit $rc), see $log"
    status=1
  fi
done
exit $status
