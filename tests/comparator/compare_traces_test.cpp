// compare_traces on small traces written here through the real TraceWriter, where the truth is
// known: which op was broken, which ops only inherited it, which could not be paired.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "../collector/trace_test_util.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/comparator/compare.h"
#include "npuscope/comparator/compare_report.h"
#include "npuscope/comparator/results_table.h"

using namespace npuscope;
using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using comparator::CompareResult;

namespace {

using Values = std::vector<float>;

void write_bytes_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes ops with f32 tensors: each op's tensors dumped with data (or statistics only).
class TraceBuilder {
 public:
  TraceBuilder(const std::string& path, bool with_data = true)
      : writer_(TraceWriter::create(path)), with_data_(with_data) {}

  void op(const std::string& name, const std::string& type, const std::vector<Values>& inputs,
          const std::vector<Values>& outputs, std::int32_t call_index = 0, const std::string& shape = "",
          std::optional<ModelPass> pass = std::nullopt) {
    TaskRow t;
    if (pass) {  // launched by a PyTorch op of that pass (PYTORCH_API)
      PytorchApiRow api;
      api.id = task_id_ + 1;
      api.start_ns = 1000 * api.id - 10;
      api.end_ns = api.start_ns + 5;
      api.name_id = writer_->intern(name.substr(name.rfind('/') + 1));
      api.pass = static_cast<std::int32_t>(*pass);
      writer_->add(std::span<const PytorchApiRow>(&api, 1));
      t.pytorch_api_id = api.id;
    }
    t.task_id = ++task_id_;
    t.start_ns = t.queued_ns = 1000 * task_id_;
    t.end_ns = t.start_ns + 500;
    t.device_id = 0;
    t.name_id = writer_->intern(name);
    t.op_type_id = writer_->intern(type);
    t.task_type = static_cast<std::int32_t>(TaskType::kAiVectorCore);
    t.call_index = call_index;
    writer_->add(std::span<const TaskRow>(&t, 1));
    for (std::size_t i = 0; i < inputs.size(); ++i) tensor(t.task_id, 0, i, inputs[i], shape);
    for (std::size_t i = 0; i < outputs.size(); ++i) tensor(t.task_id, 1, i, outputs[i], shape);
  }
  void finish() { writer_->finalize(); }

 private:
  void tensor(std::int64_t task, int role, std::size_t idx, const Values& v, const std::string& shape) {
    TensorRow r;
    r.task_id = task;
    r.role = role;
    r.idx = static_cast<std::int32_t>(idx);
    r.dtype = 0;  // f32
    r.shape = shape.empty() ? std::to_string(v.size()) : shape;
    r.numel = static_cast<std::int64_t>(v.size());
    double sum = 0, sq = 0;
    r.min = r.max = v.empty() ? 0 : v[0];
    for (float x : v) {
      if (std::isnan(x)) {
        ++r.nan_count;
        continue;
      }
      r.min = std::min<double>(r.min, x);
      r.max = std::max<double>(r.max, x);
      sum += x;
      sq += double(x) * x;
    }
    r.mean = v.empty() ? 0 : sum / static_cast<double>(v.size());
    r.l2norm = std::sqrt(sq);
    if (with_data_) {
      std::vector<std::uint8_t> raw(v.size() * 4);
      std::memcpy(raw.data(), v.data(), raw.size());
      r.data = zstd_compress(raw);
      r.data_bytes = static_cast<std::int64_t>(raw.size());
    }
    writer_->add(r);
  }

