#!/usr/bin/env bash
# The installed SDK, used the way a user outside this tree would: `cmake --install` into a fresh
# prefix, build tests/install/sdk_consumer once with find_package(npuscope) and once with plain g++
# and pkg-config, then profile it with the installed `npuscope run` and read the trace with
# `npuscope analyze` and with trace_stats (the consumer's program on the static libraries), run
# `npuscope exec` and `mpirun -np 2 npuscope cluster`. Everything after the install runs in a clean environment (env -i)
# and must use the prefix only: the injection library `npuscope run` hands the program, and the MPI
# module npuscope cluster loads under mpirun, are checked to be the installed ones.
#
#   sdk_install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
consumer_src=$(realpath "$2")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuscope_sdk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
clean=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" LANG=C.UTF-8)
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
for f in bin/npuscope bin/npuscope-viewer include/npuscope/emulator/ops.h include/npuscope/collector/trace_reader.h \
         include/npuscope/runtime_hooks/hook_api.h; do
  [[ -e $prefix/$f ]] || fail "$f was not installed"
done
pc=$(find "$prefix" -name npuscope.pc) && [[ -n $pc ]] || fail "npuscope.pc was not installed"
inject=$(find "$prefix" -name libnpuscope_inject.so) && [[ -n $inject ]] || fail "libnpuscope_inject.so was not installed"
module=$(find "$prefix" -name libnpuscope_tool_scaleout_mpi.so) && [[ -n $module ]] ||
  fail "libnpuscope_tool_scaleout_mpi.so (the tools' MPI module) was not installed"
[[ $(dirname "$module") == $(dirname "$inject") ]] || fail "the MPI module $module is not beside $inject"
# The installed CLI's emulator commands (Note [Commands that load the emulator] in
# cli/src/common/emulator_commands.h) load the installed emulator (RPATH), not the build tree's.
# ldd's output is read whole: `ldd | grep -q` under pipefail fails whenever grep exits before ldd has
# written.
commands=$(find "$prefix" -name libnpuscope_emulator_commands.so) && [[ -n $commands ]] ||
  fail "libnpuscope_emulator_commands.so (the emulator commands' module) was not installed"
[[ $(dirname "$commands") == $(dirname "$inject") ]] || fail "the module $commands is not beside $inject"
libs=$(ldd "$commands")
[[ $libs == *"libnpuscope_emulator.so => $prefix/"* ]] ||
  fail "$commands does not load the installed emulator: $(grep npuscope <<< "$libs")"
[[ $(ldd "$prefix/bin/npuscope") != *libnpuscope_emulator* ]] || fail "bin/npuscope links the emulator"
echo "== npuscope exec"
"${clean[@]}" LD_DEBUG=files "$prefix/bin/npuscope" exec --model "$build/samples/models/mlp.onnx" --device npu \
  > "$tmp/exec.txt" 2> "$tmp/exec_loader.txt" || { cat "$tmp/exec.txt"; fail "npuscope exec"; }
paths=$(grep -o "file=[^ ]*libnpuscope_emulator_commands.so" "$tmp/exec_loader.txt" | sort -u)
[[ $(wc -l <<< "$paths") == 1 && $(realpath "${paths#file=}") == $(realpath "$commands") ]] ||
  fail "npuscope exec did not load the installed $commands: ${paths:-none}"

echo "== find_package(npuscope)"
"${clean[@]}" cmake -S "$consumer_src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$tmp/cmake.log" || { cat "$tmp/cmake.log"; fail "configure against the installed package"; }
"${clean[@]}" cmake --build "$tmp/cmake" || fail "build against the installed package"

echo "== pkg-config npuscope"
flags=$("${clean[@]}" PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs npuscope)
libdir=$("${clean[@]}" PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --variable=libdir npuscope)
echo "pkg-config: $flags"
# shellcheck disable=SC2086  # the flags are words
"${clean[@]}" g++ -std=c++20 -O1 "$consumer_src/main.cpp" -o "$tmp/consumer_pc" $flags -Wl,-rpath,"$libdir" ||
  fail "build with pkg-config"

