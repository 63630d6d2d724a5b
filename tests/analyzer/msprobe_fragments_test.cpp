// A trace's msprobe dump from its msprobe fragments (Note [msprobe dumps from a trace] in
// analyzer/msprobe_entries.h), on a hand-built trace of one Linear call: names, value slots, each
// tensor's statistics found by its address before or after the call, merged gradient fragments,
// construct, stacks, notes, the data loaded from the trace, and export --msprobe's layout.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "collector/export_test_util.h"
#include "npuscope/analyzer/msprobe_entries.h"
#include "npuscope/collector/export_msprobe.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope;
using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using Json = nlohmann::json;

namespace {

constexpr std::int64_t X = 0x100, W = 0x200, Y = 0x300, G = 0x400, dX = 0x500, dW = 0x600;

std::string tensor(std::int64_t address, const char* shape = "[2]") {
  return std::string(R"({"type":"torch.Tensor","dtype":"torch.float32","shape":)") + shape +
         R"(,"requires_grad":true,"address":)" + std::to_string(address) + "}";
}

class MsprobeFragmentsTest : public ExportTest {
 protected:
  void SetUp() override {
    ExportTest::SetUp();
    auto w = TraceWriter::create(path("t.db"));
    const auto op = [&](std::int64_t id, std::int64_t parent, std::int64_t start, std::int64_t end, const char* name,
                        HostOpKind kind, ModelPass pass, const char* module, const std::string& args,
                        const char* stack = nullptr) {
      PytorchApiRow r;
      r.id = id;
      r.parent_id = parent;
      r.start_ns = start;
      r.end_ns = end;
      r.name_id = w->intern(name);
      r.kind = static_cast<std::int32_t>(kind);
      r.pass = static_cast<std::int32_t>(pass);
      r.module_id = module ? w->intern(module) : 0;
      r.args_id = args.empty() ? 0 : w->intern(args);
      r.stack_id = stack ? w->intern(stack) : 0;
      w->add(r);
    };
    const auto row = [&](std::int64_t task, int role, int idx, std::int64_t address, double max) {
      TensorRow t =
          sample_tensor(task, role, idx, 0, "2", 2,
                        bytes_of(std::vector<float>{static_cast<float>(max), static_cast<float>(-max)}), false);
      t.max = max;
      t.min = -max;
      t.l2norm = max;
      t.address = address;
      w->add(t);
    };
    const auto task = [&](std::int64_t id, std::int64_t op_id) {
      TaskRow t = sample_task(id, 0, 0, id * 10, id * 10 + 5, id * 10 + 9, 0);
      t.name_id = w->intern("k");
      t.pytorch_api_id = op_id;
      w->add(t);
    };
    constexpr auto kApi = HostOpKind::kApi, kModule = HostOpKind::kModule, kAten = HostOpKind::kAtenOp;
    constexpr auto kFwd = ModelPass::kForward, kBwd = ModelPass::kBackward;
    const char* fc = "Module.fc.Linear.forward.0";
    op(1, 0, 0, 100, fc, kModule, kFwd, fc,
       R"({"input_args":[)" + tensor(X) + R"(],"input_kwargs":{},"output":[)" + tensor(Y) +
           R"(],"parameters":{"weight":)" + tensor(W) + "}}");
    op(2, 1, 10, 60, "Functional.linear.0.forward", kApi, kFwd, fc,
       R"({"input_args":[)" + tensor(X) + "," + tensor(W) + R"(,null,{"type":"int","value":1}],)" +
           R"("input_kwargs":{"alpha":{"type":"float","value":0.5}},"output":[)" + tensor(Y) + "]}",
       "File a.py, line 3, in forward, \n y = F.linear(x);\nFile a.py, line 9, in <module>, \n model(x)");
    op(3, 2, 20, 50, "aten::linear", kAten, kFwd, fc, "");
    op(4, 1, 70, 80, "Tensor.to.0.forward", kApi, kFwd, fc, "");  // risk_level FOCUS leaves it out
    op(5, 0, 200, 260, "autograd::engine::evaluate_function: AddmmBackward0", HostOpKind::kBackwardFunction, kBwd,
       "Module.fc.Linear.backward.0", "");
    op(6, 5, 270, 270, "Functional.linear.0.backward", kApi, kBwd, "Module.fc.Linear.backward.0",
       R"({"input":[)" + tensor(G) + "],\"output\":[" + tensor(dX) + "," + tensor(dW) + "]}");
    op(7, 0, 280, 280, "Module.fc.Linear.backward.0", kApi, kBwd, nullptr, R"({"input":[)" + tensor(G) + "]}");
    op(8, 0, 290, 290, "Module.fc.Linear.parameters_grad.0", kApi, kBwd, nullptr, R"({"weight":[)" + tensor(dW) + "]}");
    op(9, 0, 295, 295, "Module.fc.Linear.backward.0", kApi, kBwd, nullptr, R"({"output":[)" + tensor(dX) + "]}");
    op(10, 0, 296, 296, "Module.fc.Linear.parameters_grad.0", kApi, kBwd, nullptr,
       R"({"bias":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2],"requires_grad":false}]})");
    task(1, 3);  // linear: reads X, W, writes Y
    row(1, 0, 0, X, 3);
    row(1, 0, 1, W, 1);
    row(1, 1, 0, Y, 5);
    task(2, 5);  // the node: reads G, writes dX and dW
    row(2, 0, 0, G, 7);
    row(2, 1, 0, dX, 8);
    row(2, 1, 1, dW, 9);
    task(3, 99);  // after everything: overwrites X, which no fragment saw
    row(3, 1, 0, X, 42);
    w->finalize();
    reader_ = TraceReader::open(path("t.db"));
    const std::vector<MsprobeDump> dumps = analyzer::msprobe_dumps(*reader_);
    EXPECT_EQ(dumps.size(), 1u);
    if (!dumps.empty()) dump_ = dumps[0];
  }
  const DumpEntry& entry(const std::string& name) {
    for (const DumpEntry& e : dump_.entries) {
      if (e.name == name) return e;
    }
    static const DumpEntry none;
    ADD_FAILURE() << "no entry " << name;
    return none;
  }
  static std::vector<std::string> slots(const DumpEntry& e) {
    std::vector<std::string> out;
    for (const DumpValue& v : e.values) out.push_back(v.slot);
    return out;
  }
  std::unique_ptr<TraceReader> reader_;
  MsprobeDump dump_;
};

TEST_F(MsprobeFragmentsTest, EntriesAreNamedAndOrderedAsMsprobeWritesThem) {
  std::vector<std::string> names;
  for (const DumpEntry& e : dump_.entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Functional.linear.0.forward", "Module.fc.Linear.forward.0",
                                             "Functional.linear.0.backward", "Module.fc.Linear.backward.0",
                                             "Module.fc.Linear.parameters_grad.0"}));
  EXPECT_EQ(dump_.task, "tensor");
  EXPECT_EQ(dump_.level, "mix");
  ASSERT_EQ(dump_.notes.size(), 2u);
  EXPECT_NE(dump_.notes[0].find("1 API calls counted but not dumped"), std::string::npos) << dump_.notes[0];
  EXPECT_NE(dump_.notes[1].find("1 tensors without statistics"), std::string::npos) << dump_.notes[1];
}

