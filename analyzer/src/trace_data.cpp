#include "trace_data.h"

#include "cancel_check.h"
#include "launch_times.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/collector/fault_ahead.h"
#include "npuscope/collector/huge_pages.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <thread>
#include <utility>

namespace npuscope::analyzer {
namespace {

std::int8_t narrow_small(std::int32_t v) {
  return v >= std::numeric_limits<std::int8_t>::min() && v <= std::numeric_limits<std::int8_t>::max()
             ? static_cast<std::int8_t>(v)
             : std::int8_t{-1};
}

// A count from a trace (not negative unless the file was edited), saturated to 32 bits.
std::uint32_t saturate_u32(std::int64_t v) {
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(v, 0, std::numeric_limits<std::uint32_t>::max()));
}

std::size_t rows_hint(const collector::TraceReader& reader, const char* table) {
  return static_cast<std::size_t>(std::max<std::int64_t>(0, reader.count(table)));
}

// Runs `f` on a thread of its own; join() rethrows what it threw.
class Worker {
 public:
  template <class F>
  explicit Worker(F f)
      : thread_([this, f = std::move(f)] {
          try {
            f();
          } catch (...) {
            failed_ = std::current_exception();
          }
        }) {}
  ~Worker() {
    if (thread_.joinable()) thread_.join();
  }
  void join() {
    thread_.join();
    if (failed_) std::rethrow_exception(failed_);
  }

 private:
  std::exception_ptr failed_;
  std::thread thread_;
};

}  // namespace

// Note [Timestamp range] (time_math.h): a row outside the range is refused, naming the row.
void check_times(const collector::TraceReader& r, const char* table, const char* id_name, std::int64_t id,
                 std::initializer_list<std::pair<const char*, std::int64_t>> times) {
  for (const auto& [column, ns] : times) {
    if (collector::timestamp_in_range(ns)) [[likely]]
      continue;
    std::string what = r.path();
    what += ": ";
    what += table;
    if (id_name != nullptr) {
      what += " row (";
      what += id_name;
      what += ' ';
      what += std::to_string(id);
      what += ')';
    }
    what += ": ";
    what += column;
    what += " = ";
    what += std::to_string(ns);
    what +=
        " is outside [0, 4611686018427387904] ns (0 to 2^62, see docs/analyze.md \"Timestamp range\"); the trace is "
        "damaged or was "
        "not written by npuscope";
    throw collector::TraceError(what);
  }
}