cd "$tmp"
for consumer in "$tmp/cmake/consumer" "$tmp/consumer_pc"; do
  echo "== npuscope run -- $consumer"
  rm -f t.db inject.txt
  # The program records the injection library it was given, then runs.
  "${clean[@]}" "$prefix/bin/npuscope" run -o t.db -- sh -c 'echo "$NPUSCOPE_INJECTION" > inject.txt; exec "$0"' \
    "$consumer" | tee run.txt || fail "npuscope run $consumer"
  [[ $(realpath "$(cat inject.txt)") == $(realpath "$inject") ]] ||
    fail "npuscope run gave the program $(cat inject.txt), not the installed $inject"
  grep -q "3.5 1 7.5 3" run.txt || fail "the consumer did not print its result"
  grep -Eq "npuscope: [2-9][0-9]* tasks" run.txt || fail "the trace has fewer than 2 tasks"
  "${clean[@]}" "$prefix/bin/npuscope" analyze t.db > analyze.txt || { cat analyze.txt; fail "npuscope analyze"; }
  for op in MatMul Add; do
    grep -q "$op" analyze.txt || { cat analyze.txt; fail "npuscope analyze does not list $op"; }
  done
  # The same trace read by a program of ours on the SDK's static libraries: one task of each op.
  "${clean[@]}" "$tmp/cmake/trace_stats" t.db | sort > stats.txt || fail "trace_stats"
  [[ $(cat stats.txt) == $'Add 1\nMatMul 1' ]] || fail "trace_stats read: $(cat stats.txt)"
done

# A command under mpirun loads the installed MPI module (Note [Tools over MPI] in
# npuscope/tool_scaleout/processes.h), which the dynamic loader names (LD_DEBUG=files). The rank
# traces come from the build tree's MPI sample, profiled by the installed npuscope.
echo "== mpirun -np 2 npuscope cluster"
mpirun=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
        mpirun --oversubscribe -np 2)
"${clean[@]}" "${mpirun[@]}" "$prefix/bin/npuscope" run -o traces/rank_%r.db -- "$build/samples/mpi_data_parallel" \
  --steps 2 > mpi_run.txt 2>&1 || { cat mpi_run.txt; fail "mpirun npuscope run"; }
"${clean[@]}" "${mpirun[@]}" -x LD_DEBUG=files "$prefix/bin/npuscope" cluster traces > cluster.txt 2> loader.txt ||
  { cat cluster.txt; grep -v "^ *[0-9]*:" loader.txt; fail "mpirun npuscope cluster"; }
grep -q "Ranks Analysed: 2" cluster.txt || { cat cluster.txt; fail "npuscope cluster did not analyse the 2 ranks"; }
# Each LD_DEBUG line starts with its process's pid: both processes, and the installed file only.
paths=$(grep -o "file=[^ ]*libnpuscope_tool_scaleout_mpi.so" loader.txt | sort -u)
pids=$(grep "file=[^ ]*libnpuscope_tool_scaleout_mpi.so" loader.txt | awk '{print $1}' | sort -u | wc -l)
[[ $pids == 2 && $(wc -l <<< "$paths") == 1 && $(realpath "${paths#file=}") == $(realpath "$module") ]] ||
  fail "the 2 processes of npuscope cluster did not load the installed $module: ${paths:-none} in $pids processes"

# The Python package, when this build has the PyTorch device: installed where Debian's python3 finds
# it under the prefix (lib/python3.X/dist-packages), loading the installed emulator.
if [[ -e $build/python/npuscope/libnpuscope_torch.so ]]; then
  echo "== import npuscope.torch from the prefix"
  pkg=$(find "$prefix" -path '*dist-packages/npuscope/torch.py') && [[ -n $pkg ]] || fail "npuscope.torch was not installed"
  torch_libs=$(ldd "$(dirname "$pkg")/libnpuscope_torch.so")
  [[ $torch_libs == *"libnpuscope_emulator.so => $prefix/"* ]] ||
    fail "libnpuscope_torch.so does not load the installed emulator: $(grep npuscope <<< "$torch_libs")"
  "${clean[@]}" PYTHONPATH="$(dirname "$(dirname "$pkg")")" /usr/bin/python3 -c '
import torch, npuscope.torch as npu
x = torch.arange(6.0).reshape(2, 3).to(npu.device())
print("torch:", (x @ x.t()).sum().item(), npu.fallback_ops())' > torch.txt || fail "import npuscope.torch"
  grep -q "torch: 83.0 {}" torch.txt || fail "the installed device computed: $(cat torch.txt)"
fi
echo "PASS"
