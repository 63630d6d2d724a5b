#!/usr/bin/env bash
# `make demo`: runs the built-in sample workloads on the emulated NPU and on the CPU golden backend
# and shows what they did. Later stages (profile, analyze, compare, view) are added here as they land.
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