  std::unique_ptr<TraceWriter> writer_;
  bool with_data_;
  std::int64_t task_id_ = 0;
};

Values ramp(int n, float scale = 1) {
  Values v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = scale * (0.5f + static_cast<float>(i % 7) - 0.3f * static_cast<float>(i % 3));
  return v;
}

Values plus(Values v, float delta) {
  for (float& x : v) x += delta;
  return v;
}

class CompareTracesTest : public TraceTest {
 protected:
  CompareResult compare(const comparator::CompareOptions& options = {}) {
    const auto npu = TraceReader::open(path("npu.db"));
    const auto golden = TraceReader::open(path("golden.db"));
    return comparator::compare_traces(*npu, *golden, options);
  }
  const comparator::OpVerdict& op(const CompareResult& r, const std::string& name) {
    for (const auto& o : r.ops) {
      if (o.op_name == name) return o;
    }
    ADD_FAILURE() << "no op " << name;
    return r.ops.front();
  }
};

// A chain x -> op0 -> op1 -> ... -> op5 where the NPU's op3 is wrong: op3 introduced the error, op4
// and op5 received bad inputs and inherited it, op0-op2 pass.
TEST_F(CompareTracesTest, BrokenOpIsFirstFailingAndIntroducingAndLaterOpsInherit) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  Values gx = ramp(64), nx = gx;
  for (int k = 0; k < 6; ++k) {
    const std::string name = "layer" + std::to_string(k) + "/Add";
    const Values gy = plus(gx, 1.0f);
    // The NPU: tiny rounding noise everywhere, a gross error at op3, carried on after it.
    Values ny = plus(nx, 1.0f + 1e-6f);
    if (k == 3) ny = plus(ramp(64, -3), 0.5f);
    golden.op(name, "Add", {gx}, {gy});
    npu.op(name, "Add", {nx}, {ny});
    gx = gy;
    nx = ny;
  }
  npu.finish();
  golden.finish();

  const CompareResult r = compare();
  EXPECT_EQ(r.mode, "tensor");
  ASSERT_EQ(r.ops.size(), 6u);
  EXPECT_EQ(r.passed, 3);
  EXPECT_EQ(r.failed, 3);
  ASSERT_TRUE(r.first_failing && r.first_introducing);
  EXPECT_EQ(r.ops[*r.first_failing].op_name, "layer3/Add");
  EXPECT_EQ(r.ops[*r.first_introducing].op_name, "layer3/Add");
  EXPECT_EQ(op(r, "layer3/Add").origin, ErrorOrigin::kIntroduced);
  EXPECT_EQ(op(r, "layer4/Add").origin, ErrorOrigin::kInherited);
  EXPECT_EQ(op(r, "layer5/Add").origin, ErrorOrigin::kInherited);
  EXPECT_EQ(op(r, "layer2/Add").verdict, Verdict::kPass);
  EXPECT_EQ(op(r, "layer2/Add").origin, ErrorOrigin::kNone);
  // Rows: an input and an output per op, the output of layer3 failing on cosine.
  ASSERT_EQ(r.rows.size(), 12u);
  const comparator::CompareRow& bad = r.rows[7];
  EXPECT_EQ(bad.op_name, "layer3/Add");
  EXPECT_EQ(bad.tensor, "output.0");
  EXPECT_EQ(bad.verdict, Verdict::kFail);
  EXPECT_LT(bad.metrics.cosine, 0.9);
  EXPECT_NE(bad.reason.find("cosine"), std::string::npos) << bad.reason;
  EXPECT_EQ(r.rows[6].verdict, Verdict::kPass) << "layer3's input still matched";

