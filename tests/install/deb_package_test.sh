#!/usr/bin/env bash
# `make package`: CPack builds the npuscope .deb from the build tree (here into a temporary
# directory); it must hold the programs, the SDK, the injection library and the tools' MPI module
# under /usr and declare the Debian packages they run on (dpkg-shlibdeps).
#
#   deb_package_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuscope_deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp" > "$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(find "$tmp" -maxdepth 1 -name 'npuscope_*.deb') && [[ -n $deb ]] || { cat "$tmp/cpack.log"; fail "no .deb written"; }
dpkg-deb -I "$deb" | tee "$tmp/info.txt"
dpkg-deb -c "$deb" > "$tmp/contents.txt"

depends=$(sed -n 's/^ Depends: //p' "$tmp/info.txt")
[[ -n $depends ]] || fail "the package declares no Depends"
# The emulator's BLAS (the OpenMP build, Note in the top-level CMakeLists.txt), the trace store,
# the CLI's option parser, the viewer's window library and the tools' MPI module's OpenMPI.
for package in libopenblas0-openmp libsqlite3-0 libboost-program-options libglfw3 libopenmpi3 libstdc++6; do
  grep -q "$package" <<< "$depends" || fail "Depends lacks $package: $depends"
done
# lib/ may be lib/<multiarch>/ (GNUInstallDirs when configured with the prefix /usr).
for f in bin/npuscope bin/npuscope-viewer include/npuscope/emulator/ops.h LIB/npuscope/libnpuscope_inject.so \
         LIB/npuscope/libnpuscope_tool_scaleout_mpi.so LIB/npuscope/libnpuscope_emulator_commands.so \
         LIB/libnpuscope_emulator.so LIB/libnpuscope_collector.a \
         LIB/cmake/npuscope/npuscopeConfig.cmake LIB/pkgconfig/npuscope.pc; do
  grep -Eq " \./usr/${f/LIB/lib(/[a-z0-9_]+-linux-gnu)?}\$" "$tmp/contents.txt" || fail "$f is not in the package"
done
# The PyTorch device, when this build has it: the Python package where /usr/bin/python3 looks, and
# the libtorch it runs on among the dependencies.
if [[ -e $build/python/npuscope/libnpuscope_torch.so ]]; then
  for f in npuscope/__init__.py npuscope/torch.py npuscope/libnpuscope_torch.so; do
    grep -Eq " \./usr/lib/python3[.0-9]*/dist-packages/$f\$" "$tmp/contents.txt" || fail "$f is not in the package"
  done
  for package in libtorch python3-torch; do
    grep -q "$package" <<< "$depends" || fail "Depends lacks $package: $depends"
  done
fi
echo "PASS: $(basename "$deb")"
