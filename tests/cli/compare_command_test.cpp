// `npuscope compare` as a user calls it: the one-shot --model form on samples/models/mlp.onnx (8
// blocks; f32 on the NPU under must_keep_origin_dtype, so a perturbation is the only error), and
// the two-trace form on recorded runs. The truth is known: the perturbed op, the f16 overflow.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kMlp = NPUSCOPE_MLP_ONNX;
const std::string kF32 = " --precision-mode must_keep_origin_dtype";

// A directory per test (made afresh): tests run in parallel.
class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir(std::string("compare_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::pair<int, json> compare_json(const std::string& args);
  std::string constant_input(float value);

  fs::path dir_;
};

// Runs `npuscope compare ARGS --format json -o OUT` and returns the exit status and the JSON.
std::pair<int, json> CompareCommand::compare_json(const std::string& args) {
  const std::string out = (dir_ / "compare.json").string();
  const auto r = run_command(npuscope_cmd("compare " + args + " --format json -o " + out));
  json j;
  if (fs::exists(out)) j = json::parse(read_file(out));
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.output;
  return {r.status, j};
}

const json* row_of(const json& j, const std::string& op, const std::string& tensor) {
  for (const json& r : j["rows"]) {
    if (r["op_name"] == op && r["tensor"] == tensor) return &r;
  }
  return nullptr;
}

// A float32 .npy of shape [8, 64] holding `value` everywhere.
std::string CompareCommand::constant_input(float value) {
  const std::string path = (dir_ / "input.npy").string();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 64), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  const std::vector<float> data(8 * 64, value);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return path;
}

TEST_F(CompareCommand, UnperturbedModelPassesEveryOp) {
  const auto [status, j] = compare_json("--model " + kMlp + kF32 + " --fail-on-mismatch");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(j["summary"]["mode"], "tensor");
  EXPECT_EQ(j["summary"]["ops_compared"], 42);  // 8 blocks of 5 ops and the head's 2
  EXPECT_EQ(j["summary"]["failed"], 0);
  EXPECT_TRUE(j["first_failing_op"].is_null());
  EXPECT_TRUE(j["first_introducing_op"].is_null());
  EXPECT_GT((*row_of(j, "head.add", "output.0"))["cosine"].get<double>(), 0.9999);
}

// Every exec flag works through --model (exec_flags.h): --iterations, which only exec had, runs
// the model twice in both recordings, so each op is compared at both of its calls.
TEST_F(CompareCommand, ExecFlagsWorkThroughModel) {
  const std::string keep = (dir_ / "traces").string();
  const auto [status, j] = compare_json("--model " + kMlp + kF32 + " --iterations 2 --keep-traces " + keep);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(j["summary"]["ops_compared"], 84);  // 42 ops, twice
  EXPECT_EQ(j["summary"]["failed"], 0);
  for (const char* device : {"cpu", "npu"}) {
    const std::string log = read_file(keep + "/" + device + ".log");
    EXPECT_NE(log.find("2 iterations"), std::string::npos) << device << ": " << log;
  }
  const auto r = run_command(npuscope_cmd("compare --model " + kMlp + " --iterations 0"));
  EXPECT_EQ(r.status, 2) << r.output;
}

// The comparator finds a known culprit: a perturbed MatMul halfway down is the first failing and
// the first introducing op; everything after it inherits; everything before it passes.
TEST_F(CompareCommand, PerturbedOpDeepInTheModelIsTheCulprit) {
  const auto [status, j] =
      compare_json("--model " + kMlp + kF32 + " --perturb 'block4.matmul:noise=0.5' --fail-on-mismatch");
  EXPECT_EQ(status, 1) << "--fail-on-mismatch with failing ops";
  ASSERT_FALSE(j["first_failing_op"].is_null()) << j.dump();
  EXPECT_EQ(j["first_failing_op"]["op_name"], "block4.matmul");
  EXPECT_EQ(j["first_introducing_op"]["op_name"], "block4.matmul");
  const json* culprit = row_of(j, "block4.matmul", "output.0");
  ASSERT_NE(culprit, nullptr);
  EXPECT_EQ((*culprit)["verdict"], "fail");
  EXPECT_EQ((*culprit)["origin"], "introduced");
  EXPECT_LT((*culprit)["cosine"].get<double>(), 0.99);
  EXPECT_EQ((*row_of(j, "block4.matmul", "input.0"))["verdict"], "pass") << "its input still matched";
  for (const char* later : {"block4.add", "block5.matmul", "block7.norm", "head.add"}) {
    const json* r = row_of(j, later, "output.0");
    ASSERT_NE(r, nullptr) << later;
    EXPECT_EQ((*r)["verdict"], "fail") << later;
    EXPECT_EQ((*r)["origin"], "inherited") << later;
  }
  for (const char* earlier : {"block0.matmul", "block3.norm"}) {
    EXPECT_EQ((*row_of(j, earlier, "output.0"))["verdict"], "pass") << earlier;
  }
}

