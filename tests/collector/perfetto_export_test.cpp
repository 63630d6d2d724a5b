// `npuscope export --perfetto` (export_perfetto.h): the sample trace's export read back as Perfetto's
// trace processor reads it (collector/perfetto_decode.h), flows joined by id. Checked
// against the trace store: every task, copy, API call, marker and PyTorch op a slice of its own
// track, at its exact times, with its arguments; flows from each launching API call; the memory
// counters; overlapping rows on lanes of their own; the wire rules Perfetto's decoder needs. And what
// only some traces have: flows from PyTorch ops to their tasks, a real profile's counters and
// hardware metrics, collectives per communicator, compare verdicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collector/export_test_util.h"
#include "collector/perfetto_decode.h"
#include "npuscope/collector/export_perfetto.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

using namespace npuscope::collector::testing::perfetto;

class PerfettoExportTest : public ExportTest {
 protected:
  Decoded export_sample(PerfettoExportResult* result = nullptr) {
    write_sample_trace(path("t.db"));
    return export_file(path("t.db"), result);
  }
  Decoded export_file(const std::string& db, PerfettoExportResult* result = nullptr) {
    const auto reader = TraceReader::open(db);
    const PerfettoExportResult r = export_perfetto_trace(*reader, path("t.pftrace"));
    if (result != nullptr) *result = r;
    Decoded d = decode(path("t.pftrace"));
    EXPECT_EQ(d.problems, std::vector<std::string>{});
    EXPECT_EQ(r.packets, d.trace.packet_size());
    EXPECT_EQ(r.bytes, static_cast<std::int64_t>(std::filesystem::file_size(path("t.pftrace"))));
    return d;
  }
};

}  // namespace

TEST_F(PerfettoExportTest, EveryRowIsASliceOfItsOwnTrack) {
  PerfettoExportResult r;
  const Decoded d = export_sample(&r);
  EXPECT_EQ(r.tasks, 4);
  EXPECT_EQ(r.memcpys, 1);
  EXPECT_EQ(r.apis, 6);
  EXPECT_EQ(r.markers, 3);
  EXPECT_EQ(r.memory_records, 2);
  EXPECT_EQ(r.overflow_tasks, 1);
  EXPECT_EQ(r.extra_lanes, 0);
  EXPECT_EQ(r.negative_times, 0);
  EXPECT_EQ(d.with_category("task").size(), 4u);
  EXPECT_EQ(d.with_category("memcpy").size(), 1u);
  EXPECT_EQ(d.with_category("api").size(), 6u);
  EXPECT_EQ(d.with_category("overflow").size(), 1u);
  // The tasks at their exact times, on their stream (or, golden, host thread) under their device.
  const auto reader = TraceReader::open(path("t.db"));
  for (const TaskRow& t : reader->rows<TaskRow>()) {
    const Slice* s = d.find("task", "task_id", std::to_string(t.task_id));
    ASSERT_NE(s, nullptr) << "task " << t.task_id;
    EXPECT_EQ(s->ts, t.start_ns);
    EXPECT_EQ(s->dur, t.end_ns - t.start_ns);
    EXPECT_EQ(s->depth, 0);
    EXPECT_EQ(s->name, reader->string(t.name_id));
    EXPECT_EQ(d.path(s->track), t.device_id >= 0
                                    ? "npu:" + std::to_string(t.device_id) + "/stream " + std::to_string(t.stream_id)
                                    : "cpu golden/thread " + std::to_string(t.thread_id));
  }
  const Slice* copy = d.find("memcpy", "task_id", "1");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->name, "Memcpy HtoD");
  EXPECT_EQ(copy->ts, 2500);
  EXPECT_EQ(copy->dur, 1500);
  EXPECT_EQ(d.path(copy->track), "npu:0/stream 0 copies");
  for (const ApiRow& a : reader->rows<ApiRow>()) {
    const Slice* s = d.find("api", "connection_id", std::to_string(a.connection_id));
    ASSERT_NE(s, nullptr) << "API call " << a.connection_id;
    EXPECT_EQ(s->ts, a.start_ns);
    EXPECT_EQ(s->dur, a.end_ns - a.start_ns);
    EXPECT_EQ(d.path(s->track),
              "host/thread " + std::to_string(a.thread_id) + "/thread " + std::to_string(a.thread_id) + " API");
    EXPECT_EQ(s->args.at("level"), "acl");
  }
}

