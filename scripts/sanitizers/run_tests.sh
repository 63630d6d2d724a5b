#!/usr/bin/env bash
# Runs the test suite of a sanitizer build (`make test-asan`, `make test-tsan`; docs/testing.md).
#
#   run_tests.sh BUILD_DIR address|thread [ctest arguments...]
#
# address: the whole suite under ASan + UBSan (any report fails its test: UBSan aborts, LSan reports
#          leaks at exit), except the packaging tests, which build programs against the installed
#          (instrumented) static libraries with a plain compiler.
# thread:  TSan on the tests of what runs threads: the injection library (hooks, drain thread, spool),
#          the trace writer and reader, npuscope run's converter, the emulator's device and stream
#          threads and dispatcher, collectives between rank threads, the viewer's model (its loader
#          thread).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 kind=$2
shift 2
cd "$build"
case "$kind" in
  address)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0
    status=0
    ctest --output-on-failure -j "$(nproc)" -E '^(sdk_install|deb_package|format_check|.*Xvfb.*|MpiDataParallel\..*)$' "$@" ||
      status=$?
    # Every test that runs the viewer under Xvfb has Xvfb in its name (ViewerXvfbTest.*,
    # KinetoCommandTest.ViewUnderXvfbDrawsAnImportedTrace, ...). The viewer under Xvfb keeps two
    # callocs of the uninstrumented GLFW/Mesa stack at exit; LSan's fast
    # unwinder stops at a bogus frame that lands in libubsan (suppressed in lsan.supp) or, with another
    # address layout, in no module at all, which no suppression can name: a leak report at random.
    # OpenMPI likewise: its components (dlopen'd, unloaded by MPI_Finalize, built without frame
    # pointers) leave start-up allocations whose stacks end in no module, so the MPI sample's ranks
    # and `npuscope cluster` under mpirun cannot be leak-checked either.
    # These tests run with ASan and UBSan but without the leak check; the viewer's and the collectives'
    # own code is leak-checked by the headless viewer, timeline model and CollectivesTest tests above.
    ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
      ctest --output-on-failure -j "$(nproc)" -R '^(.*Xvfb.*|MpiDataParallel\..*)$' "$@" || status=$?
    exit "$status"
    ;;
  thread)
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp
    # OpenBLAS's OpenMP threads are not instrumented: one thread keeps TSan from guessing about them.
    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
    exec ctest --output-on-failure -j "$(nproc)" \
      -R '^(Inject|TraceWriter|TraceSpool|TraceReader|TraceRecovery|RunCommand|DispatchThreads|VirtualTime|VirtualClock|CollectivesTest|TimelineModel|ViewerModel|FrameStatsJson|LodAtMidZoom)' "$@"
    ;;
  *) echo "run_tests.sh: unknown sanitizer '$kind' (address or thread)" >&2; exit 2 ;;
esac
