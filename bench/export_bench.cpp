// How fast do the timeline exports write, and how big is an event?
//   ExportPerfetto   `npuscope export --perfetto` (export_perfetto.h) of a trace of 500k tasks on 2
//                    streams, each launched by an API call inside a PyTorch op on one host thread (a
//                    flow from each: the Chrome export draws only the API call's)
//   ExportChrome     `npuscope export --chrome` of the same trace
// Counters:
//   rows_per_second  tasks + API calls + PyTorch ops written per second (each a slice)
//   bytes_per_row    the file's size / those rows: Perfetto's interned protobuf against JSON
// The trace is written once, before the first run, and read by both.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "npuscope/collector/export_chrome.h"
#include "npuscope/collector/export_perfetto.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;

namespace {

constexpr std::int64_t kTasks = 500'000;
constexpr int kOpNames = 300;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("npuscope_export_bench_" + std::to_string(getpid()) + name))
      .string();
}

// The trace both exports read: written on first use, removed at exit.
const std::string& bench_trace() {
  static const std::string path = [] {
    const std::string p = temp_path(".db");
    auto w = TraceWriter::create(p, {.overwrite = true});
    std::vector<StringId> names;
    for (int i = 0; i < kOpNames; ++i)
      names.push_back(w->intern("layer" + std::to_string(i / 10) + "/op" + std::to_string(i)));
    const StringId api = w->intern("aclnnMatMul"), shapes = w->intern("8,512;512,512;"), dtypes = w->intern("f16;f16;");
    const StringId aten = w->intern("aten::matmul");
    std::vector<TaskRow> tasks;
    std::vector<ApiRow> apis;
    std::vector<PytorchApiRow> ops;
    for (std::int64_t i = 0; i < kTasks; ++i) {
      TaskRow t;
      t.task_id = i + 1;
      t.start_ns = 2'000'000'000 + i * 9'000 + 6'000;
      t.end_ns = t.start_ns + 3'000 + (i % 37) * 50;
      t.stream_id = static_cast<std::int32_t>(i % 2);
      t.name_id = names[static_cast<std::size_t>(i % kOpNames)];
      t.op_type_id = names[static_cast<std::size_t>(i % 40)];
      t.task_type = static_cast<std::int32_t>(i % 3 == 0 ? 0 : 1);
      t.connection_id = i + 1;
      t.block_dim = 24;
      t.flops = 2 * 8 * 512 * 512;
      t.bytes = 3 * 512 * 512 * 2;
      t.input_shapes_id = shapes;
      t.input_dtypes_id = dtypes;
      t.pytorch_api_id = i + 1;
      tasks.push_back(t);
      const std::int64_t launch = 2'000'000'000 + i * 9'000;
      apis.push_back({launch, launch + 4'000, api, i + 1, 0});
      ops.push_back({.id = i + 1, .start_ns = launch - 1'000, .end_ns = launch + 4'500, .name_id = aten});
      ops.back().input_shapes_id = shapes;
      if (tasks.size() == 65'536) {
        w->add(tasks);
        w->add(apis);
        w->add(ops);
        tasks.clear();
        apis.clear();
        ops.clear();
      }
    }
    w->add(tasks);
    w->add(apis);
    w->add(ops);
    w->finalize();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove(temp_path(".db"), ec);
    });
    return p;
  }();
  return path;
}

template <class Export>
void run_export(benchmark::State& state, Export&& export_one, const char* suffix) {
  const auto reader = TraceReader::open(bench_trace());
  const std::string out = temp_path(suffix);
  std::int64_t bytes = 0;
  for (auto _ : state) bytes = export_one(*reader, out);
  const double rows = static_cast<double>(3 * kTasks);
  state.counters["rows_per_second"] =
      benchmark::Counter(rows * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes_per_row"] = static_cast<double>(bytes) / rows;
  std::error_code ec;
  std::filesystem::remove(out, ec);
}

void ExportPerfetto(benchmark::State& state) {
  run_export(
      state, [](const TraceReader& r, const std::string& out) { return export_perfetto_trace(r, out).bytes; },
      ".pftrace");
}

void ExportChrome(benchmark::State& state) {
  run_export(
      state, [](const TraceReader& r, const std::string& out) { return export_chrome_trace(r, out).bytes; }, ".json");
}

}  // namespace

BENCHMARK(ExportPerfetto)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ExportChrome)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