TEST_F(PerfettoExportTest, TasksCarryTheirArguments) {
  const Decoded d = export_sample();
  const Slice* add = d.find("task", "task_id", "3");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name, "layer0/add,\"x\"");
  EXPECT_EQ(add->args.at("op_type"), "Add");
  EXPECT_EQ(add->args.at("task_type"), "AI_VECTOR_CORE");
  EXPECT_EQ(add->args.at("block_dim"), "8");
  EXPECT_EQ(add->args.at("flops"), "4");
  EXPECT_EQ(add->args.at("bytes"), "24");
  EXPECT_EQ(add->args.at("overflow"), "1");
  EXPECT_EQ(add->args.at("stream_id"), "1");
  // The overflow instant nests inside the task it marks.
  const auto overflow = d.with_category("overflow");
  ASSERT_EQ(overflow.size(), 1u);
  EXPECT_EQ(overflow[0]->track, add->track);
  EXPECT_EQ(overflow[0]->ts, add->ts);
  EXPECT_EQ(overflow[0]->depth, 1);
  EXPECT_EQ(overflow[0]->args.at("op"), add->name);
}

TEST_F(PerfettoExportTest, FlowsJoinEachLaunchToItsWork) {
  PerfettoExportResult r;
  const Decoded d = export_sample(&r);
  // Calls 1 (the copy), 2, 3, 5, 6 launched work; 4 (a synchronization) did not.
  EXPECT_EQ(r.flows, 5);
  std::map<std::uint64_t, std::vector<const Slice*>> by_flow;
  for (const Slice& s : d.slices)
    for (const std::uint64_t id : s.flows) by_flow[id].push_back(&s);
  EXPECT_EQ(by_flow.size(), 5u);
  for (const auto& [id, ends] : by_flow) {
    ASSERT_EQ(ends.size(), 2u) << "flow " << id;
    std::set<std::string> categories{ends[0]->category, ends[1]->category};
    EXPECT_TRUE(categories.contains("api")) << "flow " << id;
    EXPECT_TRUE(categories.contains("task") || categories.contains("memcpy")) << "flow " << id;
    for (const Slice* s : ends) EXPECT_EQ(s->args.at("connection_id"), std::to_string(id));
  }
  EXPECT_FALSE(by_flow.contains(4));
}

TEST_F(PerfettoExportTest, TracksAreNamedAndOrdered) {
  const Decoded d = export_sample();
  std::set<std::string> paths;
  for (const auto& [uuid, t] : d.tracks)
    if (uuid != 0) paths.insert(d.path(uuid));
  const std::set<std::string> expected = {"npu:0",
                                          "npu:0/stream 0",
                                          "npu:0/stream 1",
                                          "npu:0/stream 0 copies",
                                          "npu:0/memory allocated",
                                          "npu:0/memory reserved",
                                          "cpu golden",
                                          "cpu golden/thread 1",
                                          "host",
                                          "host/thread 0",
                                          "host/thread 0/thread 0 API",
                                          "host/thread 0/thread 0 markers",
                                          "host/thread 1",
                                          "host/thread 1/thread 1 API"};
  EXPECT_EQ(paths, expected);
  // The device's spec is its process's label; threads have unique tids.
  bool labelled = false;
  std::set<std::int64_t> tids;
  for (const pb::TracePacket& p : d.trace.packet()) {
    if (!p.has_track_descriptor()) continue;
    const auto& t = p.track_descriptor();
    if (t.has_process() && t.process().process_name() == "npu:0")
      labelled = t.process().process_labels_size() == 1 && t.process().process_labels(0) == "ascend910b";
    if (t.has_thread()) {
      EXPECT_TRUE(tids.insert(t.thread().tid()).second);
    }
  }
  EXPECT_TRUE(labelled);
}

