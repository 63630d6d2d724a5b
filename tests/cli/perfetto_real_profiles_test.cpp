// `npuscope export --perfetto` of real profiles (Note [Perfetto trace layout] in
// npuscope/collector/export_perfetto.h): an Ascend PyTorch Profiler export (text and db), an msprof
// database and Kineto traces of an H100 and a V100, each imported and exported, then read back as
// Perfetto's trace processor would (collector/perfetto_decode.h). Every task, API call, PyTorch op and
// marker of the imported trace is one slice with its own start and duration: nothing is mis-nested,
// whatever the real profile's overlaps and ties, and what cannot be written is counted. Each
// collective is a slice of its communicator's track, each counter value and hardware metric is
// there, and each task launched by a PyTorch op is joined to that op by a flow of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "../realdata_util.h"
#include "cli_test_util.h"
#include "collector/perfetto_decode.h"
#include "npuscope/collector/trace_reader.h"
#include "profile_dir_test_util.h"

namespace {

namespace fs = std::filesystem;
namespace col = npuscope::collector;
using npuscope::testing::npuscope_cmd;
using npuscope::testing::run_command;

class PerfettoRealProfilesTest : public npuscope::testing::ProfileDirTest {
 protected:
  // Imports `source` (a copy, so that its cached import stays in this test's folder), exports it and
  // checks the slices against the imported trace's rows.
  void check(const std::string& source) {
    const std::string n = std::to_string(checks_++);
    const std::string db = (dir_ / ("t" + n + ".db")).string(), out = (dir_ / ("t" + n + ".pftrace")).string();
    const auto imported = run_command(npuscope_cmd("import " + source + " -o " + db));
    ASSERT_EQ(imported.status, 0) << imported.output;
    const auto exported = run_command(npuscope_cmd("export " + db + " --perfetto " + out));
    ASSERT_EQ(exported.status, 0) << exported.output;
    const auto d = col::testing::perfetto::decode(out);
    EXPECT_EQ(d.problems, std::vector<std::string>{}) << source;

    // The rows each slice should be: start and duration by kind and id.
    const auto reader = col::TraceReader::open(db);
    std::map<std::string, std::map<std::string, std::pair<std::int64_t, std::int64_t>>> want;
    std::map<std::string, std::int64_t> rows_of;             // by kind
    std::map<std::string, std::set<std::string>> ambiguous;  // ids two rows share: not checked one by one
    std::int64_t negative = 0;
    auto expect_row = [&](const std::string& kind, const std::string& id, std::int64_t start, std::int64_t end) {
      if (start < 0) {
        ++negative;
        return;
      }
      ++rows_of[kind];
      if (!want[kind].emplace(id, std::pair{start, std::max<std::int64_t>(end - start, 0)}).second)
        ambiguous[kind].insert(id);
    };
    std::set<std::int64_t> copies;  // a copy in TASK and MEMCPY is one slice, the MEMCPY row's
    for (const col::MemcpyRow& c : reader->rows<col::MemcpyRow>()) {
      expect_row("memcpy", std::to_string(c.task_id), c.start_ns, c.end_ns);
      if (c.connection_id != 0) copies.insert(c.connection_id);
    }
    for (const col::TaskRow& t : reader->rows<col::TaskRow>()) {
      if (t.task_type == static_cast<std::int32_t>(col::TaskType::kMemcpy) && copies.contains(t.connection_id))
        continue;
      expect_row("task", std::to_string(t.task_id), t.start_ns, t.end_ns);
    }
    for (const col::PytorchApiRow& p : reader->rows<col::PytorchApiRow>())
      expect_row("op", std::to_string(p.id), p.start_ns, p.end_ns);
    for (const col::CommunicationRow& c : reader->rows<col::CommunicationRow>())
      expect_row("communication", std::to_string(c.task_id), c.start_ns, c.end_ns);
    std::int64_t apis = 0;
    for (const col::ApiRow& a : reader->rows<col::ApiRow>()) apis += a.start_ns >= 0;
    // Hardware metrics and counters: every value written once.
    std::map<std::string, std::int64_t> metrics_of;  // task id -> TASK_PMU rows
    for (const col::TaskPmuRow& m : reader->rows<col::TaskPmuRow>()) ++metrics_of[std::to_string(m.task_id)];
    std::int64_t counter_values = 0;
    for (const col::CounterRow& c : reader->rows<col::CounterRow>()) counter_values += c.ts_ns >= 0;
    for (const col::MemoryRow& m : reader->rows<col::MemoryRow>()) counter_values += m.ts_ns >= 0 ? 2 : 0;
    std::int64_t decoded_values = 0;
    for (const auto& [uuid, values] : d.counters) decoded_values += static_cast<std::int64_t>(values.size());
    EXPECT_EQ(decoded_values, counter_values) << source;
    // Flows: an op's to its tasks have the top bit set (Note [Flows from PyTorch ops]).
    std::map<std::uint64_t, std::vector<const col::testing::perfetto::Slice*>> op_flows;
    for (const auto& s : d.slices)
      for (const std::uint64_t id : s.flows)
        if ((id >> 63) != 0) op_flows[id].push_back(&s);
    std::map<std::string, std::int64_t> slices_by_kind;
    for (const auto& s : d.slices) {
      const std::string kind = s.category == "task" || s.category == "memcpy" || s.category == "communication"
                                   ? s.category
                               : s.category == "api" || s.category == "step" || s.category == "marker" ||
                                       s.category == "overflow" || s.category == "underflow"
                                   ? s.category
                                   : "op";
      ++slices_by_kind[kind];
      const char* id_arg = kind == "op"                                                    ? "id"
                           : kind == "task" || kind == "memcpy" || kind == "communication" ? "task_id"
                                                                                           : nullptr;
      if (id_arg == nullptr) continue;
      if (kind == "task" && !ambiguous[kind].contains(s.args.at(id_arg))) {
        std::int64_t metrics = 0;
        for (const auto& [key, value] : s.args) metrics += key.starts_with("pmu.");
        const auto it = metrics_of.find(s.args.at(id_arg));
        EXPECT_EQ(metrics, it == metrics_of.end() ? 0 : it->second) << "metrics of task " << s.args.at(id_arg);
      }
      if (ambiguous[kind].contains(s.args.at(id_arg))) continue;
      const auto& rows = want[kind];
      const auto row = rows.find(s.args.at(id_arg));
      ASSERT_NE(row, rows.end()) << kind << " " << s.args.at(id_arg) << " is no row of " << source;
      EXPECT_EQ(s.ts, row->second.first) << kind << " " << row->first;
      EXPECT_EQ(s.dur, row->second.second) << kind << " " << row->first << " is mis-nested";
    }
    EXPECT_EQ(slices_by_kind["task"], rows_of["task"]) << source;
    EXPECT_EQ(slices_by_kind["memcpy"], rows_of["memcpy"]) << source;
    EXPECT_EQ(slices_by_kind["op"], rows_of["op"]) << source;
    EXPECT_EQ(slices_by_kind["api"], apis) << source;
    EXPECT_EQ(slices_by_kind["communication"], rows_of["communication"]) << source;
    std::int64_t launched = 0;  // tasks written whose op is written too
    std::set<std::string> ops_written;
    for (const auto& s : d.slices)
      if (s.args.contains("id") && s.category != "task") ops_written.insert(s.args.at("id"));
    for (const auto& s : d.slices) {
      const auto op = s.args.find("pytorch_op_id");
      launched += s.category == "task" && op != s.args.end() && ops_written.contains(op->second);
    }
    EXPECT_EQ(static_cast<std::int64_t>(op_flows.size()), launched) << source;
    for (const auto& [id, ends] : op_flows) {
      ASSERT_EQ(ends.size(), 2u) << "flow " << id << " of " << source;
      const auto* task = ends[0]->category == "task" ? ends[0] : ends[1];
      const auto* op = ends[0]->category == "task" ? ends[1] : ends[0];
      ASSERT_EQ(task->category, "task");
      EXPECT_EQ(task->args.at("pytorch_op_id"), op->args.at("id")) << source;
    }
    EXPECT_GT(slices_by_kind["task"] + slices_by_kind["op"], 0) << source;
    if (negative > 0) {
      EXPECT_NE(exported.output.find("start before time 0"), std::string::npos) << exported.output;
    }
  }