  // The text report names both, the JSON carries the keys the issue asks for.
  std::ostringstream text;
  analyzer::write_text(comparator::compare_report(r), text);
  EXPECT_NE(text.str().find("first failing op: layer3/Add"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("first op that introduced the error: layer3/Add"), std::string::npos);
  const auto j = nlohmann::json::parse(analyzer::to_json(comparator::compare_report(r)));
  EXPECT_EQ(j["first_failing_op"]["op_name"], "layer3/Add");
  EXPECT_EQ(j["first_introducing_op"]["op_name"], "layer3/Add");
  EXPECT_EQ(j["rows"][7]["verdict"], "fail");
  EXPECT_EQ(j["rows"][7]["origin"], "introduced");
  EXPECT_EQ(j["rows"][9]["origin"], "inherited");
  for (const char* key : {"op_name", "op_type", "tensor", "shape", "dtype", "cosine", "max_abs_err", "max_rel_err",
                          "one_thousandth_ratio", "five_thousandth_ratio", "rmse", "verdict", "origin"}) {
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
  }
}

// Note [Model pass of an op]: a task's pass is its PYTORCH_API op's, in the rows, the JSON, the CSV
// and the text; a task without one (or a trace without PYTORCH_API) has none.
TEST_F(CompareTracesTest, EachOpCarriesThePassOfTheFrameworkOpThatLaunchedIt) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  const Values x = ramp(32);
  for (TraceBuilder* b : {&npu, &golden}) {
    b->op("Module.fc.Linear.forward.0/aten::addmm", "Gemm", {x}, {plus(x, 1)}, 0, "", ModelPass::kForward);
    b->op("Module.fc.Linear.backward.0/aten::mm", "Gemm", {x}, {b == &npu ? ramp(32, -2) : plus(x, 2)}, 0, "",
          ModelPass::kBackward);
    b->op("Optimizer.step#SGD.step/aten::add", "Axpy", {x}, {plus(x, 3)}, 0, "", ModelPass::kOptimizer);
    b->op("aten::copy_", "Cast", {x}, {x});  // launched outside any framework op
    b->finish();
  }
  const CompareResult r = compare();
  ASSERT_EQ(r.ops.size(), 4u);
  EXPECT_EQ(r.ops[0].pass, "forward");
  EXPECT_EQ(r.ops[1].pass, "backward");
  EXPECT_EQ(r.ops[2].pass, "optimizer");
  EXPECT_EQ(r.ops[3].pass, "");
  ASSERT_TRUE(r.first_introducing);
  EXPECT_EQ(r.ops[*r.first_introducing].op_name, "Module.fc.Linear.backward.0/aten::mm");
  for (const comparator::CompareRow& row : r.rows) {
    if (row.op_name == "Module.fc.Linear.backward.0/aten::mm") {
      EXPECT_EQ(row.pass, "backward");
    }
  }

  const auto j = nlohmann::json::parse(analyzer::to_json(comparator::compare_report(r)));
  EXPECT_EQ(j["first_introducing_op"]["pass"], "backward");
  EXPECT_EQ(j["first_failing_op"]["pass"], "backward");
  EXPECT_EQ(j["rows"][0]["pass"], "forward");
  EXPECT_TRUE(j["rows"].back()["pass"].is_null());
  analyzer::write_csv(comparator::compare_report(r), path("csv"));
  const std::string csv = read_text_file(path("csv/rows.csv"));
  EXPECT_NE(csv.find(",golden_task_id,pass,"), std::string::npos) << csv.substr(0, 300);
  EXPECT_NE(csv.find(",optimizer,"), std::string::npos);
  std::ostringstream text;
  analyzer::write_text(comparator::compare_report(r), text, {.width = 200});
  EXPECT_NE(text.str().find("first op that introduced the error: Module.fc.Linear.backward.0/aten::mm (Gemm, call 0, "
                            "task 2, backward pass)"),
            std::string::npos)
      << text.str();
}

// Ops that neither trace dumped (run with --ops / --steps filters) are not compared, and a note says so.
TEST_F(CompareTracesTest, OpsDumpedOnNeitherSideAreLeftOut) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  const Values x = ramp(16);
  for (TraceBuilder* b : {&npu, &golden}) {
    b->op("a", "Add", {}, {});
    b->op("b", "Add", {x}, {x});
    b->op("c", "Add", {}, {});
    b->finish();
  }
  const CompareResult r = compare();
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].op_name, "b");
  EXPECT_EQ(r.not_applicable, 0);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("2 paired ops had no tensors dumped in either trace"), std::string::npos) << r.notes[0];
}

