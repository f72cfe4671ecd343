#!/usr/bin/env bash
# Runs every fuzzer of a CUBESOLVE_FUZZ build for SECONDS each, on a copy of
# its seed corpus (the repository's corpus is not changed). A finding stops
# the run: its input is kept under the printed path; add it to
# tests/fuzz/regressions/<name>/ once fixed, and CTest replays it forever.
#
#   tests/fuzz/run.sh [SECONDS] [BUILD_DIR]     (defaults: 60, build/fuzz)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-60}
BUILD=${2:-build/fuzz}
WORK=$(mktemp -d)
status=0
for bin in "$BUILD"/tests/fuzz/fuzz_*; do
  name=$(basename "$bin"); name=${name#fuzz_}
  mkdir -p "$WORK/$name/corpus" "$WORK/$name/findings"
  cp -r tests/fuzz/corpus/"$name"/. "$WORK/$name/corpus/" 2>/dev/null || true
  echo "== $name: ${SECONDS_EACH} s"
  if ! "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$WORK/$name/findings/" "$WORK/$name/corpus" 2>"$WORK/$name/log"; then
    status=1
    tail -40 "$WORK/$name/log"
    echo "finding kept in $WORK/$name/findings/"
  fi
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$WORK/$name/log" || true
  grep -E "DONE +cov:" "$WORK/$name/log" | tail -1 || true
done
exit $status
