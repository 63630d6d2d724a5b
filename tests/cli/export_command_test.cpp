// `npuscope export`, called as a user would: the real binary on a trace written by the collector.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_test_util.h"
#include "collector/export_test_util.h"

using namespace npuscope::testing;
using namespace npuscope::collector::testing;
namespace fs = std::filesystem;

namespace {

class ExportCommandTest : public ExportTest {
 protected:
  CommandResult npuscope_export(const std::string& args) { return run_command(npuscope_cmd("export " + args)); }

  // Expects exit status 1 and "npuscope: error: ..." naming `file` and containing `reason`.
  void expect_trace_error(const std::string& file, const std::string& reason) {
    const CommandResult r = npuscope_export(file + " --chrome " + path("x.json"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(file), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(reason), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("x.json")));
  }
};

}  // namespace

TEST_F(ExportCommandTest, WritesAllThreeExportsAtOnce) {
  write_sample_trace(path("t.db"));
  const CommandResult r =
      npuscope_export(path("t.db") + " --chrome " + path("t.json") + " --csv " + path("csv") + " --npy " + path("npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("t.json") +
                          ": 46 events (4 tasks, 6 API calls, 1 memcpys, 3 markers, "
                          "2 memory records, 5 flows)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 overflowing tasks marked"), std::string::npos) << r.output;
  for (const auto& [file, rows] :
       {std::pair{"op_summary.csv", 4}, {"op_statistic.csv", 2}, {"api_statistic.csv", 4}, {"memory_record.csv", 2}}) {
    EXPECT_NE(r.output.find("wrote " + path("csv/" + std::string(file)) + ": " + std::to_string(rows) + " rows"),
              std::string::npos)
        << r.output;
  }
  EXPECT_NE(r.output.find("wrote 7 .npy files to " + path("npy")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 tensors had statistics only"), std::string::npos) << r.output;

  const auto doc = nlohmann::json::parse(read_text(path("t.json")));
  EXPECT_EQ(doc["traceEvents"].size(), 46u);
  const std::string summary = read_text(path("csv/op_summary.csv"));
  EXPECT_NE(summary.find("\n0,N/A,2,0,layer0/attn/MatMul,MatMul,AI_CORE,7.001,2.499,0.000,24,\"2,3;3,2\",f16;f16,"),
            std::string::npos)
      << summary;
  EXPECT_TRUE(fs::exists(path("npy/index.csv")));
  EXPECT_TRUE(fs::exists(path("npy/layer0_attn_MatMul.0.input.0.npy")));
}

// Note [Perfetto trace layout]: the file decodes with protoc, an independent decoder, and the
// messages' declarations (tests/collector/perfetto_export_test.cpp reads every slice back).
TEST_F(ExportCommandTest, PerfettoTraceDecodesWithProtoc) {
  write_sample_trace(path("t.db"));
  const CommandResult r = npuscope_export(path("t.db") + " --perfetto " + path("t.pftrace"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + path("t.pftrace") + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(4 tasks, 6 API calls, 1 memcpys, 3 markers, 2 memory records, 5 flows)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 overflowing tasks marked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ui.perfetto.dev"), std::string::npos) << r.output;
  const CommandResult decoded = run_command("protoc --decode=perfetto.protos.Trace -I " NPUSCOPE_SOURCE_DIR
                                            "/collector/proto perfetto_trace.proto < " +
                                            path("t.pftrace"));
  ASSERT_EQ(decoded.status, 0) << decoded.output;
  for (const char* text : {"process_name: \"npu:0\"", "process_labels: \"ascend910b\"", "name: \"stream 0 copies\"",
                           "thread_name: \"thread 0\"", "type: TYPE_SLICE_BEGIN", "type: TYPE_SLICE_END",
                           "type: TYPE_COUNTER", "flow_ids: 2", "name: \"aclnnMatMul\"", "unit: UNIT_SIZE_BYTES"}) {
    EXPECT_NE(decoded.output.find(text), std::string::npos) << text << " not in\n" << decoded.output.substr(0, 4000);
  }
}

TEST_F(ExportCommandTest, EachExportAloneAndIncompleteTraces) {
  write_sample_trace(path("t.db"), false, /*finalize=*/false);
  CommandResult r = npuscope_export(path("t.db") + " --csv " + path("csv"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("is incomplete"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(path("csv/op_statistic.csv")));
  EXPECT_FALSE(fs::exists(path("t.json")));
  r = npuscope_export("--chrome " + path("t.json") + " " + path("t.db"));  // flags before the trace
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_text(path("t.json")))["otherData"]["status"], "incomplete");
}

TEST_F(ExportCommandTest, UsageErrorsExitWithTwo) {
  write_sample_trace(path("t.db"));
  CommandResult r = npuscope_export("");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no trace given"), std::string::npos) << r.output;
  r = npuscope_export(path("t.db"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nothing to export"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("usage: npuscope export"), std::string::npos) << r.output;
  r = npuscope_export(path("t.db") + " --tensorboard x.json");
  EXPECT_EQ(r.status, 2) << r.output;
  r = npuscope_export("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--chrome"), std::string::npos) << r.output;
}

TEST_F(ExportCommandTest, BadInputsAreErrorsNamingTheFile) {
  expect_trace_error(path("missing.db"), "no such trace file");

  std::ofstream(path("notes.txt")) << "these are my notes, not a trace\n";
  expect_trace_error(path("notes.txt"), "not an npuscope trace");
  // A file of a real profile that is not a profile alone says what npuscope does read.
  std::ofstream(path("op_summary_1.csv")) << "Device_id,Model ID,Task ID,Op Name\n0,1,2,MatMul\n";
  expect_trace_error(path("op_summary_1.csv"), "nor a profile npuscope imports (`npuscope import --help` lists");

  std::mt19937 rng(42);
  std::string noise(64 * 1024, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::ofstream(path("noise.db"), std::ios::binary) << noise;
  expect_trace_error(path("noise.db"), "not an npuscope trace");

  write_sample_trace(path("whole.db"));
  const std::string whole = read_text(path("whole.db"));
  std::ofstream(path("truncated.db"), std::ios::binary) << whole.substr(0, whole.size() / 2);
  const CommandResult r = npuscope_export(path("truncated.db") + " --chrome " + path("x.json"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: " + path("truncated.db")), std::string::npos) << r.output;

  write_sample_trace(path("newer.db"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("newer.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE META SET value = '999' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  expect_trace_error(path("newer.db"), "newer npuscope");
}

TEST_F(ExportCommandTest, NpyWithoutDumpedDataSaysHowToRecord) {
  write_sample_trace(path("stats.db"), /*stats_only=*/true);
  const CommandResult r = npuscope_export(path("stats.db") + " --npy " + path("npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("npuscope run --dump tensor"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("npy")));
}

TEST_F(ExportCommandTest, UnwritableOutputIsAnError) {
  write_sample_trace(path("t.db"));
  const CommandResult r = npuscope_export(path("t.db") + " --chrome " + path("no/dir/t.json"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: cannot create '" + path("no/dir/t.json") + "'"), std::string::npos)
      << r.output;
}

// A damaged TENSOR row is an error naming the trace and the row, exit status 1, and no half export.
// data_bytes = 5e9 took `export --npy` to 4.9 GB (zero-filled before decompressing) before this
// check; `shape = 'abc'` said "error: stoll"; `role = 7` and `idx = -3` "vector::_M_default_append".
TEST_F(ExportCommandTest, DamagedTensorRowsAreErrorsNamingTheRow) {
  write_sample_trace(path("t.db"));
  const std::string bad = path("bad.db");
  const std::string one_row = " WHERE task_id = 2 AND role = 1 AND idx = 0";  // a dumped f32 [2, 2]
  for (const auto& [damage, problem] : std::vector<std::pair<std::string, std::string>>{
           {"UPDATE TENSOR SET data_bytes = 5000000000", "data_bytes 5000000000 is not numel 4 x 4 bytes of f32"},
           {"UPDATE TENSOR SET data_bytes = 1099511627776", "data_bytes 1099511627776 is not numel 4"},
           {"UPDATE TENSOR SET numel = numel * 100000", "numel 400000 does not match shape '2,2' (4 elements)"},
           {"UPDATE TENSOR SET dtype = 8", "data_bytes 16 is not numel 4 x 8 bytes of f64"},
           {"UPDATE TENSOR SET shape = 'abc'", "shape 'abc' is not comma-separated dims"},
           {"UPDATE TENSOR SET shape = '99999999999999999999,1'", "shape '99999999999999999999,1' is not"},
           {"UPDATE TENSOR SET role = 7", "role 7 is neither input (0) nor output (1)"},
           {"UPDATE TENSOR SET idx = -3", "idx -3 is outside 0..65535"},
           {"UPDATE TENSOR SET shape = '4', numel = 4, data = x'28b52ffd'", "data is corrupt"},
       }) {
    fs::copy_file(path("t.db"), bad, fs::copy_options::overwrite_existing);
    fs::remove_all(path("npy"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(bad.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, (damage + one_row).c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << damage;
    ASSERT_EQ(sqlite3_changes(db), 1) << damage;
    sqlite3_close(db);
    for (const std::string& flag : {"--npy " + path("npy"), "--csv " + path("csv")}) {
      if (flag.starts_with("--csv") && problem.find("corrupt") != std::string::npos) continue;  // CSV reads no data
      const CommandResult r = npuscope_export(bad + " " + flag);
      EXPECT_EQ(r.status, 1) << damage << "\n" << r.output;
      EXPECT_NE(r.output.find("npuscope: error: " + bad + ": bad TENSOR row (task 2, op 'layer0/attn/MatMul', "),
                std::string::npos)
          << damage << "\n"
          << r.output;
      EXPECT_NE(r.output.find(problem), std::string::npos) << damage << "\n" << r.output;
    }
    EXPECT_FALSE(fs::exists(path("npy/layer0_attn_MatMul.0.output.0.npy"))) << damage;
  }
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 500 * 1024) << "peak RSS of a child, KiB";
}

// A shape too long for format 1.0's 16-bit header length is exported as 2.0 (it was cut: an
// unreadable file, status ok).
TEST_F(ExportCommandTest, HugeRankTensorsExportAsNpyVersion2) {
  write_sample_trace(path("t.db"));
  std::string shape = "1";
  for (int i = 1; i < 30'000; ++i) shape += ",1";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("t.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, ("UPDATE TENSOR SET shape = '" + shape + "', numel = 1 WHERE task_id = 5 AND role = 1").c_str(),
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  const CommandResult r = npuscope_export(path("t.db") + " --npy " + path("npy"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string file = read_text(path("npy/layer0_attn_MatMul.1.output.0.npy"));
  ASSERT_GT(file.size(), 65'536u);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  const std::size_t len = static_cast<std::uint8_t>(file[8]) |
                          static_cast<std::size_t>(static_cast<std::uint8_t>(file[9])) << 8 |
                          static_cast<std::size_t>(static_cast<std::uint8_t>(file[10])) << 16;
  EXPECT_EQ(12 + len + 1, file.size());  // one bool element after the header
  EXPECT_EQ(file.back(), '\x01');
}
