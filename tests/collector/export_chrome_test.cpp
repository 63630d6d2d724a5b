// Chrome trace JSON export: what Perfetto / chrome://tracing read, parsed back with nlohmann.
#include "npuscope/collector/export_chrome.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "collector/export_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using nlohmann::json;

namespace {

class ChromeExportTest : public ExportTest {
 protected:
  // Exports the sample trace and parses the result.
  json export_sample(ChromeExportResult* result = nullptr, bool finalize = true) {
    write_sample_trace(path("t.db"), false, finalize);
    const auto reader = TraceReader::open(path("t.db"));
    const ChromeExportResult r = export_chrome_trace(*reader, path("t.json"));
    if (result != nullptr) *result = r;
    return json::parse(read_text(path("t.json")));
  }
};

std::map<std::string, int> count_by_phase(const json& events) {
  std::map<std::string, int> n;
  for (const auto& e : events) ++n[e.at("ph").get<std::string>()];
  return n;
}

// The one event of phase `ph` whose name (and, if given, args.task_id) match.
const json& find_event(const json& events, const std::string& ph, const std::string& name, std::int64_t task_id = -1) {
  static const json kNone;
  for (const auto& e : events) {
    if (e.at("ph") != ph || e.value("name", "") != name) continue;
    if (task_id >= 0 && (!e.contains("args") || e["args"].value("task_id", -1) != task_id)) continue;
    return e;
  }
  ADD_FAILURE() << "no " << ph << " event named " << name;
  return kNone;
}

}  // namespace

TEST_F(ChromeExportTest, EventCountsPerPhaseAndResult) {
  ChromeExportResult r;
  const json doc = export_sample(&r);
  ASSERT_TRUE(doc.at("traceEvents").is_array());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  EXPECT_EQ(doc.at("otherData").at("status"), "complete");
  const json& events = doc["traceEvents"];
  // X: 6 API calls, 2 ranges (step, forward), 4 tasks, 1 memcpy. i: checkpoint, overflow.
  // s/f: one per task and memcpy (the synchronize launched nothing). C: 2 memory rows x 2 counters.
  // M: 3 processes x (name, sort) + npu:0's label, 5 threads x (name, sort).
  const std::map<std::string, int> expected = {{"X", 13}, {"i", 2}, {"s", 5}, {"f", 5}, {"C", 4}, {"M", 17}};
  EXPECT_EQ(count_by_phase(events), expected);
  EXPECT_EQ(r.events, static_cast<std::int64_t>(events.size()));
  EXPECT_EQ(r.tasks, 4);
  EXPECT_EQ(r.apis, 6);
  EXPECT_EQ(r.memcpys, 1);
  EXPECT_EQ(r.markers, 3);
  EXPECT_EQ(r.memory_records, 2);
  EXPECT_EQ(r.flows, 5);
  EXPECT_EQ(r.overflow_tasks, 1);
  EXPECT_EQ(r.bytes, static_cast<std::int64_t>(std::filesystem::file_size(path("t.json"))));
  EXPECT_FALSE(std::filesystem::exists(path("t.json.partial")));
}

