// The injection library's drain thread: the CPU it spends per launched op, turning the op's hook
// records into rows and writing them to the spool. This is what a program under `npuscope run` pays
// beside its own work (the hook calls themselves are inject_bench's), and on a machine without a
// spare core it is most of the profiling overhead.
//
//   build/bench/drain_bench             (finds ../runtime_hooks/src/inject/libnpuscope_inject.so,
//                                        or the library named by NPUSCOPE_INJECTION)
//
// One op is what the emulator records for a small kernel launch, as multi_stream makes them: the
// API call (its exit record, which carries the start), the task's end, and the output tensor's
// caching-allocator alloc and free: 4 records, 4 rows. Each iteration launches a
// burst of kOpsPerBurst ops from this thread, then waits kSettle for the drain thread to write them;
// the iteration's time is the drain thread's CPU time over that (its /proc schedstat), less what
// the same wait costs it with nothing to drain (measured once, before the first burst). Counters: drain_ns_per_op and
// drain_ns_per_record.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "injection_session.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace {

namespace hooks = npuscope::hooks;

constexpr int kOpsPerBurst = 32768;  // 9 MiB of spool: the idle wake-ups are a small part of a period
constexpr auto kSettle = std::chrono::milliseconds(60);  // six drain wake intervals
constexpr benchmark::IterationCount kBursts = 8;

npuscope::bench::InjectionSession& injected() {
  static auto* instance =
      new npuscope::bench::InjectionSession("drain_bench", "NPUSCOPE_SPOOL", "bench.spool", R"({"dump": "none"})");
  return *instance;
}

// The drain thread's CPU nanoseconds so far, from /proc/self/task/TID/schedstat.
class DrainClock {
 public:
  DrainClock() {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name == "npuscope-drain") path_ = task.path() / "schedstat";
    }
    if (path_.empty()) {
      std::fprintf(stderr, "drain_bench: no thread named npuscope-drain: did the injection library start?\n");
      std::exit(1);
    }
  }
  std::uint64_t ns() const {
    std::ifstream in(path_);
    std::uint64_t on_cpu = 0;
    in >> on_cpu;
    return on_cpu;
  }

 private:
  std::filesystem::path path_;
};

// One small element-wise kernel launch, as the emulator reports it to this subscriber (which asks
// for no API enters and no kQueued/kBegin task records: SubscriberTable::wants_*).
class OpRecorder {
 public:
  explicit OpRecorder(const hooks::SubscriberTable& t) : t_(t) {
    task_.op_type = "Add";
    task_.task_type = npuscope::TaskType::kAiVectorCore;
    task_.flops = 16;
    task_.bytes = 192;
    task_.block_dim = 1;
  }
  // The records one op stores.
  int records_per_op() const {
    return 4 + (t_.wants_api_enter ? 1 : 0) + (t_.wants_task_queued ? 1 : 0) + (t_.wants_task_begin ? 1 : 0);
  }
  void record_op() {
    const std::uint64_t id = ++next_;
    const std::uint64_t ts = id * 1000;
    const char* name = (id & 1) != 0 ? "t0/add" : "t0/mul";  // two kernels alternate, as in multi_stream
    if (t_.wants_api_enter) t_.on_api(t_.user, {ts, id, "aclnnAdd", 0, 0, 0});
    task_.task_id = id;
    task_.connection_id = id;
    task_.name = name;
    task_.call_index = static_cast<std::uint32_t>(id / 2);
    task_.queued_ns = ts + 100;
    task_.start_ns = task_.end_ns = 0;
    task_.phase = hooks::TaskPhase::kQueued;
    if (t_.wants_task_queued) t_.on_task(t_.user, task_);
    t_.on_memory(t_.user, {ts + 50, 0x1000 + (id & 7) * 512, 512, 4096, 1 << 20, 0, 0, npuscope::MemoryOp::kAlloc});
    t_.on_api(t_.user, {ts + 200, id, "aclnnAdd", 0, 1, ts});
    task_.phase = hooks::TaskPhase::kBegin;
    task_.start_ns = ts + 300;
    if (t_.wants_task_begin) t_.on_task(t_.user, task_);
    task_.phase = hooks::TaskPhase::kEnd;
    task_.end_ns = ts + 400;
    task_.emulation_ns = 90;
    t_.on_task(t_.user, task_);
    t_.on_memory(t_.user, {ts + 500, 0x1000 + (id & 7) * 512, 512, 3584, 1 << 20, 0, 0, npuscope::MemoryOp::kFree});
  }

 private:
  const hooks::SubscriberTable& t_;
  hooks::TaskRecord task_{};
  std::uint64_t next_ = 0;
};

void BM_DrainPerOp(benchmark::State& state) {
  const DrainClock drain;
  OpRecorder ops(injected().table());
  std::this_thread::sleep_for(kSettle);  // whatever an earlier benchmark left
  // The drain thread's idle wake-ups over one settle period, subtracted from each iteration.
  constexpr int kIdlePeriods = 4;
  const std::uint64_t idle_start = drain.ns();
  std::this_thread::sleep_for(kIdlePeriods * kSettle);
  const double idle = static_cast<double>(drain.ns() - idle_start) / kIdlePeriods;
  double total_ns = 0;
  for (auto _ : state) {
    // Back to back: the periods join up, so a flush or commit falls into one of them, not between.
    const std::uint64_t before = drain.ns();
    for (int i = 0; i < kOpsPerBurst; ++i) ops.record_op();
    std::this_thread::sleep_for(kSettle);
    const double ns = static_cast<double>(drain.ns() - before) - idle;
    state.SetIterationTime(ns * 1e-9);
    total_ns += ns;
  }
  const double ops_run = static_cast<double>(state.iterations()) * kOpsPerBurst;
  state.counters["drain_ns_per_op"] = total_ns / ops_run;
  state.counters["drain_ns_per_record"] = total_ns / (ops_run * ops.records_per_op());
  state.counters["idle_us_per_settle"] = idle / 1e3;
}
BENCHMARK(BM_DrainPerOp)->UseManualTime()->Iterations(kBursts)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) { return npuscope::bench::run_benchmarks_in(injected, argc, argv); }
