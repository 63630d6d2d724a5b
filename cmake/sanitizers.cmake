# Sanitizer and fuzzing builds (docs/testing.md): `make test-asan`, `make test-tsan`, `make fuzz`.
#
# NPUSCOPE_SANITIZE=address  ASan + UBSan (every UB aborts: -fno-sanitize-recover), the whole suite
# NPUSCOPE_SANITIZE=thread   TSan, for the threaded parts (make test-tsan picks the tests)
# NPUSCOPE_FUZZ=ON           clang only: the libraries instrumented for libFuzzer (+ ASan, UBSan) and
#                            the harnesses in fuzz/ built as fuzzers
# Every target is instrumented, so the flags are global. The system libraries (OpenBLAS, SQLite,
# protobuf, Mesa) are not: ASan still sees every access our code makes, TSan needs the suppressions
# in scripts/sanitizers/ for what it cannot see inside them.
set(NPUSCOPE_SANITIZE "" CACHE STRING "Sanitizer build: address (ASan + UBSan), thread (TSan), or empty")
set_property(CACHE NPUSCOPE_SANITIZE PROPERTY STRINGS "" address thread)
option(NPUSCOPE_FUZZ "Build the libFuzzer harnesses in fuzz/ (needs clang)" OFF)

set(npuscope_sanitize_flags "")
if(NPUSCOPE_SANITIZE STREQUAL "address")
  # Without UBSan's null check: ASan reports a null dereference itself (SEGV on address 0, with the
  # stack), and the check instruments every pointer use, ~8 % of the ASan build's compile time.
  list(APPEND npuscope_sanitize_flags -fsanitize=address,undefined -fno-sanitize=null -fno-sanitize-recover=undefined)
elseif(NPUSCOPE_SANITIZE STREQUAL "thread")
  list(APPEND npuscope_sanitize_flags -fsanitize=thread)
elseif(NOT NPUSCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "NPUSCOPE_SANITIZE must be address, thread or empty, not '${NPUSCOPE_SANITIZE}'")
endif()
if(NPUSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NPUSCOPE_FUZZ needs clang (libFuzzer): configure with CC=clang CXX=clang++ (make fuzz does)")
  endif()
  if(NOT NPUSCOPE_SANITIZE STREQUAL "")
    message(FATAL_ERROR "NPUSCOPE_FUZZ brings its own sanitizers: leave NPUSCOPE_SANITIZE empty")
  endif()
  # fuzzer-no-link: coverage for the libraries; the harness executables link libFuzzer itself.
  list(APPEND npuscope_sanitize_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  # RapidJSON 1.1.0's stack adds to its null pointer before its first allocation (internal/stack.h
  # Reserve: benign, fixed upstream after 1.1.0); clang's UBSan reports it on every JSON parse.
  list(APPEND npuscope_sanitize_flags "-fsanitize-ignorelist=${PROJECT_SOURCE_DIR}/fuzz/ubsan_ignorelist.txt")
endif()
if(npuscope_sanitize_flags)
  list(APPEND npuscope_sanitize_flags -fno-omit-frame-pointer)
  add_compile_options(${npuscope_sanitize_flags})
  add_link_options(${npuscope_sanitize_flags})
  # -O1: sanitized code at -O3 builds slowly and reports through inlined frames. -g1: a report's
  # stack needs functions and lines only, and without the types and variables a file builds ~20%
  # faster (the CI builds everything twice).
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1")
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O1 -g1")
endif()

# Note [Uninstrumented test code]
# Under ASan + UBSan a GoogleTest file took 24 s to compile against 13.6 s without the
# instrumentation (tests/collector/trace_reader_test.cpp, -Og; 73 % of it code generation for the
# assertions' templates): the 145 test files were 1119 of the ASan build's 3170 CPU seconds, the
# largest part of a CI run that must stay under 45 minutes. The tests' own code only calls the code
# under test, so in the ASan build it is compiled without the sanitizers (NPUSCOPE_TEST_CODE_FLAGS,
# applied by tests/CMakeLists.txt) and linked with them: every library, program, sample and fuzz
# replay stays instrumented, and ASan still checks every access they make on a test's behalf. What
# is given up: an overflow in a test body itself, and the copies of header-inline library functions
# the linker happens to take from a test's object. TSan keeps the tests instrumented: a race is
# between two sides, and uninstrumented test threads would hide it or report a false one.
set(NPUSCOPE_TEST_CODE_FLAGS "")
if(NPUSCOPE_SANITIZE STREQUAL "address")
  set(NPUSCOPE_TEST_CODE_FLAGS -fno-sanitize=all)
endif()