// An f16 overflow: inputs of 20000 through force_fp16 MatMuls exceed 65504 on the NPU, not in the
// f32 golden run. The first op with Inf is found, and says it overflowed.
TEST_F(CompareCommand, F16OverflowIsTheFirstFailingOp) {
  const auto [status, j] =
      compare_json("--model " + kMlp + " --precision-mode force_fp16 --input input=" + constant_input(20000.0f));
  EXPECT_EQ(status, 0) << "without --fail-on-mismatch the comparison ran: 0";
  ASSERT_FALSE(j["first_failing_op"].is_null());
  EXPECT_EQ(j["first_failing_op"]["op_name"], "block0.matmul");
  EXPECT_EQ(j["first_failing_op"]["npu_overflow"], true);
  EXPECT_EQ(j["first_introducing_op"]["op_name"], "block0.matmul");
  const json* r = row_of(j, "block0.matmul", "output.0");
  EXPECT_TRUE((*r)["cosine"].is_null()) << "not comparable";
  EXPECT_NE((*r)["reason"].get<std::string>().find("NaN/Inf at"), std::string::npos) << (*r)["reason"];
}

// Two recorded runs: the text report, statistics mode, --annotate, and the mapping of renamed ops.
TEST_F(CompareCommand, TwoRecordedRuns) {
  const fs::path& dir = dir_;
  const auto record = [&](const std::string& name, const std::string& device, const std::string& dump,
                          const std::string& extra = "") {
    const std::string db = (dir / (name + ".db")).string();
    const auto r = run_command(npuscope_cmd("run --force --dump " + dump + " -o " + db + " -- " +
                                            npuscope_cmd("exec --model " + kMlp + " --device " + device + kF32 + extra +
                                                         " --output-dir " + (dir / (name + "_out")).string())));
    EXPECT_EQ(r.status, 0) << r.output;
    return db;
  };
  const std::string npu = record("npu", "npu", "tensor", " --perturb 'block6.add:bitflip'");
  const std::string cpu = record("cpu", "cpu", "tensor");

  const auto text = run_command(npuscope_cmd("compare " + npu + " " + cpu + " --annotate"));
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("ops compared: 42"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("first failing op: block6.add"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Worst ops"), std::string::npos);
  // --annotate: the verdicts are in the NPU trace now.
  std::int64_t rows = 0, failed = 0;
  npuscope::collector::TraceReader::open(npu)->for_each([&](const npuscope::collector::CompareResultRow& r) {
    ++rows;
    failed += r.verdict == 1;
  });
  EXPECT_GT(rows, 84);  // an input and an output per op at least
  EXPECT_GT(failed, 0);

  // Statistics only: max/min/mean/norm compared, a note says how to get full metrics.
  const std::string npu_stats = record("npu_stats", "npu", "stats", " --perturb 'block6.add:noise=5'");
  const std::string cpu_stats = record("cpu_stats", "cpu", "stats");
  const auto [status, j] = compare_json(npu_stats + " " + cpu_stats);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(j["summary"]["mode"], "stats");
  EXPECT_EQ(j["first_failing_op"]["op_name"], "block6.add");
  EXPECT_TRUE((*row_of(j, "block6.add", "output.0"))["cosine"].is_null());
  EXPECT_NE(j["notes"][0].get<std::string>().find("--dump tensor"), std::string::npos);

  // CSV: a file per table into -o DIR; rows.csv has a row per tensor under its header.
  const std::string csv_dir = (dir / "csv").string();
  const auto csv = run_command(npuscope_cmd("compare " + npu + " " + cpu + " --format csv -o " + csv_dir));
  EXPECT_EQ(csv.status, 0) << csv.output;
  const std::string rows_csv = read_file(csv_dir + "/rows.csv");
  EXPECT_EQ(rows_csv.rfind("op_name,op_type,call_index,tensor,", 0), 0u) << rows_csv.substr(0, 200);
  EXPECT_EQ(run_command(npuscope_cmd("compare " + npu + " " + cpu + " --format csv")).status, 2) << "csv needs -o DIR";

  // Verdicts that cannot be written are not bad input: exit status 1, and the error says where.
  const std::string unwritable = (dir / "no_such_dir" / "results.db").string();
  const auto write_failed = run_command(npuscope_cmd("compare " + npu + " " + cpu + " --results " + unwritable));
  EXPECT_EQ(write_failed.status, 1) << write_failed.output;
  EXPECT_NE(write_failed.output.find("npuscope: error: cannot create " + unwritable), std::string::npos)
      << write_failed.output;
}

TEST_F(CompareCommand, BadInputsGetClearErrorsAndStatus2) {
  const fs::path& dir = dir_;
  const std::string junk = (dir / "junk.db").string();
  std::ofstream(junk) << "not a database at all, just some text that is long enough to be looked at";
  const std::string no_dumps = (dir / "no_dumps.db").string();
  ASSERT_EQ(run_command(npuscope_cmd("run --force -o " + no_dumps + " -- " +
                                     npuscope_cmd("exec --model " + kMlp + " --output-dir " + (dir / "out").string())))
                .status,
            0);

  const auto expect_error = [](const std::string& args, const std::string& needle) {
    const auto r = run_command(npuscope_cmd("compare " + args));
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  };
  expect_error(junk + " " + junk, "npuscope: error: " + junk + ": not an npuscope trace");
  expect_error(no_dumps + " " + no_dumps, "has no tensor dumps: record it with `npuscope run --dump tensor`");
  expect_error(no_dumps, "give two traces (NPU.db GOLDEN.db), --model M.onnx or -- CMD");
  expect_error("--model " + (dir / "missing.onnx").string(), "missing.onnx: no such model file");
  expect_error(no_dumps + " " + no_dumps + " --mapping " + (dir / "none.yaml").string(),
               "cannot read the mapping file");
  // A bad rule is refused before anything runs, in the emulator's words (exec says the same).
  expect_error("--model " + kMlp + " --perturb 'block1.matmul:wobble'",
               "--perturb: perturbation 'block1.matmul:wobble': unknown mode 'wobble'");
}

// Damaged TENSOR rows (edited with SQL, as a bad-input campaign did) are errors naming the trace and
// the row, with exit status 2: before, a numel times 100000 crashed compare, a dtype changed to f64
// on f32 data read past the buffer, and data_bytes = 5e9 took it to 4.9 GB before failing.
TEST_F(CompareCommand, DamagedTensorRowsAreClearErrors) {
  const auto record = [&](const std::string& name, const std::string& device) {
    const std::string db = (dir_ / (name + ".db")).string();
    const auto r = run_command(npuscope_cmd("run --force --dump tensor -o " + db + " -- " +
                                            npuscope_cmd("exec --model " + kMlp + " --device " + device + kF32 +
                                                         " --output-dir " + (dir_ / (name + "_out")).string())));
    EXPECT_EQ(r.status, 0) << r.output;
    return db;
  };
  const std::string npu = record("npu", "npu"), cpu = record("cpu", "cpu");
  const std::string bad = (dir_ / "bad.db").string();
  const std::string one_row = " WHERE rowid = (SELECT min(rowid) FROM TENSOR WHERE data_bytes > 0 AND role = 1)";
  for (const auto& [damage, problem] : std::vector<std::pair<std::string, std::string>>{
           {"UPDATE TENSOR SET numel = numel * 100000", "does not match shape"},
           {"UPDATE TENSOR SET dtype = 8", "bytes of f64"},
           {"UPDATE TENSOR SET dtype = 6", "bytes of i64"},
           {"UPDATE TENSOR SET data_bytes = 5000000000", "data_bytes 5000000000 is not numel"},
           {"UPDATE TENSOR SET shape = 'abc'", "shape 'abc' is not comma-separated dims"},
           {"UPDATE TENSOR SET role = 7", "role 7 is neither input (0) nor output (1)"},
           {"UPDATE TENSOR SET idx = -3", "idx -3 is outside 0..65535"},
       }) {
    fs::copy_file(npu, bad, fs::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(bad.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, (damage + one_row).c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << damage;
    ASSERT_EQ(sqlite3_changes(db), 1) << damage;
    sqlite3_close(db);
    const auto r = run_command(npuscope_cmd("compare " + bad + " " + cpu));
    EXPECT_EQ(r.status, 2) << damage << "\n" << r.output;
    EXPECT_NE(r.output.find("npuscope: error: " + bad + ": bad TENSOR row (task "), std::string::npos) << damage << "\n"
                                                                                                       << r.output;
    EXPECT_NE(r.output.find(problem), std::string::npos) << damage << "\n" << r.output;
  }
  // The largest child so far (exec runs included) stayed small: nothing sized a buffer by data_bytes.
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 500 * 1024) << "peak RSS of a child, KiB";
}

}  // namespace
