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
// included): a burst longer than the drain thread's pace.
#include <benchmark/benchmark.h>

#include <chrono>
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

}  // namespace

int main(int argc, char** argv) { return npuscope::bench::run_benchmarks_in(injected, argc, argv); }