// --annotate and --results: the viewer reads the verdicts back from COMPARE_RESULT, names joined
// through the file's own STRING_IDS; annotating again replaces the earlier results.
TEST_F(CompareTracesTest, VerdictsAreStoredInTheTraceOrAResultsFile) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  const Values x = ramp(16);
  golden.op("good", "Add", {x}, {x});
  npu.op("good", "Add", {x}, {x});
  golden.op("bad", "Mul", {x}, {x});
  npu.op("bad", "Mul", {x}, {plus(x, 5.0f)});
  npu.finish();
  golden.finish();
  const CompareResult r = compare();
  for (const bool new_file : {false, false, true}) {  // twice into the trace: no duplicates
    const std::string target = new_file ? path("results.db") : path("npu.db");
    comparator::store_results(r, target, new_file);
    const auto reader = TraceReader::open(target);
    std::vector<CompareResultRow> rows;
    reader->for_each([&](const CompareResultRow& row) { rows.push_back(row); });
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(reader->string(rows[2].name_id), "bad");
    EXPECT_EQ(rows[2].task_id, r.rows[2].npu_task_id);
    EXPECT_EQ(rows[3].verdict, 1);  // fail
    EXPECT_EQ(rows[3].origin, 1);   // introduced
    EXPECT_EQ(reader->string(rows[3].reason_id), r.rows[3].reason);
    EXPECT_EQ(rows[3].max_abs_err, r.rows[3].metrics.max_abs_err);
    EXPECT_NEAR(rows[3].max_abs_err, 5.0, 1e-6);
    EXPECT_EQ(rows[1].verdict, 0);
    EXPECT_EQ(rows[1].reason_id, 0);
    EXPECT_EQ(reader->meta("compare.first_failing_task"), std::to_string(r.rows[3].npu_task_id));
    if (!new_file) {
      EXPECT_EQ(reader->rows<TaskRow>().size(), 2u) << "the trace itself is untouched";
    }
    // Read back for the viewer's Compare panel: the same ops and verdicts, judged again from the rows.
    const CompareResult stored = comparator::load_results(*reader);
    EXPECT_TRUE(stored.stored);
    EXPECT_EQ(stored.mode, "tensor");
    ASSERT_EQ(stored.ops.size(), 2u);
    EXPECT_EQ(stored.ops[1].op_name, "bad");
    EXPECT_EQ(stored.ops[1].verdict, Verdict::kFail);
    EXPECT_EQ(stored.ops[1].origin, ErrorOrigin::kIntroduced);
    EXPECT_EQ(stored.ops[1].worst_max_abs_err, r.ops[1].worst_max_abs_err);
    EXPECT_EQ(stored.first_failing, r.first_failing);
    EXPECT_EQ(stored.rows[3].reason, r.rows[3].reason);
    const analyzer::Report report = comparator::compare_report(stored);
    EXPECT_EQ(report.find("summary"), nullptr) << "COMPARE_RESULT keeps no unmatched ops";
    EXPECT_EQ(report.find("ops")->rows.size(), 2u);
  }
  EXPECT_THROW(comparator::store_results(r, path("results.db"), true), TraceError) << "an existing results file";
}

