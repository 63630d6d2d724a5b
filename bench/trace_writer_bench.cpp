// How fast does the trace writer store tasks, and how big is a task on disk?
//   TraceWriterTasks/SPAN   1M TASK rows handed over SPAN rows per add() call (1024: what a
//                           drain thread does; 1: the worst case), from create() to finalize()
//                           (500 ms commits, index builds, WAL checkpoint) in a fresh file.
//   TraceWriterTasksFromSpool/1024  the same without a journal, as `npuscope run` converts a spool.
// Counters:
//   rows_per_second         rows / the whole time, finalize included: the sustained rate
//   add_rows_per_second     rows / the time of the add() calls alone (commits included)
//   add_cpu_rows_per_second rows / the CPU time of those calls: what an idle core sustains (the
//                           2-core machines we run on are shared, so wall time varies by ~2x)
//   finalize_ms             index builds, WAL checkpoint, close
//   bytes_per_row           final file size / rows: TASK with its indexes, no tensors
// The rows look like a real trace's: increasing nanosecond times (a task every ~9 us over a session
// of seconds), a few hundred op names, task ids and connection ids in launch order.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <time.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;

namespace {

constexpr std::int64_t kRows = 1'000'000;
constexpr std::int64_t kChunk = 1024;
constexpr int kOpNames = 300;

std::string bench_path() {
  return (std::filesystem::temp_directory_path() / ("npuscope_trace_writer_bench_" + std::to_string(getpid()) + ".db"))
      .string();
}

void remove_trace(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Row `i` of the synthetic trace; names[] are interned ids.
void fill_task(TaskRow& t, std::int64_t i, const std::vector<StringId>& names) {
  t.task_id = i + 1;
  t.queued_ns = 2'000'000'000 + i * 9'000;
  t.start_ns = t.queued_ns + 6'000 + (i % 5) * 700;
  t.end_ns = t.start_ns + 3'000 + (i % 37) * 250;
  t.device_id = 0;
  t.stream_id = static_cast<std::int32_t>(i % 2);
  t.name_id = names[static_cast<std::size_t>(i % kOpNames)];
  t.op_type_id = names[static_cast<std::size_t>(i % 40)];
  t.task_type = static_cast<std::int32_t>(i % 3 == 0 ? 0 : 1);
  t.connection_id = i + 1;
  t.block_dim = 24;
  t.flops = (i % 3 == 0) ? 2 * 512 * 512 * 512 : 4 * 65'536;
  t.bytes = 3 * 512 * 512 * 2;
  t.overflow = 0;
  t.fallback = 0;
  t.compute_dtype = 1;
  t.call_index = static_cast<std::int32_t>(i / kOpNames);
  t.emulation_ns = 40'000 + (i % 101) * 97;
  t.thread_id = 0;
}

// kDurable: the writer as the injection library uses it without `npuscope run` (WAL, commits every
// 500 ms); else as npuscope run's spool converter does (no journal: the spool is the durable copy).
template <bool kDurable>
void TraceWriterTasks(benchmark::State& state) {
  const std::int64_t span = state.range(0);
  const std::string path = bench_path();
  std::vector<TaskRow> chunk(static_cast<std::size_t>(kChunk));
  double add_seconds = 0, add_cpu_seconds = 0, finalize_seconds = 0, bytes = 0;
  for (auto _ : state) {
    remove_trace(path);
    auto writer = TraceWriter::create(path, {.durable = kDurable});
    std::vector<StringId> names;
    for (int n = 0; n < kOpNames; ++n) names.push_back(writer->intern("layer" + std::to_string(n) + "/MatMul"));
    const auto add_start = std::chrono::steady_clock::now();
    const double add_cpu_start = thread_cpu_seconds();
    for (std::int64_t base = 0; base < kRows; base += kChunk) {
      for (std::int64_t j = 0; j < kChunk; ++j) fill_task(chunk[static_cast<std::size_t>(j)], base + j, names);
      for (std::int64_t j = 0; j < kChunk; j += span) {
        writer->add(
            std::span<const TaskRow>(chunk).subspan(static_cast<std::size_t>(j), static_cast<std::size_t>(span)));
      }
    }
    const auto add_end = std::chrono::steady_clock::now();
    add_seconds += std::chrono::duration<double>(add_end - add_start).count();
    add_cpu_seconds += thread_cpu_seconds() - add_cpu_start;
    writer->finalize();
    writer.reset();
    finalize_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - add_end).count();
    bytes += static_cast<double>(std::filesystem::file_size(path));
  }
  remove_trace(path);
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["rows_per_second"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["add_rows_per_second"] = static_cast<double>(kRows) * iterations / add_seconds;
  state.counters["add_cpu_rows_per_second"] = static_cast<double>(kRows) * iterations / add_cpu_seconds;
  state.counters["finalize_ms"] = finalize_seconds * 1e3 / iterations;
  state.counters["bytes_per_row"] = bytes / iterations / static_cast<double>(kRows);
}

}  // namespace

BENCHMARK_TEMPLATE(TraceWriterTasks, true)
    ->Name("TraceWriterTasks")
    ->Arg(1024)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(TraceWriterTasks, false)
    ->Name("TraceWriterTasksFromSpool")
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
