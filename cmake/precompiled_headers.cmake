# Precompiled headers for the targets with many translation units.
#
# Note [Precompiled headers]
# Most of a build's time goes into the compiler's front end reading the same headers again: the C++20
# standard library (80-90k preprocessed lines in an analyzer file), GoogleTest in every test file,
# ATen in every file of the PyTorch device. Precompiled once per target, they cost (CPU seconds,
# g++ 12, measured one file at a time on 29 November 2026):
#   analyzer/src/overflow.cpp          6.2 -> 4.9   (standard headers)
#   emulator/src/kernels/pool_ops.cpp  4.5 -> 2.8   (standard headers)
#   tests/emulator/conv_ops_test.cpp   6.0 -> 4.2   (standard headers + gtest)
#   tests/analyzer/cluster_test.cpp    8.4 -> 5.9   (standard headers + gtest)
#   pytorch/src/kernels_nn.cpp        23.8 -> 13.9  (ATen + torch/library.h)
#   pytorch/src/kernels_compare.cpp   27.3 -> 13.8
# against 8-10 s to build a standard-library header and 32 s for ATen's, once per target (the tests
# share one: REUSE_FROM). The CI builds everything twice (release and ASan), on 2 cores.
# The price: a file that forgets an #include of a standard header still compiles here. A build with
# -DNPUSCOPE_PCH=OFF finds those (clang-tidy's misc-include-cleaner is not in clang-tidy 14).
option(NPUSCOPE_PCH "Precompile the standard, GoogleTest and ATen headers of the larger targets" ON)

# The standard headers that most of our files include (counted over the tree).
set(NPUSCOPE_PCH_STD_HEADERS
    <algorithm> <array> <atomic> <charconv> <chrono> <cmath> <cstdint> <cstdio> <cstdlib> <cstring>
    <filesystem> <fstream> <functional> <limits> <map> <memory> <mutex> <optional> <set> <span>
    <sstream> <string> <string_view> <thread> <tuple> <unordered_map> <utility> <variant> <vector>)

# npuscope_precompile_headers(target [header...]): the standard headers and the given ones,
# precompiled for `target`'s own files.
function(npuscope_precompile_headers target)
  if(NPUSCOPE_PCH)
    target_precompile_headers(${target} PRIVATE ${NPUSCOPE_PCH_STD_HEADERS} ${ARGN})
    target_compile_options(${target} PRIVATE -Winvalid-pch)  # a header g++ cannot use is said, not skipped
  endif()
endfunction()

# npuscope_reuse_precompiled_headers(target from): `target` compiles with `from`'s precompiled
# headers (the two must have the same compile options: the tests do).
function(npuscope_reuse_precompiled_headers target from)
  if(NPUSCOPE_PCH)
    target_precompile_headers(${target} REUSE_FROM ${from})
    target_compile_options(${target} PRIVATE -Winvalid-pch)
  endif()
endfunction()