TEST_F(CompareTracesTest, UnmatchedOpsAreReportedAndRenamedOpsPairedByMappingOrOrder) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  const Values x = ramp(16);
  golden.op("a/MatMul", "MatMul", {x}, {x});
  npu.op("a/MatMul", "MatMul", {x}, {x});
  golden.op("enc.0.fc", "MatMul", {x}, {x});  // renamed: the mapping file pairs it
  npu.op("layer0/fc", "MatMul", {x}, {x});
  golden.op("golden_only_relu", "Relu", {x}, {x});
  npu.op("npu_only_cast", "Cast", {x}, {x});    // no golden Cast at all
  golden.op("scope_b/Gelu", "Gelu", {x}, {x});  // a different scope, same type: paired by order
  npu.op("scope_a/Gelu", "Gelu", {x}, {x});
  npu.finish();
  golden.finish();

  const std::string mapping = path("mapping.yaml");
  write_bytes_file(mapping, "layer0/fc: enc.0.fc\n");
  const CompareResult r = compare({.mapping = analyzer::load_name_map(mapping, comparator::kMappingKeys)});
  ASSERT_EQ(r.ops.size(), 3u);
  EXPECT_EQ(r.passed, 3);
  EXPECT_EQ(r.rows[2].match, PairingStage::kNameMap);
  EXPECT_EQ(r.rows[4].match, PairingStage::kTypeOrder);
  ASSERT_EQ(r.unmatched_npu.size(), 1u);
  EXPECT_EQ(r.unmatched_npu[0].op_name, "npu_only_cast");
  ASSERT_EQ(r.unmatched_golden.size(), 1u);
  EXPECT_EQ(r.unmatched_golden[0].op_name, "golden_only_relu");
  EXPECT_FALSE(r.first_failing);
}

TEST_F(CompareTracesTest, StatisticsModeWhenOnlyStatsWereDumped) {
  TraceBuilder npu(path("npu.db"), false), golden(path("golden.db"), false);
  const Values x = ramp(32);
  golden.op("ok", "Add", {x}, {x});
  npu.op("ok", "Add", {x}, {plus(x, 1e-4f)});
  golden.op("bad", "Mul", {x}, {x});
  npu.op("bad", "Mul", {x}, {plus(x, 10.0f)});  // mean moves far more than 50 %
  npu.finish();
  golden.finish();

  const CompareResult r = compare();
  EXPECT_EQ(r.mode, "stats");
  EXPECT_EQ(op(r, "ok").verdict, Verdict::kPass);
  EXPECT_EQ(op(r, "bad").verdict, Verdict::kFail);
  EXPECT_EQ(op(r, "bad").origin, ErrorOrigin::kIntroduced);
  const comparator::CompareRow& row = r.rows[3];
  EXPECT_TRUE(row.stats_mode);
  EXPECT_GT(row.stats.mean_rel, 0.5);
  EXPECT_NE(row.reason.find("statistics mode"), std::string::npos) << row.reason;
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("--dump tensor"), std::string::npos);
  // JSON: metrics null, statistics given.
  const auto j = nlohmann::json::parse(analyzer::to_json(comparator::compare_report(r)));
  EXPECT_TRUE(j["rows"][3]["cosine"].is_null());
  EXPECT_GT(j["rows"][3]["mean_rel_diff"].get<double>(), 0.5);
}

TEST_F(CompareTracesTest, ShapeMismatchAndNanAtOtherPlacesCannotBeCompared) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  const Values x = ramp(16);
  golden.op("reshaped", "Add", {}, {x}, 0, "4,4");
  npu.op("reshaped", "Add", {}, {x}, 0, "2,8");
  Values with_nan = x;
  with_nan[3] = std::numeric_limits<float>::quiet_NaN();
  golden.op("nan", "Div", {}, {x});
  npu.op("nan", "Div", {}, {with_nan});
  npu.finish();
  golden.finish();

  const CompareResult r = compare();
  EXPECT_EQ(r.rows[0].verdict, Verdict::kFail);
  EXPECT_EQ(r.rows[0].reason, "shape [2,8] vs golden [4,4]: cannot compare");
  EXPECT_EQ(r.rows[1].verdict, Verdict::kFail);
  EXPECT_FALSE(r.rows[1].metrics.comparable);
  EXPECT_EQ(r.rows[1].metrics.nan_inf_mismatches, 1);
}