TEST_F(PerfettoExportTest, MarkersNestAndMemoryIsTwoCounters) {
  const Decoded d = export_sample();
  const auto steps = d.with_category("step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]->name, "step 0");
  EXPECT_EQ(steps[0]->dur, 9000);
  EXPECT_EQ(steps[0]->args.at("step"), "0");
  std::map<std::string, int> depth;
  for (const Slice* m : d.with_category("marker")) depth[m->name] = m->depth;
  EXPECT_EQ(depth, (std::map<std::string, int>{{"forward", 1}, {"checkpoint", 2}}));
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> memory;
  for (const auto& [uuid, values] : d.counters) {
    EXPECT_TRUE(d.track(uuid).counter);
    EXPECT_EQ(d.track(uuid).unit, 3);  // UNIT_SIZE_BYTES
    memory[d.track(uuid).name] = values;
  }
  using Values = std::vector<std::pair<std::int64_t, double>>;
  EXPECT_EQ(memory["memory allocated"], (Values{{1500, 4096}, {9700, 0}}));
  EXPECT_EQ(memory["memory reserved"], (Values{{1500, 2 << 20}, {9700, 2 << 20}}));
}

TEST_F(PerfettoExportTest, PytorchOpsNestOnTheirThread) {
  {
    auto w = TraceWriter::create(path("torch.db"));
    PytorchApiRow step{.id = 2, .start_ns = 100, .end_ns = 900, .thread_id = 3, .name_id = w->intern("Module.fc")};
    step.kind = static_cast<std::int32_t>(HostOpKind::kModule);
    PytorchApiRow mm{.id = 1, .start_ns = 100, .end_ns = 400, .thread_id = 3, .name_id = w->intern("aten::mm")};
    mm.input_shapes_id = w->intern("[[8, 4], [4, 2]]");
    PytorchApiRow add{.id = 3, .start_ns = 400, .end_ns = 900, .thread_id = 3, .name_id = w->intern("aten::add")};
    // The child first, by id and in the file: Note [Rows that start together].
    const PytorchApiRow ops[] = {mm, step, add};
    w->add(ops);
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("torch.db"), &r);
  EXPECT_EQ(r.pytorch_ops, 3);
  EXPECT_EQ(r.extra_lanes, 0);
  std::map<std::string, std::pair<int, std::int64_t>> seen;  // name -> depth, dur
  for (const Slice& s : d.slices) {
    seen[s.name] = {s.depth, s.dur};
    EXPECT_EQ(d.path(s.track), "host/thread 3");
  }
  EXPECT_EQ(seen["Module.fc"], (std::pair<int, std::int64_t>{0, 800}));
  EXPECT_EQ(seen["aten::mm"], (std::pair<int, std::int64_t>{1, 300}));
  EXPECT_EQ(seen["aten::add"], (std::pair<int, std::int64_t>{1, 500}));  // begins as mm ends: its sibling
  const Slice* mm = d.find("cpu_op", "id", "1");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->args.at("input_shapes"), "[[8, 4], [4, 2]]");
}

// Rows that overlap without nesting (a real profile's, Ascend issue 133) go to lanes of their own;
// nothing is mis-nested, and rows before time 0 are counted, not written.
TEST_F(PerfettoExportTest, OverlappingRowsGetLanesNegativeTimesAreCounted) {
  {
    auto w = TraceWriter::create(path("overlap.db"));
    const StringId op = w->intern("Cast");
    std::vector<TaskRow> tasks;
    for (const auto& [id, start, end] : std::vector<std::tuple<int, int, int>>{
             {1, -50, 10}, {2, 0, 100}, {3, 50, 150}, {4, 60, 90}, {5, 70, 160}, {6, 100, 120}}) {
      TaskRow t = sample_task(id, 0, 2, start, start, end, 0);
      t.name_id = op;
      tasks.push_back(t);
    }
    w->add(tasks);
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("overlap.db"), &r);
  EXPECT_EQ(r.tasks, 5);
  EXPECT_EQ(r.negative_times, 1);
  EXPECT_EQ(r.extra_lanes, 2);  // 3 overlaps 2; 5 overlaps 2 and 3
  std::map<std::string, std::string> lane_of;
  for (const Slice& s : d.slices) {
    lane_of[s.args.at("task_id")] = d.path(s.track);
    const std::int64_t start[] = {0, -50, 0, 50, 60, 70, 100}, end[] = {0, 10, 100, 150, 90, 160, 120};
    const int id = std::stoi(s.args.at("task_id"));
    EXPECT_EQ(s.ts, start[id]) << "task " << id;
    EXPECT_EQ(s.dur, end[id] - start[id]) << "task " << id;
  }
  EXPECT_EQ(lane_of, (std::map<std::string, std::string>{{"2", "npu:0/stream 2"},
                                                         {"3", "npu:0/stream 2 (2)"},
                                                         {"4", "npu:0/stream 2"},
                                                         {"5", "npu:0/stream 2 (3)"},
                                                         {"6", "npu:0/stream 2"}}));
}

