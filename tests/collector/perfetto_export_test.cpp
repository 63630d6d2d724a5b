// `npuscope export --perfetto` (export_perfetto.h): the sample trace's export read back as Perfetto's
// trace processor reads it (collector/perfetto_decode.h), flows joined by id. Checked
// against the trace store: every task, copy, API call, marker and PyTorch op a slice of its own
// track, at its exact times, with its arguments; flows from each launching API call; the memory
// counters; overlapping rows on lanes of their own; the wire rules Perfetto's decoder needs.
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
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> memory;
  for (const auto& [uuid, values] : d.counters) {
    EXPECT_TRUE(d.track(uuid).counter);
    EXPECT_EQ(d.track(uuid).unit, 3);  // UNIT_SIZE_BYTES
    memory[d.track(uuid).name] = values;
  }
  using Values = std::vector<std::pair<std::int64_t, std::int64_t>>;
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
