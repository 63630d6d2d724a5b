// The msprobe entries of a trace without msprobe fragments (analyzer/msprobe_entries.h) through
// `export --msprobe`, on a hand-built trace
// of one Linear module's forward, a ReLU, the backward the autograd engine ran and the optimizer:
// Note [msprobe entries]'s rules, one by one (data flow, saved tensors, parameters, node matching,
// numbering, construct.json), and the errors.
#include "npuscope/analyzer/msprobe_entries.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "collector/export_test_util.h"
#include "npuscope/collector/export_msprobe.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using Json = nlohmann::json;

namespace {

constexpr int kF32 = 0;
constexpr std::int32_t kAten = 0, kNode = 1, kModule = 2, kOptimizer = 3;  // HostOpKind
constexpr std::int32_t kFwd = 0, kBwd = 1, kOpt = 2;                       // ModelPass

// Buffers: W weight, B bias, X input, Wt the weight transposed (a temporary), Y fc's output, R the
// ReLU's, G the gradient of Y, dW and dB the gradients.
enum Buffer : std::int64_t {
  W = 0x100,
  Wt = 0x200,
  X = 0x300,
  B = 0x400,
  Y = 0x500,
  R = 0x600,
  G = 0x700,
  dW = 0x800,
  dB = 0x900
};

class MsprobeExportTest : public ExportTest {
 protected:
  // `with_addresses` false: a schema 6 trace, whose tensors have no address.
  void write_trace(bool with_addresses, int steps = 1) {
    auto w = TraceWriter::create(path("t.db"), {.overwrite = true});
    std::vector<PytorchApiRow> ops;
    std::vector<TaskRow> tasks;
    std::int64_t id = 0, task = 0;
    const auto op = [&](std::int64_t base, std::int64_t parent, std::int64_t start, std::int64_t end, const char* name,
                        std::int32_t kind, std::int32_t pass, const char* module, std::int64_t seq,
                        std::int32_t thread) {
      PytorchApiRow r;
      r.id = ++id;
      r.parent_id = parent == 0 ? 0 : base + parent;
      r.start_ns = start;
      r.end_ns = end;
      r.name_id = w->intern(name);
      r.kind = kind;
      r.pass = pass;
      r.module_id = module ? w->intern(module) : 0;
      r.sequence_number = seq;
      r.thread_id = thread;
      r.fwd_thread_id = 0;
      ops.push_back(r);
      return r.id;
    };
    const auto tensor = [&](std::int64_t t, int role, int idx, Buffer buffer, double stat) {
      TensorRow row;
      row.task_id = t;
      row.role = role;
      row.idx = idx;
      row.dtype = kF32;
      row.shape = "2";
      row.numel = 2;
      row.max = stat;
      row.l2norm = stat;
      row.address = with_addresses ? static_cast<std::int64_t>(buffer) : 0;
      w->add(row);
    };
    const auto launch = [&](std::int64_t api, std::int64_t at, std::vector<std::pair<Buffer, double>> in,
                            std::vector<std::pair<Buffer, double>> out) {
      TaskRow t = sample_task(++task, 0, 0, at, at + 5, at + 9, 0);
      t.name_id = w->intern("k");
      t.pytorch_api_id = api;
      tasks.push_back(t);
      for (std::size_t i = 0; i < in.size(); ++i) tensor(t.task_id, 0, static_cast<int>(i), in[i].first, in[i].second);
      for (std::size_t i = 0; i < out.size(); ++i)
        tensor(t.task_id, 1, static_cast<int>(i), out[i].first, out[i].second);
    };
    std::vector<MarkerRow> markers;
    for (int s = 0; s < steps; ++s) {
      const std::int64_t t0 = s * 1000, base = id, seq = 10 + s * 2;
      const double v = s;  // each step's weights and data differ
      markers.push_back({.start_ns = t0, .end_ns = t0 + 999, .name_id = 0, .thread_id = 0, .kind = 1, .step = s});
      op(base, 0, t0 + 0, t0 + 100, "Module.fc.Linear.forward.0", kModule, kFwd, "Module.fc.Linear.forward.0", -1, 0);
      op(base, 1, t0 + 10, t0 + 60, "aten::linear", kAten, kFwd, "Module.fc.Linear.forward.0", seq, 0);
      const std::int64_t addmm =
          op(base, 2, t0 + 20, t0 + 50, "aten::addmm", kAten, kFwd, "Module.fc.Linear.forward.0", seq, 0);
      const std::int64_t relu = op(base, 0, t0 + 70, t0 + 80, "aten::relu", kAten, kFwd, nullptr, seq + 1, 0);
      op(base, 0, t0 + 200, t0 + 260, "autograd::engine::evaluate_function: AddmmBackward0", kNode, kBwd,
         "Module.fc.Linear.backward.0", seq, 1);
      const std::int64_t mm =
          op(base, 5, t0 + 210, t0 + 230, "aten::mm", kAten, kBwd, "Module.fc.Linear.backward.0", seq, 1);
      const std::int64_t sum =
          op(base, 5, t0 + 235, t0 + 250, "aten::sum", kAten, kBwd, "Module.fc.Linear.backward.0", seq, 1);
      op(base, 0, t0 + 300, t0 + 400, "Optimizer.step#SGD.step", kOptimizer, kOpt, nullptr, -1, 0);
      const std::int64_t add_w = op(base, 8, t0 + 310, t0 + 320, "aten::add_", kAten, kOpt, nullptr, seq + 2, 0);
      const std::int64_t add_b = op(base, 8, t0 + 330, t0 + 340, "aten::add_", kAten, kOpt, nullptr, seq + 2, 0);
      launch(addmm, t0 + 21, {{W, 1 + v}}, {{Wt, 2 + v}});
      launch(addmm, t0 + 22, {{X, 3 + v}, {Wt, 2 + v}, {B, 4 + v}}, {{Y, 5 + v}});
      launch(relu, t0 + 71, {{Y, 5 + v}}, {{R, 6 + v}});
      launch(mm, t0 + 211, {{G, 7 + v}, {X, 3 + v}}, {{dW, 8 + v}});
      launch(sum, t0 + 236, {{G, 7 + v}}, {{dB, 9 + v}});
      launch(add_w, t0 + 311, {{W, 1 + v}, {dW, 8 + v}}, {{W, 1.5 + v}});
      launch(add_b, t0 + 331, {{B, 4 + v}, {dB, 9 + v}}, {{B, 4.5 + v}});
    }
    w->add(ops);
    w->add(tasks);
    w->add(markers);
    w->finalize();
  }