TEST_F(PerfettoExportTest, UnwritableOutputIsAnExportErrorAndLeavesOldFile) {
  write_sample_trace(path("t.db"));
  const auto reader = TraceReader::open(path("t.db"));
  EXPECT_THROW(export_perfetto_trace(*reader, path("no-such-dir/t.pftrace")), ExportError);
  std::ofstream(path("old.pftrace")) << "old";
  std::filesystem::create_directory(path("old.pftrace.partial"));  // the partial file cannot be made
  EXPECT_THROW(export_perfetto_trace(*reader, path("old.pftrace")), ExportError);
  EXPECT_EQ(read_text(path("old.pftrace")), "old");
}

TEST_F(PerfettoExportTest, LargeTraceStreamsInBoundedMemory) {
  constexpr std::int64_t kTasks = 100'000;
  write_launch_trace(path("big.db"), kTasks);
  const auto reader = TraceReader::open(path("big.db"));
  const bool can_measure = static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5");
  const std::int64_t rss_before = proc_status_kib("VmRSS");
  const PerfettoExportResult r = export_perfetto_trace(*reader, path("big.pftrace"));
  const std::int64_t peak = proc_status_kib("VmHWM");
  EXPECT_EQ(r.tasks, kTasks);
  EXPECT_EQ(r.flows, kTasks);
  EXPECT_EQ(r.extra_lanes, 0);
  EXPECT_GT(r.bytes, 16 << 20);  // more than the memory bound below
  if (can_measure && !under_asan() && rss_before > 0 && peak > 0) {
    EXPECT_LT(peak - rss_before, 12 * 1024)
        << "the export grew the process by " << (peak - rss_before) / 1024 << " MiB: it does not stream";
  }
}

// Note [Flows from PyTorch ops]: each op points at every task it launched, each by an id of its own.
TEST_F(PerfettoExportTest, EachPytorchOpFlowsToEveryTaskItLaunched) {
  {
    auto w = TraceWriter::create(path("ops.db"));
    std::vector<PytorchApiRow> ops;
    std::vector<TaskRow> tasks;
    for (std::int64_t op = 1; op <= 3; ++op) {
      ops.push_back({.id = op,
                     .start_ns = op * 1000,
                     .end_ns = op * 1000 + 500,
                     .thread_id = 0,
                     .name_id = w->intern("aten::op" + std::to_string(op))});
      for (std::int64_t k = 0; k < op; ++k) {  // op N launched N tasks, on two streams
        const std::int64_t id = op * 10 + k;
        TaskRow t = sample_task(id, 0, static_cast<std::int32_t>(k % 2), op * 1000 + 100, op * 1000 + 200 + k * 300,
                                op * 1000 + 400 + k * 300, 0);
        t.pytorch_api_id = op;
        tasks.push_back(t);
      }
    }
    TaskRow orphan = sample_task(99, 0, 0, 9000, 9000, 9100, 0);
    tasks.push_back(orphan);
    // Two steps: op 2's second task is launched in step 0 and runs in step 1's time.
    w->add(std::vector<MarkerRow>{{0, 2500, 0, 0, static_cast<std::int32_t>(MarkerKind::kStep), 0},
                                  {2500, 5000, 0, 0, static_cast<std::int32_t>(MarkerKind::kStep), 1}});
    w->add(ops);
    w->add(tasks);
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("ops.db"), &r);
  EXPECT_EQ(r.op_flows, 6);
  EXPECT_EQ(r.unlinked_op_tasks, 0);
  std::map<std::uint64_t, std::vector<const Slice*>> by_flow;
  for (const Slice& s : d.slices)
    for (const std::uint64_t id : s.flows) by_flow[id].push_back(&s);
  ASSERT_EQ(by_flow.size(), 6u);
  std::map<std::string, std::set<std::string>> launched;  // op id -> task ids
  for (const auto& [id, ends] : by_flow) {
    ASSERT_EQ(ends.size(), 2u) << "flow " << id;
    const Slice* op = ends[0]->category == "cpu_op" ? ends[0] : ends[1];
    const Slice* task = ends[0]->category == "task" ? ends[0] : ends[1];
    ASSERT_EQ(op->category, "cpu_op");
    ASSERT_EQ(task->category, "task");
    EXPECT_LT(op->ts, task->ts) << "the op comes first: the flow points from it";
    EXPECT_EQ(task->args.at("pytorch_op_id"), op->args.at("id"));
    launched[op->args.at("id")].insert(task->args.at("task_id"));
  }
  EXPECT_EQ(launched, (std::map<std::string, std::set<std::string>>{
                          {"1", {"10"}}, {"2", {"20", "21"}}, {"3", {"30", "31", "32"}}}));
  const Slice* orphan = d.find("task", "task_id", "99");
  ASSERT_NE(orphan, nullptr);
  EXPECT_TRUE(orphan->flows.empty());
  // Each task and op is in the step it was launched in; the orphan, after the steps, in none.
  EXPECT_EQ(d.find("task", "task_id", "21")->ts, 2500);
  EXPECT_EQ(d.find("task", "task_id", "21")->args.at("step"), "0");
  EXPECT_EQ(d.find("task", "task_id", "30")->args.at("step"), "1");
  EXPECT_EQ(d.find("cpu_op", "id", "2")->args.at("step"), "0");
  EXPECT_EQ(d.find("cpu_op", "id", "3")->args.at("step"), "1");
  EXPECT_FALSE(orphan->args.contains("step"));
}