TEST_F(MsprobeFragmentsTest, ValuesAreSlotsWithTheStatisticsOfTheirBuffers) {
  const DumpEntry& linear = entry("Functional.linear.0.forward");
  EXPECT_EQ(slots(linear),
            (std::vector<std::string>{"input.0", "input.1", "input.2", "input.3", "input.alpha", "output.0"}));
  EXPECT_EQ(linear.values[0].max, 3);  // X as the call read it, not as a later task overwrote it
  EXPECT_EQ(linear.values[1].max, 1);
  EXPECT_TRUE(linear.values[2].type.empty());
  EXPECT_EQ(linear.values[2].value, "null");
  EXPECT_EQ(linear.values[3].type, "int");
  EXPECT_EQ(linear.values[3].value, "1");
  EXPECT_EQ(linear.values[4].value, "0.5");
  EXPECT_EQ(linear.values[5].max, 5);
  EXPECT_EQ(linear.values[5].dtype, "torch.float32");
  EXPECT_EQ(linear.values[5].shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(linear.values[5].requires_grad, 1);
  const DumpEntry& backward = entry("Functional.linear.0.backward");
  EXPECT_EQ(slots(backward), (std::vector<std::string>{"input.0", "output.0", "output.1"}));
  EXPECT_EQ(backward.values[0].max, 7);
  EXPECT_EQ(backward.values[2].max, 9);
  EXPECT_EQ(slots(entry("Module.fc.Linear.forward.0")),
            (std::vector<std::string>{"input.0", "output.0", "parameters.weight"}));
}

TEST_F(MsprobeFragmentsTest, GradientFragmentsMergeIntoOneEntry) {
  const DumpEntry& module = entry("Module.fc.Linear.backward.0");
  EXPECT_EQ(slots(module), (std::vector<std::string>{"input.0", "output.0"}));
  EXPECT_EQ(module.values[1].max, 8);
  const DumpEntry& grads = entry("Module.fc.Linear.parameters_grad.0");
  EXPECT_EQ(slots(grads), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(grads.values[0].has_stats);
  EXPECT_FALSE(grads.values[1].has_stats);  // no address: a tensor of the CPU
}

TEST_F(MsprobeFragmentsTest, ConstructStackAndData) {
  EXPECT_EQ(entry("Functional.linear.0.forward").parent, "Module.fc.Linear.forward.0");
  EXPECT_EQ(entry("Functional.linear.0.backward").parent, "Module.fc.Linear.backward.0");
  EXPECT_EQ(entry("Module.fc.Linear.forward.0").parent, "");
  const DumpEntry& linear = entry("Functional.linear.0.forward");
  ASSERT_GE(linear.stack, 0);
  EXPECT_EQ(dump_.stacks.at(static_cast<std::size_t>(linear.stack)),
            (std::vector<std::string>{"File a.py, line 3, in forward, \n y = F.linear(x)",
                                      "File a.py, line 9, in <module>, \n model(x)"}));
  ASSERT_TRUE(dump_.load);
  const DumpTensorData data = dump_.loaded(linear, linear.values[5]);
  ASSERT_EQ(data.bytes.size(), 8u);
  EXPECT_EQ(reinterpret_cast<const float*>(data.bytes.data())[0], 5.0f);
  EXPECT_THROW(
      dump_.loaded(entry("Module.fc.Linear.parameters_grad.0"), entry("Module.fc.Linear.parameters_grad.0").values[1]),
      MsprobeDumpError);
}

TEST_F(MsprobeFragmentsTest, ExportWritesMsprobesLayout) {
  const MsprobeExportResult r = export_msprobe({dump_}, path("out"));
  EXPECT_EQ(r.api_entries, 2);
  EXPECT_EQ(r.module_entries, 3);
  std::ifstream in(path("out/step0/rank0/dump.json"));
  const Json data = Json::parse(in)["data"];
  const Json linear = data["Functional.linear.0.forward"];
  ASSERT_EQ(linear["input_args"].size(), 4u);
  EXPECT_EQ(linear["input_args"][0]["Max"], 3);
  EXPECT_TRUE(linear["input_args"][2].is_null());
  EXPECT_EQ(linear["input_args"][3], (Json{{"type", "int"}, {"value", 1}}));
  EXPECT_EQ(linear["input_kwargs"]["alpha"]["value"], 0.5);
  EXPECT_EQ(linear["output"][0]["data_name"], "Functional.linear.0.forward.output.0.npy");
  EXPECT_EQ(data["Module.fc.Linear.parameters_grad.0"]["weight"][0]["Max"], 9);
  EXPECT_EQ(data["Module.fc.Linear.forward.0"]["parameters"]["weight"]["Max"], 1);
  std::ifstream construct_in(path("out/step0/rank0/construct.json"));
  const Json construct = Json::parse(construct_in);
  EXPECT_EQ(construct["Functional.linear.0.backward"], "Module.fc.Linear.backward.0");
  EXPECT_FALSE(construct.contains("Module.fc.Linear.parameters_grad.0"));
  std::ifstream stack_in(path("out/step0/rank0/stack.json"));
  const Json stacks = Json::parse(stack_in);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks["0"][0], Json::array({"Functional.linear.0.forward"}));
}

}  // namespace