  MsprobeExportResult run_export() {
    const auto reader = TraceReader::open(path("t.db"));
    if (const std::string problem = npuscope::analyzer::msprobe_dump_problem(*reader); !problem.empty()) {
      throw ExportError(problem);
    }
    return export_msprobe(npuscope::analyzer::msprobe_dumps(*reader), path("out"));
  }
  Json read_json(int step, const char* file) {
    std::ifstream in(path("out/step" + std::to_string(step) + "/rank0/" + file));
    return Json::parse(in);
  }
  // The Max (our stand-in for each buffer's identity) of each tensor of a list.
  static std::vector<double> maxes(const Json& list) {
    std::vector<double> out;
    for (const Json& t : list) out.push_back(t["Max"].get<double>());
    return out;
  }
};

TEST_F(MsprobeExportTest, ModuleForwardHasItsInputOutputAndParameters) {
  write_trace(true);
  const MsprobeExportResult r = run_export();
  const Json fc = read_json(0, "dump.json")["data"]["Module.fc.Linear.forward.0"];
  EXPECT_EQ(maxes(fc["input_args"]), (std::vector<double>{3}));  // X; the transposed weight is internal
  EXPECT_EQ(maxes(fc["output"]), (std::vector<double>{5}));      // Y
  ASSERT_EQ(fc["parameters"].size(), 2u);                        // W and B: the optimizer wrote them
  EXPECT_EQ(fc["parameters"]["0"]["Max"], 1);
  EXPECT_EQ(fc["parameters"]["1"]["Max"], 4);
  EXPECT_EQ(fc["output"][0]["dtype"], "torch.float32");
  EXPECT_EQ(fc["output"][0]["shape"], Json::array({2}));
  EXPECT_FALSE(fc["output"][0].contains("data_name"));  // statistics only
  EXPECT_EQ(r.dump_files.size(), 1u);
  EXPECT_EQ(r.module_entries, 2);  // forward and backward
}

TEST_F(MsprobeExportTest, ApiEntriesAreTheOutermostAtenOps) {
  write_trace(true);
  run_export();
  const Json data = read_json(0, "dump.json")["data"];
  EXPECT_FALSE(data.contains("Aten.addmm.0.forward"));  // inside aten::linear
  const Json linear = data["Aten.linear.0.forward"];
  EXPECT_EQ(maxes(linear["input_args"]), (std::vector<double>{1, 3, 4}));  // W, X, B in the order read
  EXPECT_EQ(maxes(linear["output"]), (std::vector<double>{5}));
  EXPECT_EQ(maxes(data["Aten.relu.0.forward"]["input_args"]), (std::vector<double>{5}));
  // The optimizer's two add_ calls, numbered in order.
  EXPECT_EQ(maxes(data["Aten.add_.0.forward"]["output"]), (std::vector<double>{1.5}));
  EXPECT_EQ(maxes(data["Aten.add_.1.forward"]["output"]), (std::vector<double>{4.5}));
}

TEST_F(MsprobeExportTest, BackwardEntriesHoldGradientsNotSavedTensors) {
  write_trace(true);
  run_export();
  const Json data = read_json(0, "dump.json")["data"];
  // The node AddmmBackward0 (sequence number 10) was made by aten::linear, whose number is 10.
  const Json linear = data["Aten.linear.0.backward"];
  EXPECT_EQ(maxes(linear["input"]), (std::vector<double>{7}));  // G; X is a tensor autograd saved
  EXPECT_EQ(maxes(linear["output"]), (std::vector<double>{8, 9}));
  const Json module = data["Module.fc.Linear.backward.0"];
  EXPECT_EQ(maxes(module["input"]), (std::vector<double>{7}));
  EXPECT_EQ(maxes(module["output"]), (std::vector<double>{8, 9}));
  EXPECT_FALSE(module.contains("input_args"));
}

TEST_F(MsprobeExportTest, ConstructNamesTheModuleEachEntryRanIn) {
  write_trace(true);
  run_export();
  const Json construct = read_json(0, "construct.json");
  EXPECT_EQ(construct["Aten.linear.0.forward"], "Module.fc.Linear.forward.0");
  EXPECT_EQ(construct["Aten.linear.0.backward"], "Module.fc.Linear.backward.0");
  EXPECT_TRUE(construct["Aten.relu.0.forward"].is_null());
  EXPECT_TRUE(construct["Module.fc.Linear.forward.0"].is_null());
}

TEST_F(MsprobeExportTest, EachStepHasItsOwnDumpWithCountsFromZero) {
  write_trace(true, 2);
  const MsprobeExportResult r = run_export();
  EXPECT_EQ(r.dump_files.size(), 2u);
  const Json step1 = read_json(1, "dump.json")["data"];
  EXPECT_EQ(maxes(step1["Module.fc.Linear.forward.0"]["input_args"]), (std::vector<double>{4}));  // X of step 1
  EXPECT_EQ(maxes(step1["Aten.linear.0.backward"]["input"]), (std::vector<double>{8}));
  EXPECT_FALSE(step1.contains("Aten.linear.1.forward"));
}

TEST_F(MsprobeExportTest, WithoutAddressesEveryReadIsAnInput) {
  write_trace(false);
  run_export();
  const Json fc = read_json(0, "dump.json")["data"]["Module.fc.Linear.forward.0"];
  EXPECT_EQ(maxes(fc["input_args"]), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(maxes(fc["output"]), (std::vector<double>{2, 5}));
  EXPECT_FALSE(fc.contains("parameters"));
}

TEST_F(MsprobeExportTest, DumpedDataBecomesNpyFilesNamedAfterTheirEntry) {
  {
    auto w = TraceWriter::create(path("t.db"));
    PytorchApiRow op;
    op.id = 1;
    op.name_id = w->intern("aten::relu");
    op.end_ns = 10;
    w->add(op);
    TaskRow t = sample_task(1, 0, 0, 1, 2, 3, 0);
    t.pytorch_api_id = 1;
    w->add(t);
    TensorRow out = sample_tensor(1, 1, 0, kF32, "2,2", 4, bytes_of(kTask2Out0), false);
    out.address = 0x10;
    w->add(out);
    w->finalize();
  }
  const MsprobeExportResult r = run_export();
  EXPECT_EQ(r.files, 1);
  const Json dump = read_json(0, "dump.json");
  EXPECT_EQ(dump["task"], "tensor");
  const Json t = dump["data"]["Aten.relu.0.forward"]["output"][0];
  EXPECT_EQ(t["data_name"], "Aten.relu.0.forward.output.0.npy");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dump["dump_data_dir"].get<std::string>()) /
                                      "Aten.relu.0.forward.output.0.npy"));
}

TEST_F(MsprobeExportTest, TracesItCannotExportAreErrorsThatSayWhatToDo) {
  write_sample_trace(path("t.db"));  // no PyTorch ops
  try {
    run_export();
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("has no PyTorch ops"), std::string::npos) << e.what();
  }
  {
    auto w = TraceWriter::create(path("t.db"), {.overwrite = true});
    PytorchApiRow op;
    op.id = 1;
    op.name_id = w->intern("aten::relu");
    w->add(op);
    w->finalize();
  }
  try {
    run_export();
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("--dump stats"), std::string::npos) << e.what();
  }
}

}  // namespace
