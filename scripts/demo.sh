#!/usr/bin/env bash
# `make demo`: runs the built-in sample workloads on the emulated NPU and on the CPU golden backend
# and shows what they did, then profiles, analyzes, compares and views them.
set -euo pipefail
BUILD_DIR=${1:-build}
S="$BUILD_DIR/samples"

section() { printf '\n== %s\n' "$*"; }

section "LLaMA decoder layer, f16 on the emulated Ascend 910B"
"$S/llama_block" --device npu
section "LLaMA decoder layer, f32 CPU golden"
"$S/llama_block" --device cpu
section "ResNet basic block, f16 on the emulated Ascend 910B"
"$S/cnn_block" --device npu
section "ResNet basic block, f32 CPU golden"
"$S/cnn_block" --device cpu
section "ResNet basic block in saturation overflow mode on the Ascend 910 preset"
"$S/cnn_block" --device npu --spec ascend910

NPUSCOPE="$BUILD_DIR/cli/npuscope"
RESNET="$BUILD_DIR/samples/models/resnet18.onnx"
section "ResNet-18 ONNX model on the emulated Ascend 910B (npuscope exec)"
"$NPUSCOPE" exec --model "$RESNET" --device npu --output-dir "$BUILD_DIR/demo/resnet18_npu"
section "ResNet-18 ONNX model, CPU golden"
"$NPUSCOPE" exec --model "$RESNET" --device cpu --output-dir "$BUILD_DIR/demo/resnet18_cpu"
section "ResNet-18 ONNX model, NPU with force_fp16"
"$NPUSCOPE" exec --model "$RESNET" --device npu --precision-mode force_fp16 --output-dir "$BUILD_DIR/demo/resnet18_fp16"

DEMO="$BUILD_DIR/demo"
mkdir -p "$DEMO"
section "Profiling the LLaMA layer: npuscope run --dump stats"
"$NPUSCOPE" run --force -o "$DEMO/llama.db" --dump stats -- "$S/llama_block" --device npu --seq 128 --hidden 512 --heads 8 --ffn 1376
section "Exports: Perfetto trace and Chrome JSON (open either in https://ui.perfetto.dev) and msprof-style CSV"
"$NPUSCOPE" export "$DEMO/llama.db" --perfetto "$DEMO/llama.pftrace" --chrome "$DEMO/llama.json" --csv "$DEMO/llama_csv"
echo "op_statistic.csv:"
column -s, -t < "$DEMO/llama_csv/op_statistic.csv" 2>/dev/null || cat "$DEMO/llama_csv/op_statistic.csv"
section "Analysis of the LLaMA trace: npuscope analyze"
"$NPUSCOPE" analyze "$DEMO/llama.db" --top 5
section "An overflow found: Exp in f16 (npuscope run, then analyze --rules overflows)"
"$NPUSCOPE" run --force -o "$DEMO/overflow.db" --dump stats -- "$S/analysis_cases" --case overflow > /dev/null
"$NPUSCOPE" analyze "$DEMO/overflow.db" --rules overflows
section "What got slower: the same block with one op forced onto the AI CPU (npuscope diff)"
"$NPUSCOPE" run --force -o "$DEMO/diff_base.db" -- "$S/diff_cases" --variant base > /dev/null
"$NPUSCOPE" run --force -o "$DEMO/diff_fallback.db" -- "$S/diff_cases" --variant fallback > /dev/null
"$NPUSCOPE" diff "$DEMO/diff_base.db" "$DEMO/diff_fallback.db" --top 5
MLP="$BUILD_DIR/samples/models/mlp.onnx"
section "Accuracy: the 8-block MLP on the NPU vs the CPU golden run (npuscope compare --model)"
"$NPUSCOPE" compare --model "$MLP" --precision-mode must_keep_origin_dtype --top 5
section "Accuracy: the same with an error planted in block4.matmul (--perturb): found, and the ops after it inherit it"
"$NPUSCOPE" compare --model "$MLP" --precision-mode must_keep_origin_dtype --perturb 'block4.matmul:noise=0.5' \
  --keep-traces "$DEMO/mlp_compare" --annotate --top 5
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
section "PyTorch on the emulated NPU: a GPT decoder trains 3 AdamW steps under the profiler"
PYTHONPATH="$BUILD_DIR/python" "$NPUSCOPE" run --force -o "$DEMO/torch_gpt.db" -- \
  /usr/bin/python3 "$ROOT/samples/pytorch/train.py" --model gpt --steps 3
section "Analysis of the training trace: steps, passes, modules and aten ops (npuscope analyze)"
"$NPUSCOPE" analyze "$DEMO/torch_gpt.db" --top 8 --rules summary,top_ops,steps,model,fallback,memory
section "Loss scaling in force_fp16: torch's default scale 65536 overflows f16 in the backward pass; the step is skipped"
PYTHONPATH="$BUILD_DIR/python" "$NPUSCOPE" run --force -o "$DEMO/torch_fp16.db" -- \
  /usr/bin/python3 "$ROOT/samples/pytorch/train.py" --model resnet18 --steps 3 --batch 2 --image-size 32 \
  --precision-mode force_fp16 --loss-scale 65536
