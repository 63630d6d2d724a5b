#!/usr/bin/env bash
# Runs every bench binary of a build (BUILD_DIR/bench/*_bench) and writes docs/PERFORMANCE.md.
#
#   bash bench/run_bench.sh [BUILD_DIR]      (what `make bench` runs, with BUILD_DIR=build)
#
# Each benchmark runs 3 repetitions of >= 0.3 s and the report gives the median, so the whole script
# stays within a few minutes on two cores and a noisy neighbour moves the result less.
#
# The ONNX ResNet-18 section compares onnx_exec_bench's forward pass with PyTorch's on the same model
# and weights (bench/torch_resnet18.py), when /usr/bin/python3 can import torch (`make bench` installs
# python3-torch through `scripts/bootstrap.sh --bench`). NPUSCOPE_RESNET18 overrides the model path.
#
# bench/torch_device_bench.py (PYTHONPATH=BUILD_DIR/python) times the PyTorch device (npuscope.torch)
# against CPU PyTorch in one process: a tiny op's dispatch overhead and a ResNet-18 training step.
#
# bench/profiler_overhead.py times whole sample processes unprofiled and under `npuscope run`; the
# report itself is written by bench/report.py from everything collected in a temporary directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$(cd "${1:-build}" && pwd)"
MIN_TIME="${NPUSCOPE_BENCH_MIN_TIME:-0.3}"
OUT_DIR="$(mktemp -d)"
trap 'rm -rf "$OUT_DIR"' EXIT