TEST_F(ChromeExportTest, TaskSlicesCarryTheirArgsAndExactTimestamps) {
  const json doc = export_sample();
  const json& events = doc["traceEvents"];
  const json& mm = find_event(events, "X", "layer0/attn/MatMul", 2);
  EXPECT_EQ(mm["cat"], "task");
  EXPECT_EQ(mm["pid"], 3);          // npu:0
  EXPECT_EQ(mm["tid"], 3'000'000);  // stream 0
  EXPECT_DOUBLE_EQ(mm["ts"].get<double>(), 7.001);
  EXPECT_DOUBLE_EQ(mm["dur"].get<double>(), 2.499);
  const json& a = mm["args"];
  EXPECT_EQ(a["op_type"], "MatMul");
  EXPECT_EQ(a["task_type"], "AI_CORE");
  EXPECT_EQ(a["block_dim"], 24);
  EXPECT_EQ(a["flops"], 24);
  EXPECT_EQ(a["bytes"], 40);
  EXPECT_EQ(a["overflow"], 0);
  EXPECT_EQ(a["connection_id"], 2);
  EXPECT_EQ(a["call_index"], 0);
  EXPECT_FALSE(mm.contains("cname"));
  // Three decimals, always: nanoseconds survive any JSON reader.
  EXPECT_NE(read_text(path("t.json")).find("\"ts\":7.001,\"dur\":2.499"), std::string::npos);

  const json& second = find_event(events, "X", "layer0/attn/MatMul", 5);
  EXPECT_EQ(second["args"]["call_index"], 1);
  EXPECT_DOUBLE_EQ(second["dur"].get<double>(), 1.001);

  // The golden kernel ran inline on host thread 1: the cpu golden process, lane of thread 1.
  const json& golden = find_event(events, "X", "layer0/attn/MatMul", 4);
  EXPECT_EQ(golden["pid"], 2);
  EXPECT_EQ(golden["tid"], 2'000'001);
  EXPECT_EQ(golden["args"]["task_type"], "HOST_CPU");

  const json& add = find_event(events, "X", "layer0/add,\"x\"", 3);
  EXPECT_EQ(add["cname"], "terrible");
  EXPECT_EQ(add["tid"], 3'000'001);
  EXPECT_EQ(add["args"]["overflow"], 1);
  const json& overflow = find_event(events, "i", "overflow");
  EXPECT_EQ(overflow["tid"], 3'000'001);
  EXPECT_DOUBLE_EQ(overflow["ts"].get<double>(), 8.0);
  EXPECT_EQ(overflow["args"]["op"], "layer0/add,\"x\"");

  const json& copy = find_event(events, "X", "Memcpy HtoD");
  EXPECT_EQ(copy["tid"], 3'000'000);
  EXPECT_DOUBLE_EQ(copy["ts"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(copy["dur"].get<double>(), 1.5);
  EXPECT_EQ(copy["args"]["bytes"], 4096);
}

TEST_F(ChromeExportTest, FlowsPairUpFromApiCallToTask) {
  const json doc = export_sample();
  const json& events = doc["traceEvents"];
  std::map<std::int64_t, std::vector<json>> starts, finishes;
  for (const auto& e : events) {
    if (e["ph"] == "s") starts[e["id"].get<std::int64_t>()].push_back(e);
    if (e["ph"] == "f") finishes[e["id"].get<std::int64_t>()].push_back(e);
  }
  const std::set<std::int64_t> ids = {1, 2, 3, 5, 6};  // connection ids that launched work
  ASSERT_EQ(starts.size(), ids.size());
  ASSERT_EQ(finishes.size(), ids.size());
  for (const std::int64_t id : ids) {
    ASSERT_EQ(starts[id].size(), 1u) << id;
    ASSERT_EQ(finishes[id].size(), 1u) << id;
    const json& s = starts[id][0];
    const json& f = finishes[id][0];
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(f["bp"], "e");
    // "s" lies inside the API call with this connection id, on its thread.
    bool in_api = false;
    for (const auto& e : events) {
      if (e["ph"] != "X" || e["cat"] != "api" || e["args"]["connection_id"] != id) continue;
      EXPECT_EQ(e["args"]["level"], "acl");  // API.level, as trace_view.json's CANN events say it
      const double ts = s["ts"].get<double>(), from = e["ts"].get<double>(), dur = e["dur"].get<double>();
      in_api = s["pid"] == e["pid"] && s["tid"] == e["tid"] && ts >= from && ts <= from + dur;
    }
    EXPECT_TRUE(in_api) << "flow " << id << " does not start inside its API call";
    // "f" sits at the start of the device slice with this connection id, on its lane.
    bool at_task = false;
    for (const auto& e : events) {
      if (e["ph"] != "X" || (e["cat"] != "task" && e["cat"] != "memcpy") || e["args"]["connection_id"] != id) continue;
      at_task = f["pid"] == e["pid"] && f["tid"] == e["tid"] && f["ts"] == e["ts"];
    }
    EXPECT_TRUE(at_task) << "flow " << id << " does not end at its task";
  }
}

TEST_F(ChromeExportTest, MetadataNamesEveryProcessAndLane) {
  const json doc = export_sample();
  const json& events = doc["traceEvents"];
  std::map<int, std::string> processes;
  std::map<std::int64_t, std::string> threads;
  for (const auto& e : events) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["name"] == "process_labels") {
      EXPECT_EQ(e["args"]["labels"], "ascend910b");
    }
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "host"}, {2, "cpu golden"}, {3, "npu:0"}}));
  const std::map<std::int64_t, std::string> expected_threads = {{1'000'000, "thread 0"},
                                                                {1'000'001, "thread 1"},
                                                                {2'000'001, "thread 1"},
                                                                {3'000'000, "stream 0"},
                                                                {3'000'001, "stream 1"}};
  EXPECT_EQ(threads, expected_threads);
  for (const auto& e : events) {
    if (e["ph"] == "X" || e["ph"] == "i") {
      EXPECT_TRUE(threads.contains(e["tid"])) << e.dump();
    }
  }
}

