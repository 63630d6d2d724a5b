// The synthetic trace the analyzer and viewer benches read, written through the real TraceWriter.
// It looks like a long inference run: two streams on one ascend910b-like device, 300 op names of 40
// types (MatMul-like cube ops and small vector ops, a few AI CPU ones), an aclnn API call per task
// on two host threads, a stream synchronization every 1000 tasks, an alloc/free pair every 100
// tasks, a small copy every 500, one overflow every 100000.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::bench {

using collector::TaskRow;

constexpr int kOpNames = 300;
constexpr int kOpTypes = 40;
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kTaskEveryNs = 9'000;

struct Names {
  std::vector<collector::StringId> ops, types, apis;
  collector::StringId sync = 0;
};

inline Names intern_names(collector::TraceWriter& w) {
  Names n;
  for (int t = 0; t < kOpTypes; ++t) {
    const std::string type = t == 0 ? "MatMul" : "Op" + std::to_string(t);
    n.types.push_back(w.intern(type));
    n.apis.push_back(w.intern("aclnn" + type));
  }
  for (int o = 0; o < kOpNames; ++o)
    n.ops.push_back(w.intern("layer" + std::to_string(o / 10) + "/op" + std::to_string(o)));
  n.sync = w.intern("aclrtSynchronizeStream");
  return n;
}

inline void add_device(collector::TraceWriter& w) {
  collector::DeviceInfoRow d;
  d.name = "ascend910b";
  d.cube_cores = 24;
  d.vector_cores = 48;
  d.clock_hz = 1.8e9;
  d.cube_peak_flops = 313e12;
  d.vector_peak_flops = 22e12;
  d.memory_bandwidth = 1.6e12;
  d.memory_bytes = 64LL << 30;
  d.precision_mode = "allow_fp32_to_fp16";
  d.overflow_mode = "inf_nan";
  w.add(d);
}

// Task `i`, its launching API call and (every 100) an alloc/free pair. A `changed` trace is the NEW
// side of the diff bench: op 7 takes 3 us longer and the ops of type 5 fell back to the AI CPU (4x).
inline void fill_task(TaskRow& t, collector::ApiRow& a, std::int64_t i, const Names& n, bool changed = false) {
  const int op = static_cast<int>(i % kOpNames);
  const int type = op % kOpTypes;
  const bool cube = type == 0;
  t.task_id = i + 1;
  t.queued_ns = 1'000'000'000 + i * kTaskEveryNs;
  t.start_ns = t.queued_ns + 6'000 + (i % 5) * 700;
  t.end_ns = t.start_ns + (cube ? 7'000 : 1'500 + (i % 37) * 40);
  t.device_id = 0;
  t.stream_id = static_cast<std::int32_t>(i % 2);
  t.name_id = n.ops[static_cast<std::size_t>(op)];
  t.op_type_id = n.types[static_cast<std::size_t>(type)];
  t.task_type = static_cast<std::int32_t>(cube                   ? TaskType::kAiCore
                                          : type == kOpTypes - 1 ? TaskType::kAiCpu
                                                                 : TaskType::kAiVectorCore);
  t.connection_id = i + 1;
  t.block_dim = cube ? 24 : 8;
  t.flops = cube ? 2LL * 512 * 512 * 512 : 65'536;
  t.bytes = cube ? 3LL * 512 * 512 * 2 : 3LL * 65'536 * 2;
  if (changed && op == 7) t.end_ns += 3'000;
  if (changed && type == 5) {
    t.end_ns += 3 * (t.end_ns - t.start_ns);
    t.task_type = static_cast<std::int32_t>(TaskType::kAiCpu);
  }
  t.overflow = i % 100'000 == 99'999 ? 1 : 0;
  t.fallback = 0;
  t.compute_dtype = 1;
  t.call_index = static_cast<std::int32_t>(i / kOpNames);
  t.emulation_ns = 20'000;
  t.thread_id = static_cast<std::int32_t>(i % 2);
  a = {t.queued_ns - 2'000, t.queued_ns, n.apis[static_cast<std::size_t>(type)], t.connection_id, t.thread_id};
}

// Writes the synthetic trace of `tasks` kernel tasks to `path` through the real writer; without
// `with_host`, the tasks alone (no API calls, memory records or copies); `changed`: see fill_task.
inline void write_synthetic_trace(const std::string& path, std::int64_t tasks, bool with_host = true,
                                  bool changed = false) {
  auto w = collector::TraceWriter::create(path, {.overwrite = true, .durable = false});
  const Names n = intern_names(*w);
  add_device(*w);
  std::vector<TaskRow> t(kChunk);
  std::vector<collector::ApiRow> a(kChunk);
  std::vector<collector::ApiRow> syncs;
  std::vector<collector::MemoryRow> memory;
  std::vector<collector::MemcpyRow> copies;
  std::int64_t allocated = 0;
  for (std::int64_t base = 0; base < tasks; base += kChunk) {
    const std::int64_t count = std::min(kChunk, tasks - base);
    syncs.clear();
    memory.clear();
    copies.clear();
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t i = base + j;
      const auto k = static_cast<std::size_t>(j);
      fill_task(t[k], a[k], i, n, changed);
      if (i % 1000 == 999) syncs.push_back({t[k].queued_ns + 100, t[k].end_ns + 500, n.sync, 0, t[k].thread_id});
      if (i % 100 == 0) {
        const std::int64_t bytes = 1 << 20, address = 0x10000000 + (i % 4096) * bytes;
        allocated += bytes;
        memory.push_back({t[k].queued_ns - 3'000, 0, 0, address, bytes, allocated, 256LL << 20, t[k].thread_id});
        allocated -= bytes;
        memory.push_back({t[k].end_ns + 1'000, 0, 1, address, bytes, allocated, 256LL << 20, t[k].thread_id});
      }
      if (i % 500 == 250) {
        copies.push_back({0, t[k].queued_ns, t[k].queued_ns + 2'000, t[k].queued_ns - 500, 0, 0, 4096, 1, 0});
      }
    }
    w->add(std::span<const TaskRow>(t.data(), static_cast<std::size_t>(count)));
    if (!with_host) continue;
    w->add(std::span<const collector::ApiRow>(a.data(), static_cast<std::size_t>(count)));
    w->add(syncs);
    w->add(memory);
    w->add(copies);
  }
  w->finalize();
  // On disk before anything is timed, so that the kernel's write-back of the 1.4 GB does not land
  // in the figures.
  ::sync();
}

// The synthetic trace of `tasks` tasks, written on first use under the temporary directory and
// removed at exit, so that a bench's repetitions do not each spend a minute writing it.
inline const std::string& cached_synthetic_trace(std::int64_t tasks, bool with_host = true, bool changed = false) {
  struct Trace {
    std::string path;
    ~Trace() { std::filesystem::remove(path); }
  };
  static std::map<std::tuple<std::int64_t, bool, bool>, Trace> traces;
  Trace& t = traces[{tasks, with_host, changed}];
  if (t.path.empty()) {
    t.path = (std::filesystem::temp_directory_path() /
              ("npuscope_bench_trace_" + std::to_string(getpid()) + "_" + std::to_string(tasks) +
               (with_host ? "_host" : "") + (changed ? "_changed" : "") + ".db"))
                 .string();
    write_synthetic_trace(t.path, tasks, with_host, changed);
  }
  return t.path;
}

// The process's peak resident memory (MB), what the benches that read this trace report: the writer
// that made the trace keeps only a 16 MiB cache, so it is the reading's peak.
inline double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace npuscope::bench