"$NPUSCOPE" analyze "$DEMO/torch_fp16.db" --rules overflows,loss_scale --top 3
section "PyTorch inference: torchvision's ResNet-50 on the device in force_fp16 vs CPU PyTorch"
PYTHONPATH="$BUILD_DIR/python" /usr/bin/python3 "$ROOT/samples/pytorch/infer.py" --model resnet50 --precision-mode force_fp16
section "The cost model against published Ascend 910B timings (npuscope calibrate; docs/calibration.md)"
"$NPUSCOPE" calibrate
section "A custom kernel (opkit, docs/opkit.md): the GELU sample against its golden, then its planted bug"
"$BUILD_DIR/samples/opkit/opkit_samples" --kernel gelu --n 1048576
"$BUILD_DIR/samples/opkit/opkit_samples" --kernel gelu --bug || echo "(the sanitizer's report above is the expected result)"
section "Many ranks (docs/cluster.md): 4 MPI ranks train an MLP data-parallel, rank 2's device 1.5x slower"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
rm -rf "$DEMO/ranks"
mpirun --oversubscribe -np 4 "$NPUSCOPE" run -o "$DEMO/ranks/rank_%r.db" -- "$BUILD_DIR/samples/mpi_data_parallel" \
  --spec "$ROOT/samples/specs/ascend910b_device_bound.json" --steps 5 --slow-rank 2 --slow-factor 1.5
section "The cluster analysis of the 4 rank traces (npuscope cluster): the slow rank, the matrix, the waits"
"$NPUSCOPE" cluster "$DEMO/ranks" -o "$DEMO/cluster.txt"
sed -n 1,60p "$DEMO/cluster.txt"
# Real profiles: shared/realdata when this clone sits beside it, else the real traces every clone has.

REALDATA="$ROOT/../shared/realdata"
REAL="$DEMO/real"
rm -rf "$REAL" && mkdir -p "$REAL"
cp "$ROOT"/tests/data/realdata/kineto_cross_hw/*.json.gz "$REAL/"
ASCEND="$REALDATA/ascend_pytorch_profiler/text/level1/rank0_ascend_pt"
if [ -d "$ASCEND" ]; then
  cp -r "$ASCEND" "$REAL/"
  section "A real Ascend 910B profile (torch_npu's text export, rank 0 of 8): npuscope import, then analyze"
  "$NPUSCOPE" import "$REAL/rank0_ascend_pt"
  "$NPUSCOPE" analyze "$REAL/rank0_ascend_pt" --top 8 --rules summary,step_time,top_ops,op_statistics,memory,block_dim
  section "The cost model against the real profile's kernels (npuscope calibrate --from-profile; docs/calibration_from_profile.md)"
  "$NPUSCOPE" calibrate --from-profile "$REAL/rank0_ascend_pt" -o "$DEMO/from_profile.txt"
  sed -n 1,20p "$DEMO/from_profile.txt"
  grep -A1 "^covered device time" "$DEMO/from_profile.txt"
  section "The real profile as a Perfetto trace: op -> task flows, communicators, counters, hardware metrics"
  "$NPUSCOPE" export "$REAL/rank0_ascend_pt" --perfetto "$DEMO/rank0_ascend.pftrace"
else
  echo "(no ../shared/realdata beside this clone: the Ascend profile is skipped, the GPU traces below are not)"
fi
DUMP="$REALDATA/msprobe/resnet50_gpu/step0/proc2016"
if [ -d "$DUMP" ]; then
  section "A real msprobe dump (ResNet-50 on a GPU) against a copy with one entry's output changed (npuscope compare)"
  rm -rf "$REAL/msprobe_planted" && cp -r "$DUMP" "$REAL/msprobe_planted" && chmod -R u+w "$REAL/msprobe_planted"
  /usr/bin/python3 - "$REAL/msprobe_planted/dump.json" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
out = dump["data"]["Functional.conv2d.20.forward"]["output"][0]
out["Max"] *= 3
out["Norm"] *= 3
json.dump(dump, open(sys.argv[1], "w"), indent=1)
PY
  "$NPUSCOPE" compare "$REAL/msprobe_planted" "$DUMP" --top 5 || true
fi
section "A real torch.profiler trace from an H100 (BERT-small): imported on first use, then analyzed"
"$NPUSCOPE" analyze "$REAL/h100_bert_small.json.gz" --top 5
section "The same model on an H100 and an MI300X (npuscope diff): aten ops paired across vendors"
"$NPUSCOPE" diff "$REAL/h100_bert_small.json.gz" "$REAL/mi300_bert_small.json.gz" --top 10
section "The timeline viewer (npuscope view): the LLaMA trace"
if [ -n "${DISPLAY:-}" ]; then
  "$NPUSCOPE" view "$DEMO/llama.db"
else
  shot="$DEMO/llama_timeline.png"
  if command -v xvfb-run > /dev/null; then
    # -f: xvfb-run's own authority directory can fail to go at exit, and it then exits 5.
    xvfb-run -a -f "$DEMO/xauthority" "$NPUSCOPE" view "$DEMO/llama.db" --select layer0/attn/o_proj --screenshot "$shot"
    echo "no display: wrote a screenshot of the viewer to $shot (set DISPLAY to open the window)"
  else
    echo "no display and no xvfb-run (scripts/bootstrap.sh installs it): skipped the viewer"
  fi
fi