TraceData::TraceData(const collector::TraceReader& r, const std::atomic<bool>* cancel) : reader(r) {
  source = r.meta(std::string(collector::kMetaSource)).value_or("");
  const LaunchTimes launch(r);  // Note [Launch time]: reads nothing for an emulated trace
  // Note [Compact rows]: the columns no finding reads are not even decoded.
  collector::ReaderOptions options{
      .verify = false,
      .skip_columns = {"TASK.call_index", "TASK.emulation_ns", "API.connection_id", "PYTORCH_API.thread_id",
                       "PYTORCH_API.sequence_number", "PYTORCH_API.fwd_thread_id", "PYTORCH_API.input_shapes_id",
                       "PYTORCH_API.input_dtypes_id"}};
  if (!launch.needed()) options.skip_columns.emplace_back("TASK.connection_id");
  const auto start_range = r.task_start_range();  // not a structured binding: clang 14 cannot capture one
  const std::int64_t first_start = start_range.first, last_start = start_range.second;
  // Rows are checked as they are read (check_times); these bounds must not overflow before that.
  if (last_start >= first_start)
    check_times(r, "TASK", nullptr, 0, {{"start_ns", first_start}, {"start_ns", last_start}});
  const std::int64_t after_last = collector::add_saturated(last_start, 1);
  const std::size_t task_rows = rows_hint(r, "TASK"), api_rows = rows_hint(r, "API");
  // `ahead` (optional): told how far `out` is filled (Note [Faulting in ahead of the reader]).
  const auto read_tasks = [&](std::int64_t a, std::int64_t b, std::vector<Task>& out, std::vector<Task>& comm,
                              collector::FaultAhead* ahead) {
    struct Finished {  // also when reading throws: the helper must not wait for more
      collector::FaultAhead* ahead;
      ~Finished() {
        if (ahead != nullptr) ahead->finished();
      }
    } finished{ahead};
    if (last_start < first_start) return;  // no tasks
    CancelCheck check(cancel);
    std::uint32_t rows = 0;
    collector::TraceReader::open(r.path(), options)
        ->for_each(
            [&](const collector::TaskRow& t) {
              check.row();
              if (ahead != nullptr && (++rows & 0xffff) == 0) ahead->progress(out.size() * sizeof(Task));
              check_times(r, "TASK", "task_id", t.task_id,
                          {{"start_ns", t.start_ns}, {"end_ns", t.end_ns}, {"queued_ns", t.queued_ns}});
              if (t.device_id < 0) return;  // the cpu golden backend
              const bool kernel = is_device_kernel(t.task_type);
              if (!kernel && !is(t.task_type, TaskType::kCommunication)) return;  // copies, events, link tasks
              const std::int64_t launched = launch.of(t);
              check_times(r, "TASK", "task_id", t.task_id, {{"launch", launched}});
              (kernel ? out : comm)
                  .push_back({t.task_id, t.start_ns, t.end_ns, launched, t.flops, t.bytes, t.pytorch_api_id,
                              collector::compact_string_id(t.name_id), collector::compact_string_id(t.op_type_id),
                              t.device_id, t.stream_id, t.block_dim, t.thread_id, saturate_u32(t.underflow),
                              saturate_u32(t.subnormal), narrow_small(t.task_type), narrow_small(t.overflow),
                              narrow_small(t.fallback), narrow_small(t.compute_dtype)});
            },
            {.starting = {{a, b}}});
  };
  // `ahead` (optional): the task reader's array, faulted in between rows and at the end.
  const auto read_rest = [&](collector::FaultAhead* ahead) {
    const auto own = collector::TraceReader::open(r.path(), options);
    collector::reserve_in_huge_pages(apis, api_rows);
    CancelCheck check(cancel);
    std::uint32_t rows = 0;
    own->for_each([&](const collector::ApiRow& a) {
      check.row();
      if (ahead != nullptr && (++rows & 0xffff) == 0) ahead->help();
      check_times(r, "API", "index", static_cast<std::int64_t>(apis.size()),
                  {{"start_ns", a.start_ns}, {"end_ns", a.end_ns}});
      const std::int32_t id = collector::compact_string_id(a.name_id);
      // A name always has one kind (the emulator declares it with the call): keep it per name, not per row.
      if (static_cast<std::size_t>(id) >= api_kinds.size())
        api_kinds.resize(static_cast<std::size_t>(id) + 1, ApiKind::kOther);
      if (!is(a.kind, ApiKind::kOther))
        api_kinds[static_cast<std::size_t>(id)] = enum_from_value<ApiKind>(a.kind).value_or(ApiKind::kOther);
      apis.push_back({a.start_ns, a.end_ns, id, a.thread_id});
    });
    memory = own->rows<collector::MemoryRow>();
    for (const MemoryRow& m : memory) check_times(r, "MEMORY", "seq", m.seq, {{"ts_ns", m.ts_ns}});
    for (const collector::MarkerRow& m : own->rows<collector::MarkerRow>()) {
      if (is(m.kind, MarkerKind::kStep)) steps.push_back(m);
    }
    own->for_each([&](const collector::PytorchApiRow& h) {
      check.row();
      host_op_index.emplace(h.id, host_ops.size());
      host_ops.push_back({h.id, h.parent_id, h.start_ns, h.end_ns, collector::compact_string_id(h.name_id),
                          collector::compact_string_id(h.module_id), narrow_small(h.kind), narrow_small(h.pass)});
    });
    memcpys = own->rows<collector::MemcpyRow>();
    for (const MemcpyRow& c : memcpys) {
      check_times(r, "MEMCPY", "task_id", c.task_id,
                  {{"start_ns", c.start_ns}, {"end_ns", c.end_ns}, {"queued_ns", c.queued_ns}});
    }
    if (ahead != nullptr) ahead->help_until_finished();
  };
  // Untouched capacity costs address space, not memory.
  collector::reserve_in_huge_pages(kernels, task_rows);
  for (DeviceInfoRow& d : r.rows<collector::DeviceInfoRow>()) devices.emplace(d.device_id, std::move(d));
  // Note [Reading in parallel]
  // Reading is most of an analysis: 10M tasks and 10M API calls take 2.7 s and 1.4 s of SQLite on
  // one core. With 2 or 3 hardware threads, TASK is read on this thread while a second reads the
  // rest (API calls, memory, framework ops): 10M tasks load in 3.3-3.9 s instead of 5.4 s on the
  // 2-vCPU machines CI runs on (bench/analyze_bench.cpp). Handing the second thread the end of
  // TASK's time range as well, to even the two out, measured no better: its rows must be copied
  // after the others. With 4 or more: TASK's two halves and the rest at once.
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores < 2) {
    read_tasks(first_start, after_last, kernels, collectives, nullptr);
    read_rest(nullptr);
    return;
  }
  if (cores < 4) {
    collector::FaultAhead ahead(kernels);
    Worker rest([&] { read_rest(&ahead); });
    read_tasks(first_start, after_last, kernels, collectives, &ahead);
    rest.join();
    return;
  }
  const std::int64_t middle = first_start / 2 + last_start / 2;
  std::vector<Task> later, later_collectives;
  Worker second_half([&] {
    collector::reserve_in_huge_pages(later, task_rows / 2);
    read_tasks(middle, after_last, later, later_collectives, nullptr);
  });
  Worker rest([&] { read_rest(nullptr); });
  read_tasks(first_start, middle, kernels, collectives, nullptr);
  second_half.join();
  kernels.insert(kernels.end(), later.begin(), later.end());
  collectives.insert(collectives.end(), later_collectives.begin(), later_collectives.end());
  later = {};
  rest.join();
}

}  // namespace npuscope::analyzer