TEST_F(CompareTracesTest, TracesWithoutDumpsAreRefused) {
  {
    auto w = TraceWriter::create(path("npu.db"));
    w->finalize();
  }
  TraceBuilder golden(path("golden.db"));
  golden.op("x", "Add", {ramp(4)}, {ramp(4)});
  golden.finish();
  try {
    compare();
    ADD_FAILURE() << "no CompareError";
  } catch (const comparator::CompareError& e) {
    EXPECT_NE(
        std::string(e.what()).find("the NPU trace has no tensor dumps: record it with `npuscope run --dump tensor`"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace

// Note [Underflow reason]: an f16 run whose values fell below 5.96e-8 has zeros where the golden has
// 1e-8: the failing tensor's reason says underflow (and the golden there was below f16's range); an
// op after it, reading the zeros, says they came from an earlier op; an error of another kind does
// not mention underflow.
TEST_F(CompareTracesTest, ZerosWhereTheGoldenIsNotAreAnUnderflow) {
  TraceBuilder npu(path("npu.db")), golden(path("golden.db"));
  Values tiny(64), flushed(64), one(64), zeros(64, 0.0f);
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    tiny[i] = 1e-8f * (0.5f + 0.04f * static_cast<float>(i));  // 0.5e-8 .. 3e-8
    flushed[i] = i < 60 ? 0.0f : 5.96e-8f;                     // what f16 kept of it
    one[i] = 1e8f * tiny[i];
  }
  golden.op("scale_down", "Mul", {}, {tiny});
  npu.op("scale_down", "Mul", {}, {flushed});
  golden.op("scale_up", "Mul", {tiny}, {one});
  npu.op("scale_up", "Mul", {flushed}, {zeros});
  const Values x = ramp(64);
  golden.op("other", "Add", {}, {x});
  npu.op("other", "Add", {}, {ramp(64, -3)});
  npu.finish();
  golden.finish();

  const CompareResult r = compare();
  ASSERT_TRUE(r.first_failing);
  EXPECT_EQ(r.ops[*r.first_failing].op_name, "scale_down");
  const auto reason_of = [&](const std::string& op, const std::string& tensor) {
    for (const auto& row : r.rows) {
      if (row.op_name == op && row.tensor == tensor) return row.reason;
    }
    return std::string("(no row)");
  };
  const std::string down = reason_of("scale_down", "output.0");
  EXPECT_EQ(down.rfind("underflow: 60 of 64 non-zero golden elements are 0 on the NPU (", 0), 0u) << down;
  EXPECT_NE(down.find("60 of them below f16's smallest normal"), std::string::npos) << down;
  EXPECT_NE(down.find("; cosine "), std::string::npos) << down;  // msprobe's reason follows
  const std::string up = reason_of("scale_up", "output.0");
  EXPECT_NE(up.find("underflow: 64 of 64 non-zero golden elements are 0 on the NPU (100 % of the abs error)"),
            std::string::npos)
      << up;
  EXPECT_NE(up.find("zeros from an earlier op"), std::string::npos) << up;
  const std::string other = reason_of("other", "output.0");
  EXPECT_FALSE(other.empty());
  EXPECT_EQ(other.find("underflow"), std::string::npos) << other;
}

TEST_F(CompareTracesTest, AnAllZeroNpuTensorIsAnUnderflowInStatisticsMode) {
  TraceBuilder npu(path("npu.db"), false), golden(path("golden.db"), false);
  const Values x = ramp(32);
  golden.op("vanished", "Mul", {}, {x});
  npu.op("vanished", "Mul", {}, {Values(32, 0.0f)});
  golden.op("moved", "Mul", {}, {x});
  npu.op("moved", "Mul", {}, {plus(x, 10.0f)});
  npu.finish();
  golden.finish();
  const CompareResult r = compare();
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].verdict, Verdict::kFail);
  EXPECT_EQ(r.rows[0].reason.rfind("underflow: the NPU tensor is all 0, the golden's is not", 0), 0u)
      << r.rows[0].reason;
  EXPECT_EQ(r.rows[1].reason.find("underflow"), std::string::npos) << r.rows[1].reason;
}