 protected:
  int checks_ = 0;
};

TEST_F(PerfettoRealProfilesTest, KinetoTraceOfAnH100) {
  // Always here: tests/data/realdata (PROVENANCE.md).
  check(copy(NPUSCOPE_SOURCE_DIR "/tests/data/realdata/kineto_cross_hw/h100_bert_small.json.gz", "h100.json.gz"));
}

TEST_F(PerfettoRealProfilesTest, KinetoTraceOfAV100Resnet) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/v100_resnet_rank0.pt.trace.json.gz");
  check(copy(src, "v100.pt.trace.json.gz"));
}

TEST_F(PerfettoRealProfilesTest, AscendPytorchProfilerTextAndDbExports) {
  NPUSCOPE_REALDATA_OR_SKIP(text, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  check(copy_dir(text, "rank0_ascend_pt"));
  NPUSCOPE_REALDATA_OR_SKIP(db, "ascend_pytorch_profiler/db/level1/rank0_ascend_pt");
  check(copy_dir(db, "db/rank0_ascend_pt"));
}

// The other vendors' and setups' Kineto traces: NCCL collectives on an A100 pair, one rank of 128,
// AMD MI250 and MI300, Meta's MTIA, a CPU-only rank.
TEST_F(PerfettoRealProfilesTest, KinetoTracesOfOtherDevices) {
  for (const char* trace :
       {"kineto/a100_nccl_world2.json.gz", "kineto/a100_sampled_128ranks/rank-0.json.gz",
        "kineto/mi250_minitoy_train.json.gz", "kineto/mtia_inference_rank0.json.gz", "kineto/cpu_only_rank34.json.gz",
        "kineto/cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz"}) {
    NPUSCOPE_REALDATA_OR_SKIP(src, trace);
    SCOPED_TRACE(trace);
    check(copy(src, "t" + std::to_string(checks_) + ".json.gz"));
  }
}

TEST_F(PerfettoRealProfilesTest, MsprofDatabase) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  check(copy(src, "msprof_0.db"));
}

}  // namespace