// A real profile's counters become counter tracks of their device (or of the host, for one of no
// device), its per-task hardware metrics and a compare's verdicts arguments of the tasks.
TEST_F(PerfettoExportTest, CountersHardwareMetricsAndVerdicts) {
  {
    auto w = TraceWriter::create(path("real.db"));
    const StringId freq = w->intern("AI Core Freq (MHz)"), cpu = w->intern("host CPU (%)");
    const StringId mac = w->intern("aic_mac_ratio"), cycles = w->intern("aic_total_cycles");
    std::vector<TaskRow> tasks;
    for (std::int64_t id = 1; id <= 3; ++id)
      tasks.push_back(sample_task(id, 0, 0, id * 100, id * 100, id * 100 + 50, 0));
    w->add(tasks);
    w->add(std::vector<CounterRow>{{.ts_ns = 10, .device_id = 0, .name_id = freq, .value = 1800},
                                   {.ts_ns = 20, .device_id = 0, .name_id = freq, .value = 1650.5},
                                   {.ts_ns = 15, .device_id = -1, .name_id = cpu, .value = 37.25}});
    w->add(std::vector<TaskPmuRow>{{.task_id = 1, .name_id = mac, .value = 0.8125},
                                   {.task_id = 1, .name_id = cycles, .value = 123456},
                                   {.task_id = 3, .name_id = mac, .value = 0.1}});
    CompareResultRow out{.task_id = 2,
                         .role = static_cast<std::int32_t>(TensorRole::kOutput),
                         .verdict = 1,
                         .origin = 1,
                         .cosine = 0.5,
                         .max_abs_err = 2.5,
                         .max_rel_err = 0.75};
    out.reason_id = w->intern("Cosine 0.5 < 0.9");
    CompareResultRow out2 = out;
    out2.idx = 1;
    out2.verdict = 0;
    out2.cosine = 0.999;
    out2.max_abs_err = 3.5;
    CompareResultRow input = out;
    input.role = static_cast<std::int32_t>(TensorRole::kInput);
    input.cosine = 0.1;  // inputs do not decide
    CompareResultRow passed{.task_id = 3,
                            .role = static_cast<std::int32_t>(TensorRole::kOutput),
                            .verdict = 0,
                            .cosine = 1,
                            .max_abs_err = 0,
                            .max_rel_err = 0};
    w->add(std::vector<CompareResultRow>{input, out, out2, passed});
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("real.db"), &r);
  EXPECT_EQ(r.counter_values, 3);
  EXPECT_EQ(r.pmu_values, 3);
  EXPECT_EQ(r.compared_tasks, 2);
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> counters;
  for (const auto& [uuid, values] : d.counters) {
    EXPECT_EQ(d.track(uuid).unit, 0);
    counters[d.path(uuid)] = values;
  }
  using Values = std::vector<std::pair<std::int64_t, double>>;
  EXPECT_EQ(counters,
            (std::map<std::string, Values>{{"npu:0/profile counters/AI Core Freq (MHz)", {{10, 1800}, {20, 1650.5}}},
                                           {"host/profile counters/host CPU (%)", {{15, 37.25}}}}));
  const Slice* t1 = d.find("task", "task_id", "1");
  const Slice* t2 = d.find("task", "task_id", "2");
  const Slice* t3 = d.find("task", "task_id", "3");
  ASSERT_TRUE(t1 && t2 && t3);
  EXPECT_EQ(t1->args.at("pmu.aic_mac_ratio"), "0.8125");
  EXPECT_EQ(t1->args.at("pmu.aic_total_cycles"), "123456");
  EXPECT_FALSE(t1->args.contains("compare.verdict"));
  EXPECT_FALSE(t2->args.contains("pmu.aic_mac_ratio"));
  EXPECT_EQ(t3->args.at("pmu.aic_mac_ratio"), format_double(0.1));
  EXPECT_EQ(t2->args.at("compare.verdict"), "fail");
  EXPECT_EQ(t2->args.at("compare.origin"), "introduced");
  EXPECT_EQ(t2->args.at("compare.reason"), "Cosine 0.5 < 0.9");
  EXPECT_EQ(t2->args.at("compare.cosine"), "0.5");  // the worst output's, not the input's
  EXPECT_EQ(t2->args.at("compare.max_abs_err"), "3.5");
  EXPECT_EQ(t2->args.at("compare.max_rel_err"), "0.75");
  EXPECT_EQ(t3->args.at("compare.verdict"), "pass");
  EXPECT_FALSE(t3->args.contains("compare.origin"));
}