namespace {

// A damaged trace's fragments: arguments that are not JSON, or JSON of the wrong types, are counted
// in the dump's notes, never the end of the dump.
class MsprobeFragmentsBadInputTest : public ExportTest {
 protected:
  // A fragment of no length at time `id`, with these arguments.
  static void fragment(TraceWriter& w, std::int64_t id, const char* name, const std::string& args) {
    w.add(PytorchApiRow{.id = id,
                        .start_ns = id,
                        .end_ns = id,
                        .name_id = w.intern(name),
                        .kind = static_cast<std::int32_t>(HostOpKind::kApi),
                        .args_id = w.intern(args)});
  }
};

TEST_F(MsprobeFragmentsBadInputTest, UnreadableArgumentsAreCounted) {
  const std::string db = path("t.db");
  {
    auto w = TraceWriter::create(db);
    fragment(*w, 1, "Functional.relu.0.forward", "{not json");
    fragment(*w, 2, "Functional.relu.1.forward", R"({"input_args":[{"type":"torch.Tensor","shape":"x"}]})");
    fragment(*w, 3, "Functional.relu.2.forward", R"({"input_args":[{"type":"int","value":2}],"output":[]})");
    w->add(sample_tensor(1, 0, 0, 0, "2", 2, {}, true));
    w->finalize();
  }
  const auto reader = TraceReader::open(db);
  const std::vector<MsprobeDump> dumps = analyzer::msprobe_dumps(*reader);
  ASSERT_EQ(dumps.size(), 1u);
  ASSERT_FALSE(dumps[0].notes.empty());
  EXPECT_NE(dumps[0].notes.back().find("2 fragments with unreadable arguments"), std::string::npos)
      << dumps[0].notes.back();
  const DumpEntry& ok = dumps[0].entries.back();
  EXPECT_EQ(ok.name, "Functional.relu.2.forward");
  ASSERT_EQ(ok.values.size(), 1u);
  EXPECT_EQ(ok.values[0].value, "2");
}

}  // namespace