TEST_F(ChromeExportTest, MarkersStepsAndMemoryCounters) {
  const json doc = export_sample();
  const json& events = doc["traceEvents"];
  const json& step = find_event(events, "X", "step 0");
  EXPECT_EQ(step["cat"], "step");
  EXPECT_EQ(step["args"]["step"], 0);
  EXPECT_EQ(step["tid"], 1'000'000);
  EXPECT_DOUBLE_EQ(step["ts"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(step["dur"].get<double>(), 9.0);
  const json& forward = find_event(events, "X", "forward");
  EXPECT_EQ(forward["cat"], "marker");
  const json& checkpoint = find_event(events, "i", "checkpoint");
  EXPECT_EQ(checkpoint["s"], "t");
  EXPECT_DOUBLE_EQ(checkpoint["ts"].get<double>(), 9.65);

  std::vector<std::pair<double, std::int64_t>> allocated, reserved;
  for (const auto& e : events) {
    if (e["ph"] != "C") continue;
    EXPECT_EQ(e["pid"], 3);
    auto& series = e["name"] == "memory allocated" ? allocated : reserved;
    series.emplace_back(e["ts"].get<double>(), e["args"]["bytes"].get<std::int64_t>());
  }
  EXPECT_EQ(allocated, (std::vector<std::pair<double, std::int64_t>>{{1.5, 4096}, {9.7, 0}}));
  EXPECT_EQ(reserved, (std::vector<std::pair<double, std::int64_t>>{{1.5, 2 << 20}, {9.7, 2 << 20}}));
}

TEST_F(ChromeExportTest, IncompleteTraceSaysSo) {
  const json doc = export_sample(nullptr, false);
  EXPECT_EQ(doc["otherData"]["status"], "incomplete");
  EXPECT_EQ(count_by_phase(doc["traceEvents"])["X"], 13);
}

TEST_F(ChromeExportTest, NamesAreEscapedIntoValidJson) {
  const std::string weird = std::string("q\"uote\\ tab\t nl\n ctl\x01 é 日本 bad\xff\xc3(end");
  {
    auto w = TraceWriter::create(path("w.db"));
    TaskRow t = sample_task(1, 0, 0, 0, 10, 20, 0);
    t.name_id = w->intern(weird);
    t.op_type_id = w->intern("Op\"Type");
    w->add(t);
    w->finalize();
  }
  const auto reader = TraceReader::open(path("w.db"));
  export_chrome_trace(*reader, path("w.json"));
  const json doc = json::parse(read_text(path("w.json")));  // throws on invalid JSON or UTF-8
  // Each invalid byte became U+FFFD.
  const std::string replaced = "q\"uote\\ tab\t nl\n ctl\x01 é 日本 bad\xEF\xBF\xBD\xEF\xBF\xBD(end";
  const json& t = find_event(doc["traceEvents"], "X", replaced);
  EXPECT_EQ(t["args"]["op_type"], "Op\"Type");
  EXPECT_EQ(count_by_phase(doc["traceEvents"])["s"], 0);  // connection 0: no flow
}

TEST_F(ChromeExportTest, UnwritableOutputIsAnExportErrorAndLeavesOldFile) {
  write_sample_trace(path("t.db"));
  const auto reader = TraceReader::open(path("t.db"));
  try {
    export_chrome_trace(*reader, path("no/such/dir/t.json"));
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/t.json"), std::string::npos) << e.what();
  }
  // An existing file is replaced only by a complete export.
  std::ofstream(path("old.json")) << "old";
  export_chrome_trace(*reader, path("old.json"));
  EXPECT_NO_THROW(json::parse(read_text(path("old.json"))));
}

namespace {

// Counts events by "ph" without building a DOM: a 200k-task export is ~100 MB of JSON.
struct PhaseCounter : nlohmann::json_sax<json> {
  std::map<std::string, std::int64_t> phases;
  std::string key_;
  int depth = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t& s) override {
    if (depth == 2 && key_ == "ph") ++phases[s];
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth, true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    ADD_FAILURE() << e.what();
    return false;
  }
};

}  // namespace

TEST_F(ChromeExportTest, LargeTraceStreamsInBoundedMemory) {
  constexpr std::int64_t kTasks = 200'000;
  write_launch_trace(path("big.db"), kTasks);
  const auto reader = TraceReader::open(path("big.db"));
  // Reset the peak-RSS mark (Linux clear_refs "5") so that VmHWM measures the export alone.
  const bool can_measure = static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5");
  const std::int64_t rss_before = proc_status_kib("VmRSS");
  const ChromeExportResult r = export_chrome_trace(*reader, path("big.json"));
  const std::int64_t peak = proc_status_kib("VmHWM");
  EXPECT_EQ(r.tasks, kTasks);
  EXPECT_EQ(r.flows, kTasks);
  EXPECT_GT(r.bytes, 80 << 20);  // far more than the memory bound below
  if (can_measure && rss_before > 0 && peak > 0) {
    EXPECT_LT(peak - rss_before, 48 * 1024)
        << "the export grew the process by " << (peak - rss_before) / 1024 << " MiB: it does not stream";
  }
  std::ifstream in(path("big.json"), std::ios::binary);
  PhaseCounter counter;
  ASSERT_TRUE(json::sax_parse(in, &counter));
  EXPECT_EQ(counter.phases["X"], 2 * kTasks);
  EXPECT_EQ(counter.phases["s"], kTasks);
  EXPECT_EQ(counter.phases["f"], kTasks);
  EXPECT_EQ(counter.phases["i"], kTasks / 1000);
}