// Per-task rows are read a window of task ids at a time (Note [Task rows by window]): ids out of
// start order and spread over several windows still find their own rows.
TEST_F(PerfettoExportTest, HardwareMetricsOfManyTasksOutOfIdOrder) {
  constexpr std::int64_t kTasks = 40'000;
  {
    auto w = TraceWriter::create(path("pmu.db"));
    const StringId mac = w->intern("aic_mac_ratio");
    std::vector<TaskRow> tasks;
    std::vector<TaskPmuRow> pmu;
    for (std::int64_t i = 0; i < kTasks; ++i) {
      // Ids run backwards within each block of 1000 starts, and every 7th task has none.
      const std::int64_t id = (i / 1000) * 1000 + (999 - i % 1000) + 1;
      tasks.push_back(sample_task(id, 0, static_cast<std::int32_t>(i % 3), i * 100, i * 100, i * 100 + 50, 0));
      if (id % 7 != 0) pmu.push_back({.task_id = id, .name_id = mac, .value = static_cast<double>(id) / 4});
    }
    std::sort(pmu.begin(), pmu.end(), [](const TaskPmuRow& a, const TaskPmuRow& b) { return a.task_id < b.task_id; });
    w->add(tasks);
    w->add(pmu);
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("pmu.db"), &r);
  EXPECT_EQ(r.tasks, kTasks);
  std::int64_t with_metric = 0;
  for (const Slice* s : d.with_category("task")) {
    const std::int64_t id = std::stoll(s->args.at("task_id"));
    const auto it = s->args.find("pmu.aic_mac_ratio");
    if (id % 7 == 0) {
      EXPECT_EQ(it, s->args.end()) << "task " << id;
      continue;
    }
    ASSERT_NE(it, s->args.end()) << "task " << id;
    EXPECT_EQ(it->second, format_double(static_cast<double>(id) / 4));
    ++with_metric;
  }
  EXPECT_EQ(with_metric, r.pmu_values);
  EXPECT_EQ(with_metric, kTasks - kTasks / 7);
}

