#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer harnesses in fuzz/ with clang (ASan + UBSan) and runs each for
# SECONDS, starting from the seeds in fuzz/corpus/<harness>/. What a run discovers goes to a working
# corpus in the build directory, never into the tree; an input that crashes a harness is written to
# BUILD/crashes/<harness>/ and the script fails naming it: fix the bug, then copy the input into
# fuzz/regressions/<harness>/, where `make test` replays it for ever (docs/testing.md).
#
#   bash scripts/fuzz.sh [SECONDS per harness (600)] [BUILD_DIR (build-fuzz)] [HARNESS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
build=${2:-build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=(npy onnx_model device_spec mapping spool_replay trace_reader kineto foreign_db ascend_csv torch_pt msprobe_dump
                                  profile_points)

mkdir -p "$build"
CC=clang CXX=clang++ cmake -S . -B "$build" -DNPUSCOPE_FUZZ=ON -DNPUSCOPE_BUILD_TESTS=OFF > "$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target "${harnesses[@]/%/_fuzzer}"

failed=()
for h in "${harnesses[@]}"; do
  corpus=$build/corpus/$h crashes=$build/crashes/$h
  mkdir -p "$corpus" "$crashes"
  echo "== $h: ${seconds} s"
  # -rss_limit_mb: a harness that needs more than 2 GB for one input has found an unchecked size.
  if ! UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
       "$build/fuzz/${h}_fuzzer" "$corpus" "fuzz/corpus/$h" -max_total_time="$seconds" -timeout=20 \
       -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 2> "$build/$h.log"; then
    failed+=("$h")
  fi
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$build/$h.log" || tail -5 "$build/$h.log"
  grep -Eo "cov: [0-9]+ ft: [0-9]+" "$build/$h.log" | tail -1
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: ${failed[*]} found inputs that crash (see $build/<harness>.log and $build/crashes/)" >&2
  exit 1
fi
echo "fuzz: every harness ran ${seconds} s without a finding"
