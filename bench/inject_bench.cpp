// The injection library's hot path: the cost of one recorded event, calling the subscriber table's
// callbacks directly from one thread while the drain thread runs (and writes SQLite) beside it.
//
//   build/bench/inject_bench            (finds ../runtime_hooks/src/inject/libnpuscope_inject.so,
//                                        or the library named by NPUSCOPE_INJECTION)
//
// Counter ns_per_event: wall nanoseconds per hook call, median over 5 repetitions. Target <= 25.
// The memory cap is set high enough that no event of the run is dropped (a dropped event is cheaper
// and would flatter the number): every event of the run fits in it even if the drain thread
// consumed nothing. BM_ApiEventCold measures the same call writing into fresh memory (page faults
// included): a burst longer than the drain thread's pace. BM_WakeAfterQuietPhase: how soon the drain
// thread runs a round after a burst that follows a quiet phase (Note [Drain pacing]: the producer
// taking a fresh chunk rings the alarm; without it the burst would wait for the doze, up to 200 ms).
// Counter wake_ms, median. (Moved here from tests/runtime_hooks/inject_pacing_test.cpp: tests never
// assert on wall-clock time.)
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "injection_session.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace {

using npuscope::hooks::ApiRecord;
using npuscope::hooks::MarkerEvent;
using npuscope::hooks::MarkerRecord;
using npuscope::hooks::SubscriberTable;
using npuscope::hooks::TaskPhase;
using npuscope::hooks::TaskRecord;

constexpr int kBurst = 1 << 15;                              // hook calls per burst: 2-4 MiB of entries
constexpr auto kDrainWait = std::chrono::milliseconds(100);  // two drain-thread wake intervals
constexpr benchmark::IterationCount kBursts = 16;
constexpr std::uint64_t kColdEvents = 1 << 20;

// One session for the whole run, writing SQLite in the process.
npuscope::bench::InjectionSession& injected() {
  static auto* instance = new npuscope::bench::InjectionSession("inject_bench", "NPUSCOPE_OUTPUT", "bench.db",
                                                                R"({"buffer_bytes": 2147483648})");
  return *instance;
}

// Runs bursts of kBurst calls of `body(i)` (one benchmark iteration each) and reports wall ns per hook
// call (`events_per_call` calls per body). Between bursts the drain thread gets kDrainWait to catch
// up, so the next burst writes into recycled (warm) chunks: the steady state of a workload whose
// average event rate the drain thread sustains. (A burst rate above it ends in dropped records.)
template <class Body>
void measure(benchmark::State& state, int events_per_call, Body body) {
  std::uint64_t i = 0;
  double ns = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < kBurst; ++k) body(++i);
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(took.count() * 1e-9);
    ns += took.count();
    std::this_thread::sleep_for(kDrainWait);
  }
  state.counters["ns_per_event"] = ns / static_cast<double>(state.iterations() * kBurst * events_per_call);
}

// An API enter or exit: one 64-byte entry.
void BM_ApiEvent(benchmark::State& state) {
  const SubscriberTable& t = injected().table();
  ApiRecord r{0, 1, "aclnnBench", 0, 0, 0};
  measure(state, 1, [&](std::uint64_t i) {
    r.ts_ns = i;
    r.connection_id = (i + 1) / 2;  // enter on odd i, its exit on the next even one
    r.is_exit = static_cast<std::uint8_t>((i & 1) == 0);
    t.on_api(t.user, r);
  });
}
BENCHMARK(BM_ApiEvent)->UseManualTime()->Iterations(kBursts)->Repetitions(5)->ReportAggregatesOnly(true);

// The same calls without pauses: 2^20 events straight into fresh chunks (first-touch page faults).
void BM_ApiEventCold(benchmark::State& state) {
  const SubscriberTable& t = injected().table();
  ApiRecord r{0, 1, "aclnnBench", 0, 0, 0};
  double ns = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t i = 1; i <= kColdEvents; ++i) {
      r.ts_ns = i;
      r.connection_id = (i + 1) / 2;
      r.is_exit = static_cast<std::uint8_t>((i & 1) == 0);
      t.on_api(t.user, r);
    }
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(took.count() * 1e-9);
    ns += took.count();
  }
  state.counters["ns_per_event"] = ns / static_cast<double>(state.iterations() * kColdEvents);
}
BENCHMARK(BM_ApiEventCold)->UseManualTime()->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);

// A task as the emulator reports it: queued (launch table), begin (ignored), end (a 128-byte entry).
void BM_TaskEvents(benchmark::State& state) {
  const SubscriberTable& t = injected().table();
  TaskRecord r{};
  r.name = "layer0/attn/MatMul";
  r.op_type = "MatMul";
  r.task_type = npuscope::TaskType::kAiCore;
  static std::uint64_t next_task = 1;
  measure(state, 3, [&](std::uint64_t) {
    r.task_id = next_task++;
    r.connection_id = r.task_id;
    r.phase = TaskPhase::kQueued;
    t.on_task(t.user, r);
    r.phase = TaskPhase::kBegin;
    t.on_task(t.user, r);
    r.phase = TaskPhase::kEnd;
    r.start_ns = r.task_id;
    r.end_ns = r.task_id + 10;
    t.on_task(t.user, r);
  });
}
BENCHMARK(BM_TaskEvents)->UseManualTime()->Iterations(kBursts)->Repetitions(5)->ReportAggregatesOnly(true);

// A marker range push or pop.
void BM_MarkerEvent(benchmark::State& state) {
  const SubscriberTable& t = injected().table();
  MarkerRecord r{0, "bench", -1, 0, MarkerEvent::kRangePush};
  measure(state, 1, [&](std::uint64_t i) {
    r.ts_ns = i;
    r.kind = (i & 1) != 0 ? MarkerEvent::kRangePush : MarkerEvent::kRangePop;
    t.on_marker(t.user, r);
  });
}
BENCHMARK(BM_MarkerEvent)->UseManualTime()->Iterations(kBursts)->Repetitions(5)->ReportAggregatesOnly(true);

// The drain thread's rounds, as `top` sees them: each ends in one voluntary context switch.
std::optional<std::string> drain_thread_dir() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name == "npuscope-drain") return task.path().string();
  }
  return std::nullopt;
}
long voluntary_switches(const std::string& task_dir) {
  std::ifstream status(task_dir + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}
// Wall time until the drain thread's next round (polled every 100 us).
std::chrono::duration<double, std::milli> until_next_round(const std::string& task_dir) {
  const long before = voluntary_switches(task_dir);
  const auto start = std::chrono::steady_clock::now();
  while (voluntary_switches(task_dir) == before) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return std::chrono::steady_clock::now() - start;
}

void BM_WakeAfterQuietPhase(benchmark::State& state) {
  const SubscriberTable& t = injected().table();
  const auto task_dir = drain_thread_dir();
  if (!task_dir) {
    state.SkipWithError("no thread named npuscope-drain");
    return;
  }
  static std::uint64_t seq = 1'000'000'000;
  double ms = 0;
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the doze grows to 200 ms
    until_next_round(*task_dir);                                  // just after a round: a whole doze ahead
    for (int i = 0; i < 2048; ++i, ++seq) t.on_api(t.user, {seq + 2, seq, "aclnnBurst", 7, 1, seq + 1});
    const auto woke = until_next_round(*task_dir);
    state.SetIterationTime(woke.count() * 1e-3);
    ms += woke.count();
  }
  state.counters["wake_ms"] = ms / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WakeAfterQuietPhase)->UseManualTime()->Iterations(3)->Repetitions(3)->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) { return npuscope::bench::run_benchmarks_in(injected, argc, argv); }