shopt -s nullglob
benches=("$BUILD_DIR"/bench/*_bench)
if [ ${#benches[@]} -eq 0 ]; then
  echo "run_bench.sh: no bench binaries in $BUILD_DIR/bench (configure with -DNPUSCOPE_BUILD_BENCH=ON)" >&2
  exit 1
fi

for bin in "${benches[@]}"; do
  name="$(basename "$bin")"
  echo "== $name"
  run=()
  # The viewer's frame bench draws into a window: a virtual display when there is none.
  # -f: xvfb-run's own authority directory can fail to go at exit, and it then exits 5.
  if [ "$name" = viewer_frame_bench ] && [ -z "${DISPLAY:-}" ]; then
    run=(xvfb-run -a -f "$OUT_DIR/xauthority" -s "-screen 0 1920x1200x24")
  fi
  "${run[@]}" "$bin" --benchmark_min_time="$MIN_TIME" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_format=json --benchmark_out="$OUT_DIR/$name.json" --benchmark_out_format=json >/dev/null
done

# PyTorch's time for the same ResNet-18 (and a check of the emulator's CPU logits against it).
MODEL="${NPUSCOPE_RESNET18:-$BUILD_DIR/samples/models/resnet18.onnx}"
if [ -x "$BUILD_DIR/bench/onnx_exec_bench" ] && [ -f "$MODEL" ]; then
  echo "== torch_resnet18.py"
  check=()
  [ -x "$BUILD_DIR/cli/npuscope" ] && check=(--npuscope "$BUILD_DIR/cli/npuscope")
  /usr/bin/python3 "$ROOT/bench/torch_resnet18.py" "$MODEL" "${check[@]}" >"$OUT_DIR/torch_resnet18.out" ||
    echo '{"available": false, "error": "bench/torch_resnet18.py failed"}' >"$OUT_DIR/torch_resnet18.out"
fi

# The PyTorch device against CPU PyTorch in one process: tiny-op dispatch overhead and a ResNet-18 training
# step. The script itself reports "available": false without torch or the built package (NPUSCOPE_TORCH).
echo "== torch_device_bench.py"
PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$ROOT/bench/torch_device_bench.py" \
  >"$OUT_DIR/torch_device_bench.out" ||
  echo '{"available": false, "error": "bench/torch_device_bench.py failed"}' >"$OUT_DIR/torch_device_bench.out"

# Training steps of small models (ShuffleNet, a U-Net, a GRU text model, a Transformer encoder, a GAN, Conv1d +
# CTC, an MLP) on the device against CPU PyTorch: the per-op host path.
echo "== torch_small_models.py"
PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$ROOT/bench/torch_small_models.py" \
  >"$OUT_DIR/torch_small_models.out" ||
  echo '{"available": false, "error": "bench/torch_small_models.py failed"}' >"$OUT_DIR/torch_small_models.out"

# What profiling costs a PyTorch training step (unprofiled, --dump none, --dump stats, --check-ops).
if [ -x "$BUILD_DIR/cli/npuscope" ] && [ -f "$BUILD_DIR/python/npuscope/libnpuscope_torch.so" ]; then
  echo "== torch_profile_overhead.py"
  PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$ROOT/bench/torch_profile_overhead.py" \
    "$BUILD_DIR" >"$OUT_DIR/torch_profile_overhead.json" ||
    echo "run_bench.sh: warning: bench/torch_profile_overhead.py failed; its section is left out" >&2
fi

# End-to-end profiling overhead (whole sample processes, unprofiled vs under `npuscope run`).
if [ -x "$BUILD_DIR/cli/npuscope" ] && [ -x "$BUILD_DIR/samples/multi_stream" ] && [ -x "$BUILD_DIR/samples/llama_block" ]; then
  echo "== profiler_overhead.py"
  /usr/bin/python3 "$ROOT/bench/profiler_overhead.py" "$BUILD_DIR" >"$OUT_DIR/profiler_overhead.json" ||
    echo "run_bench.sh: warning: bench/profiler_overhead.py failed; its section is left out" >&2
else
  echo "run_bench.sh: warning: $BUILD_DIR lacks cli/npuscope or samples/; no profiling overhead section" >&2
fi

# npuscope cluster on 256 synthetic rank traces (threads, then 2 MPI processes), and 16 real MPI ranks.
if [ -x "$BUILD_DIR/cli/npuscope" ] && [ -x "$BUILD_DIR/bench/write_rank_traces" ]; then
  echo "== cluster_bench.py"
  /usr/bin/python3 "$ROOT/bench/cluster_bench.py" "$BUILD_DIR" >"$OUT_DIR/cluster.json" ||
    echo "run_bench.sh: warning: bench/cluster_bench.py failed; its section is left out" >&2
fi

# npuscope import of the biggest real Kineto trace against Python's json.load, and the peak memory of
# importing synthetic traces of 0.1, 1 and 4 GB made from it (NPUSCOPE_IMPORT_BENCH_ARGS=--big adds 10 GB).
if [ -x "$BUILD_DIR/cli/npuscope" ] && [ -x "$BUILD_DIR/bench/make_kineto_trace" ]; then
  echo "== import_bench.py"
  # shellcheck disable=SC2086
  /usr/bin/python3 "$ROOT/bench/import_bench.py" "$BUILD_DIR" ${NPUSCOPE_IMPORT_BENCH_ARGS:-} >"$OUT_DIR/import.json" ||
    echo "run_bench.sh: warning: bench/import_bench.py failed; its section is left out" >&2
fi

# read_torch_pt (msprobe's tensor-mode .pt files) against torch.load of the same 256 MB float32 tensor.
if [ -x "$BUILD_DIR/bench/read_torch_pt" ]; then
  echo "== torch_pt_bench.py"
  /usr/bin/python3 "$ROOT/bench/torch_pt_bench.py" "$BUILD_DIR" >"$OUT_DIR/torch_pt.json" ||
    echo "run_bench.sh: warning: bench/torch_pt_bench.py failed; its section is left out" >&2
fi

# npuscope compare of two msprobe dumps (100,000 statistics entries; 1 GB of .pt a side in tensor mode)
# against the Python reference of the same work.
if [ -x "$BUILD_DIR/cli/npuscope" ]; then
  echo "== compare_dumps_bench.py"
  /usr/bin/python3 "$ROOT/bench/compare_dumps_bench.py" "$BUILD_DIR" >"$OUT_DIR/compare_dumps.json" ||
    echo "run_bench.sh: warning: bench/compare_dumps_bench.py failed; its section is left out" >&2
fi

# The model zoo: ~20 models' forward on cpu and npu against PyTorch's own, exported at bench time.
if [ -x "$BUILD_DIR/bench/zoo_exec" ]; then
  echo "== model_zoo.py"
  /usr/bin/python3 "$ROOT/bench/model_zoo.py" --zoo-exec "$BUILD_DIR/bench/zoo_exec" --out "$OUT_DIR" ||
    echo "run_bench.sh: warning: bench/model_zoo.py failed; its section is left out" >&2
fi

/usr/bin/python3 "$ROOT/bench/report.py" "$OUT_DIR" "$ROOT/docs/PERFORMANCE.md" "bash bench/run_bench.sh ${1:-build}"