// Each communicator is a track of the device its collectives ran on, after the streams.
TEST_F(PerfettoExportTest, CollectivesOnATrackPerCommunicator) {
  {
    auto w = TraceWriter::create(path("comm.db"));
    std::vector<TaskRow> tasks{sample_task(1, 1, 4, 100, 100, 400, 0), sample_task(2, 1, 4, 500, 500, 900, 0),
                               sample_task(3, 1, 5, 600, 600, 700, 0)};
    w->add(tasks);
    w->add(std::vector<CommunicatorRow>{
        {.communicator_id = 1, .name_id = w->intern("hccl_world_group"), .rank = 2, .size = 8},
        {.communicator_id = 2, .name_id = 0, .rank = 0, .size = 2}});
    const auto kind = [](npuscope::CollectiveKind k) { return static_cast<std::int32_t>(k); };
    w->add(std::vector<CommunicationRow>{{.task_id = 1,
                                          .communicator_id = 1,
                                          .sequence = 0,
                                          .kind = kind(npuscope::CollectiveKind::kAllReduce),
                                          .bytes = 4096,
                                          .arrival_ns = 50,
                                          .start_ns = 100,
                                          .end_ns = 400},
                                         {.task_id = 2,
                                          .communicator_id = 1,
                                          .sequence = 1,
                                          .kind = kind(npuscope::CollectiveKind::kAllGather),
                                          .bytes = 64,
                                          .arrival_ns = 500,
                                          .start_ns = 500,
                                          .end_ns = 900},
                                         {.task_id = 3,
                                          .communicator_id = 2,
                                          .sequence = 0,
                                          .kind = kind(npuscope::CollectiveKind::kSend),
                                          .bytes = 8,
                                          .root_or_peer = 5,
                                          .start_ns = 600,
                                          .end_ns = 700}});
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("comm.db"), &r);
  EXPECT_EQ(r.communications, 3);
  const auto collectives = d.with_category("communication");
  ASSERT_EQ(collectives.size(), 3u);
  std::map<std::string, std::string> track_of;
  for (const Slice* s : collectives) track_of[s->name + " " + s->args.at("sequence")] = d.path(s->track);
  EXPECT_EQ(track_of, (std::map<std::string, std::string>{{"allreduce 0", "npu:1/hccl_world_group (rank 2 of 8)"},
                                                          {"allgather 1", "npu:1/hccl_world_group (rank 2 of 8)"},
                                                          {"send 0", "npu:1/communicator 2 (rank 0 of 2)"}}));
  const Slice* allreduce = d.find("communication", "task_id", "1");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->ts, 100);
  EXPECT_EQ(allreduce->dur, 300);
  EXPECT_EQ(allreduce->args.at("communicator"), "hccl_world_group");
  EXPECT_EQ(allreduce->args.at("bytes"), "4096");
  EXPECT_EQ(allreduce->args.at("wait_ns"), "50");
  EXPECT_FALSE(allreduce->args.contains("root_or_peer"));
  EXPECT_EQ(d.find("communication", "task_id", "3")->args.at("root_or_peer"), "5");
}

// What a broken or foreign trace may hold is counted, never drawn wrong: op ids no flow can carry,
// counters before time 0, a collective whose task and communicator are not in the trace.
TEST_F(PerfettoExportTest, OddRowsAreCountedNotMisdrawn) {
  {
    auto w = TraceWriter::create(path("odd.db"));
    TaskRow negative_op = sample_task(1, 0, 0, 100, 100, 200, 0), huge_op = sample_task(2, 0, 0, 300, 300, 400, 0);
    negative_op.pytorch_api_id = -5;
    huge_op.pytorch_api_id = std::int64_t{1} << 50;
    w->add(std::vector<TaskRow>{negative_op, huge_op});
    w->add(std::vector<CounterRow>{{.ts_ns = -10, .device_id = 0, .name_id = w->intern("freq"), .value = 1}});
    w->add(
        std::vector<CommunicationRow>{{.task_id = 77, .communicator_id = 9, .kind = 99, .start_ns = 10, .end_ns = 5}});
    w->finalize();
  }
  PerfettoExportResult r;
  const Decoded d = export_file(path("odd.db"), &r);
  EXPECT_EQ(r.tasks, 2);
  EXPECT_EQ(r.op_flows, 0);
  EXPECT_EQ(r.unlinked_op_tasks, 2);
  EXPECT_EQ(r.negative_times, 1);
  EXPECT_EQ(r.counter_values, 0);
  for (const Slice& s : d.slices) EXPECT_TRUE(s.flows.empty()) << s.name;
  const auto collectives = d.with_category("communication");
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(collectives[0]->name, "collective99");
  EXPECT_EQ(collectives[0]->dur, 0);  // it ended before it started
  EXPECT_EQ(d.path(collectives[0]->track), "npu:0/communicator 9");
}