namespace {

// A forward call recomputed by activation checkpointing carries "is_recompute": true in its fragment
// (Note [msprobe recompute] in npuscope/_msprobe.py): the entry is marked, and export --msprobe writes
// the flag on it alone. A flag of another type reads as false.
TEST_F(MsprobeFragmentsBadInputTest, RecomputedForwardsAreMarked) {
  const std::string db = path("t.db");
  {
    auto w = TraceWriter::create(db);
    const std::string call = R"({"input_args":[{"type":"int","value":2}],"input_kwargs":{},"output":[])";
    fragment(*w, 1, "Functional.relu.0.forward", call + "}");
    fragment(*w, 2, "Functional.relu.1.forward", call + R"(,"is_recompute":true})");
    fragment(*w, 3, "Functional.relu.2.forward", call + R"(,"is_recompute":"yes"})");
    w->add(sample_tensor(1, 0, 0, 0, "2", 2, {}, true));
    w->finalize();
  }
  const auto reader = TraceReader::open(db);
  const std::vector<MsprobeDump> dumps = analyzer::msprobe_dumps(*reader);
  ASSERT_EQ(dumps.size(), 1u);
  ASSERT_EQ(dumps[0].entries.size(), 3u);
  EXPECT_FALSE(dumps[0].entries[0].is_recompute);
  EXPECT_TRUE(dumps[0].entries[1].is_recompute);
  EXPECT_FALSE(dumps[0].entries[2].is_recompute);
  EXPECT_EQ(dumps[0].entries[1].values.size(), 1u);  // the flag is no value
  export_msprobe(dumps, path("out"));
  std::ifstream in(path("out/step0/rank0/dump.json"));
  const Json data = Json::parse(in)["data"];
  EXPECT_FALSE(data["Functional.relu.0.forward"].contains("is_recompute"));
  EXPECT_EQ(data["Functional.relu.1.forward"]["is_recompute"], true);
  EXPECT_FALSE(data["Functional.relu.2.forward"].contains("is_recompute"));
}

}  // namespace

namespace {

// A gradient that is an expand of a smaller buffer (a sum's: stride 0 along the summed dimension) has
// the statistics of the buffer's row, not of an older row of the view's size at the same address, its
// norm scaled by the repetition; its data is the buffer gathered through the strides.
TEST_F(MsprobeFragmentsBadInputTest, ExpandedViewsHaveTheirBuffersStatistics) {
  constexpr std::int64_t A = 0x700;
  const std::string db = path("t.db");
  {
    auto w = TraceWriter::create(db);
    fragment(*w, 1, "Tensor.sum.0.backward",
             R"({"input":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2],"address":1792}],)"
             R"("output":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[3,2],)"
             R"("address":1792,"stride":[0,1]}]})");
    TensorRow stale = sample_tensor(1, 1, 0, 0, "3,2", 6, bytes_of(std::vector<float>(6, 9.0f)), false);
    stale.max = 9;
    stale.address = A;
    w->add(stale);
    TensorRow grad = sample_tensor(2, 1, 0, 0, "2", 2, bytes_of(std::vector<float>{1, -2}), false);
    grad.max = 1;
    grad.min = -2;
    grad.mean = -0.5;
    grad.l2norm = std::sqrt(5.0);
    grad.address = A;
    w->add(grad);
    w->finalize();
  }
  const auto reader = TraceReader::open(db);
  const std::vector<MsprobeDump> dumps = analyzer::msprobe_dumps(*reader);
  ASSERT_EQ(dumps.size(), 1u);
  ASSERT_EQ(dumps[0].entries.size(), 1u);
  const DumpEntry& e = dumps[0].entries[0];
  ASSERT_EQ(e.values.size(), 2u);
  EXPECT_EQ(e.values[0].max, 1);
  const DumpValue& expanded = e.values[1];
  EXPECT_EQ(expanded.slot, "output.0");
  EXPECT_EQ(expanded.max, 1);
  EXPECT_EQ(expanded.min, -2);
  EXPECT_EQ(expanded.mean, -0.5);
  EXPECT_NEAR(expanded.norm, std::sqrt(15.0), 1e-12);
  ASSERT_TRUE(dumps[0].load);
  const DumpTensorData data = dumps[0].loaded(e, expanded);
  ASSERT_EQ(data.bytes.size(), 24u);
  const auto* f = reinterpret_cast<const float*>(data.bytes.data());
  EXPECT_EQ(std::vector<float>(f, f + 6), (std::vector<float>{1, -2, 1, -2, 1, -2}));
}

}  // namespace
