// `npuscope export --perfetto` of real profiles (Note [Perfetto trace layout] in
// npuscope/collector/export_perfetto.h): an Ascend PyTorch Profiler export (text and db), an msprof
// database and Kineto traces of an H100 and a V100, each imported and exported, then read back as
// Perfetto's trace processor would (collector/perfetto_decode.h). Every task, API call, PyTorch op and
// marker of the imported trace is one slice with its own start and duration: nothing is mis-nested,
// whatever the real profile's overlaps and ties, and what cannot be written is counted.
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
    std::int64_t apis = 0;
    for (const col::ApiRow& a : reader->rows<col::ApiRow>()) apis += a.start_ns >= 0;
    std::map<std::string, std::int64_t> slices_by_kind;
    for (const auto& s : d.slices) {
      const std::string kind = s.category == "task" || s.category == "memcpy" ? s.category
                               : s.category == "api" || s.category == "step" || s.category == "marker" ||
                                       s.category == "overflow" || s.category == "underflow"
                                   ? s.category
                                   : "op";
      ++slices_by_kind[kind];
      const char* id_arg = kind == "op" ? "id" : kind == "task" || kind == "memcpy" ? "task_id" : nullptr;
      if (id_arg == nullptr) continue;
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
    EXPECT_GT(slices_by_kind["task"] + slices_by_kind["op"], 0) << source;
    if (negative > 0) {
      EXPECT_NE(exported.output.find("start before time 0"), std::string::npos) << exported.output;
    }
  }

 private:
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

TEST_F(PerfettoRealProfilesTest, MsprofDatabase) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  check(copy(src, "msprof_0.db"));
}

}  // namespace
