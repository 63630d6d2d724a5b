// Reading msprobe dumps (importer/msprobe_dump_reader.h): the real ResNet-50 dump of shared/realdata
// named value by value as msprobe's own compare names it (tests/data/msprobe), hand-written dumps
// of every layout and version (step/rank trees, proc folders, export --msprobe, older backward keys
// and stack.json, md5, tensor mode with .npy files, NaN and Infinity), and bad input.
#include "npuscope/importer/msprobe_dump_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../realdata_util.h"
#include "npuscope/importer/import.h"
#include "npuscope/runtime_hooks/npy_format.h"
#include "test_files.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::DumpEntry;
using collector::DumpValue;
using collector::MsprobeDump;
using collector::MsprobeDumpError;

const DumpEntry* find_entry(const MsprobeDump& d, const std::string& name) {
  for (const DumpEntry& e : d.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string slots(const DumpEntry& e) {
  std::string s;
  for (const DumpValue& v : e.values) s += (s.empty() ? "" : " ") + v.slot;
  return s;
}

std::string all_notes(const MsprobeDump& d) {
  std::string s;
  for (const std::string& n : d.notes) s += n + "\n";
  return s;
}

TEST(MsprobeRealDump, ResNet50EveryValueNamedAsMsprobesCompareNamesIt) {
  NPUSCOPE_REALDATA_OR_SKIP(dir, "msprobe/resnet50_gpu/step0/proc2016");
  ASSERT_TRUE(is_msprobe_dump(dir));
  const auto dumps = read_msprobe_dumps(dir);
  ASSERT_EQ(dumps.size(), 1u);
  const MsprobeDump& d = dumps[0];
  EXPECT_EQ(d.task, "statistics");
  EXPECT_EQ(d.level, "mix");
  EXPECT_EQ(d.framework, "pytorch");
  EXPECT_EQ(d.step, 0);
  EXPECT_EQ(d.rank, -1);  // proc2016: no rank known
  EXPECT_FALSE(d.load) << "a statistics dump has no tensor data";
  // construct.json names nodes that dumped nothing (Tensor.to, msprobe's redundant APIs; repeated
  // backward module calls); parents outside dump.json are kept as construct.json says them.
  EXPECT_EQ(all_notes(d), "210 construct.json nodes that are no entry of dump.json\n");
  ASSERT_EQ(d.entries.size(), 760u);
  std::map<std::string, int> prefixes;
  std::size_t values = 0;
  for (const DumpEntry& e : d.entries) {
    ++prefixes[e.name.substr(0, e.name.find('.'))];
    values += e.values.size();
  }
  EXPECT_EQ(prefixes, (std::map<std::string, int>{{"Functional", 318}, {"Module", 373}, {"Tensor", 69}}));
  EXPECT_EQ(values, 2822u);  // msprobe's compare: 2822 rows

  // Every entry's slots, against msprobe's read_op run on the same file (tests/data/msprobe).
  std::ifstream golden(fs::path(NPUSCOPE_SOURCE_DIR) / "tests/data/msprobe/resnet50_gpu_slots.txt");
  ASSERT_TRUE(golden) << "tests/data/msprobe/resnet50_gpu_slots.txt";
  std::string line;
  std::size_t i = 0;
  while (std::getline(golden, line)) {
    ASSERT_LT(i, d.entries.size());
    const std::size_t tab = line.find('\t');
    EXPECT_EQ(d.entries[i].name, line.substr(0, tab));
    EXPECT_EQ(slots(d.entries[i]), line.substr(tab + 1)) << d.entries[i].name;
    ++i;
  }
  EXPECT_EQ(i, d.entries.size());

  const DumpEntry* conv = find_entry(d, "Functional.conv2d.0.forward");
  ASSERT_NE(conv, nullptr);
  const DumpValue& x = conv->values[0];
  EXPECT_TRUE(x.is_tensor);
  EXPECT_EQ(x.type, "torch.Tensor");
  EXPECT_EQ(x.dtype, "torch.float32");
  EXPECT_EQ(x.dtype_id, static_cast<std::int32_t>(DType::kF32));
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{32, 3, 224, 224}));
  EXPECT_TRUE(x.has_stats);
  EXPECT_EQ(x.max, 1.0);
  EXPECT_EQ(x.min, 0.0);
  EXPECT_DOUBLE_EQ(x.mean, 0.4993983507156372);
  EXPECT_DOUBLE_EQ(x.norm, 1267.74462890625);
  EXPECT_EQ(x.requires_grad, 0);
  EXPECT_FALSE(conv->values[2].is_tensor);  // the bias: None, a row of its own
  EXPECT_EQ(conv->values[2].value, "null");
  EXPECT_EQ(conv->values[3].type, "int");  // stride (2, 2): input.3.0
  EXPECT_EQ(conv->values[3].value, "2");
  EXPECT_EQ(conv->parent, "Module.conv1.Conv2d.forward.0");
  ASSERT_GE(conv->stack, 0);
  EXPECT_NE(d.stacks[conv->stack].front().find("api_registry.py"), std::string::npos);
  EXPECT_NE(d.stacks[conv->stack].back().find("precision_sample.py, line 32"), std::string::npos);
  EXPECT_EQ(d.stacks.size(), 130u);

  const DumpEntry* grads = find_entry(d, "Module.fc.Linear.parameters_grad.0");
  ASSERT_NE(grads, nullptr);
  EXPECT_EQ(slots(*grads), "bias weight");
  EXPECT_EQ(grads->values[1].shape, (std::vector<std::int64_t>{1000, 2048}));
  const DumpEntry* module = find_entry(d, "Module.layer1.0.Bottleneck.forward.0");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->parent, "Module.layer1.Sequential.forward.0");
  std::size_t with_stack = 0, with_parent = 0, params_grad = 0;
  for (const DumpEntry& e : d.entries) {
    with_stack += e.stack >= 0;
    with_parent += !e.parent.empty();
    params_grad += e.name.find(".parameters_grad.") != std::string::npos;
  }
  EXPECT_EQ(params_grad, 107u);  // one per conv, bn and fc module
  EXPECT_GT(with_stack, 380u);
  EXPECT_GT(with_parent, 600u);
}

// Hand-written dumps in a temporary folder.
class MsprobeDumpTest : public ::testing::Test, protected test::TestFiles {
 protected:
  std::string put(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    return write(rel, text);
  }
  std::string path(const std::string& rel = "") const { return (dir_ / rel).string(); }
  // A .npy file of `dtype` and `shape` holding `bytes`.
  void put_npy(const std::string& rel, std::string_view descr, const std::vector<std::int64_t>& shape,
               const std::string& bytes) {
    put(rel, npy::header(descr, shape) + bytes);
  }
  MsprobeDump read_one(const std::string& rel = "") {
    auto dumps = read_msprobe_dumps(path(rel));
    EXPECT_EQ(dumps.size(), 1u);
    return std::move(dumps.at(0));
  }
};

constexpr const char* kTensor =
    R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 2.0, "Min": 1.0, "Mean": 1.5, "Norm": 2.2, "requires_grad": true})";

std::string dump_json(const std::string& data, const std::string& task = "statistics") {
  return R"({"task": ")" + task + R"(", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)" +
         data + "}}";
}

TEST_F(MsprobeDumpTest, ValuesOfEveryKindNamedAsMsprobesCompare) {
  const std::string t = kTensor;
  put("dump.json", dump_json(R"("Tensor.__getitem__.0.forward": {"input_args": [)" + t +
                             R"(, [{"type": "slice", "value": [0, null, 2]}, {"type": "ellipsis", "value": "..."}]],
        "input_kwargs": {"dim": {"type": "int", "value": -1}, "dtype": {"type": "torch.dtype", "value": "torch.float32"},
                         "size": {"type": "torch.Size", "value": [2, 3]}, "nested": {"a": [null, )" +
                             t + R"(]}, "empty": [], "none": null},
        "output": )" + t + R"(, "is_recompute": true},
      "Distributed.batch_isend_irecv.0.forward": {"input_args": [[{"class_type": "torch.distributed.P2POp", "op": "isend",
        "peer": 1, "tag": 0, "tensor": )" +
                             t + R"(}]], "output": [null]}
      )"));
  const MsprobeDump d = read_one();
  ASSERT_EQ(d.entries.size(), 2u);
  const DumpEntry& e = d.entries[0];
  EXPECT_TRUE(e.is_recompute);
  EXPECT_EQ(slots(e),
            "input.0 input.1.0 input.1.1 input.dim input.dtype input.size input.nested.a.0 input.nested.a.1 "
            "input.none output");
  EXPECT_EQ(e.values[1].value, "[0,null,2]");
  EXPECT_EQ(e.values[2].value, "\"...\"");
  EXPECT_EQ(e.values[4].value, "\"torch.float32\"");
  EXPECT_EQ(e.values[5].value, "[2,3]");
  EXPECT_TRUE(e.values[7].is_tensor);
  EXPECT_EQ(e.values[7].requires_grad, 1);
  EXPECT_EQ(e.values[8].value, "null");
  EXPECT_EQ(slots(d.entries[1]), "input.0.0 output.0");
  EXPECT_TRUE(d.entries[1].values[0].is_tensor);  // the P2POp's tensor
  EXPECT_NE(all_notes(d).find("P2POp"), std::string::npos) << all_notes(d);
}

TEST_F(MsprobeDumpTest, OlderDumpsBackwardKeysStackJsonAndNoFramework) {
  const std::string t = kTensor;
  put("rank0/dump.json", R"({"task": "statistics", "level": "L1", "dump_data_dir": null, "data": {
      "Functional.linear.0.backward": {"grad_input": [)" +
                             t + "," + t + R"(, null], "grad_output": [)" + t + R"(]},
      "Module.fc.Linear.parameters_grad": {"weight": [)" +
                             t + R"(]}}})");
  put("rank0/stack.json",
      R"j({"Functional.linear.0.backward": ["File a.py, line 1, in f, \n x = g()", "File b.py, line 2, in <module>, \n f()"]})j");
  const MsprobeDump d = read_one();
  EXPECT_EQ(d.framework, "pytorch");  // from its dtypes
  EXPECT_EQ(d.rank, 0);
  EXPECT_EQ(d.step, -1);
  // grad_output (the gradients flowing in) is read as input, grad_input as output, in that order.
  EXPECT_EQ(slots(d.entries[0]), "input.0 output.0 output.1 output.2");
  EXPECT_EQ(slots(d.entries[1]), "weight");
  ASSERT_EQ(d.entries[0].stack, 0);
  EXPECT_EQ(d.stacks[0].size(), 2u);
  EXPECT_EQ(d.entries[1].stack, -1);
  const std::string notes = all_notes(d);
  EXPECT_NE(notes.find("without \"framework\""), std::string::npos) << notes;
  EXPECT_NE(notes.find("without construct.json"), std::string::npos) << notes;
}

TEST_F(MsprobeDumpTest, Md5DumpAndNanInfinityStatistics) {
  put("dump.json", dump_json(R"("Torch.matmul.0.forward": {"input_args": [
      {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [], "Max": NaN, "Min": -Infinity, "Mean": Infinity,
       "Norm": null, "md5": "0a1b2c3d"},
      {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [3], "Max": true, "Min": false, "Mean": "inf",
       "Norm": "-inf", "md5": "ffffffff"},
      {"type": "torch.Tensor", "dtype": "torch.int64", "shape": [1], "Max": "nan", "Min": null, "Mean": null, "Norm": null},
      {"type": "float", "value": NaN}, {"type": "str", "value": "NaN in a string: NaN"}],
      "output": [{"type": "torch.Tensor", "dtype": "torch.complex64", "shape": [1], "Max": null, "Min": null,
                  "Mean": null, "Norm": null}]})"));
  const MsprobeDump d = read_one();
  EXPECT_EQ(d.task, "md5");
  const auto& v = d.entries.at(0).values;
  ASSERT_EQ(v.size(), 6u);
  EXPECT_TRUE(v[0].has_stats);
  EXPECT_TRUE(std::isnan(v[0].max));
  EXPECT_EQ(v[0].min, -INFINITY);
  EXPECT_EQ(v[0].mean, INFINITY);
  EXPECT_TRUE(std::isnan(v[0].norm));
  // A null statistic is no NaN one: stats_present says which the file holds.
  EXPECT_EQ(v[0].stats_present, DumpValue::kHasMax | DumpValue::kHasMin | DumpValue::kHasMean);
  EXPECT_TRUE(v[0].has_stat(DumpValue::kHasMax));
  EXPECT_FALSE(v[0].has_stat(DumpValue::kHasNorm));
  EXPECT_EQ(v[0].md5, "0a1b2c3d");
  EXPECT_EQ(v[0].dtype_id, static_cast<std::int32_t>(DType::kBF16));
  EXPECT_EQ(v[1].max, 1.0);
  EXPECT_EQ(v[1].min, 0.0);
  EXPECT_EQ(v[1].mean, INFINITY);
  EXPECT_EQ(v[1].norm, -INFINITY);
  EXPECT_TRUE(v[2].has_stats);
  EXPECT_TRUE(std::isnan(v[2].max));
  EXPECT_EQ(v[2].stats_present, DumpValue::kHasMax);
  EXPECT_EQ(v[1].stats_present, DumpValue::kHasAllStats);
  EXPECT_EQ(v[3].value, "NaN");
  EXPECT_EQ(v[4].value, "\"NaN in a string: NaN\"");
  EXPECT_FALSE(v[5].has_stats);
  EXPECT_EQ(v[5].stats_present, 0);
  EXPECT_EQ(v[5].dtype_id, -1);
  EXPECT_NE(all_notes(d).find("dtype npuscope lacks (torch.complex64)"), std::string::npos) << all_notes(d);
}

TEST_F(MsprobeDumpTest, StepAndRankTreeOrderedByStepThenRank) {
  const std::string one = dump_json(R"("Functional.relu.0.forward": {"input_args": [], "output": []})");
  for (const char* rel : {"dump/step1/rank0/dump.json", "dump/step0/rank10/dump.json", "dump/step0/rank2/dump.json",
                          "dump/step10/rank0/dump.json"}) {
    put(rel, one);
  }
  put("dump/notes.txt", "not a dump folder");
  const auto dumps = read_msprobe_dumps(path("dump"));
  ASSERT_EQ(dumps.size(), 4u);
  std::vector<std::pair<std::int64_t, std::int64_t>> order;
  for (const MsprobeDump& d : dumps) order.emplace_back(d.step, d.rank);
  EXPECT_EQ(order, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 2}, {0, 10}, {1, 0}, {10, 0}}));
  EXPECT_EQ(dumps[0].path, path("dump/step0/rank2"));
  EXPECT_EQ(read_msprobe_dumps(path("dump/step0")).size(), 2u);  // a step folder: its ranks
  EXPECT_EQ(read_msprobe_dumps(path("dump/step0/rank2/dump.json")).at(0).rank, 2);
  EXPECT_TRUE(is_msprobe_dump(path("dump")));
  EXPECT_TRUE(is_msprobe_dump(path("dump/step1/rank0/dump.json")));
  EXPECT_FALSE(is_msprobe_dump(path("dump/notes.txt")));
  put("proc/proc77/dump.json", one);
  EXPECT_EQ(read_msprobe_dumps(path("proc")).at(0).rank, -1);
}

// What `npuscope export --msprobe DIR` writes (collector/src/export_msprobe.cpp): DIR/step{S}/rank0/
// with dump_data_dir absolute, .npy files under dump_tensor_data/, nan_count beside the statistics.
TEST_F(MsprobeDumpTest, ExportMsprobeFolderWithNpyTensors) {
  const std::string data_dir = path("out/step3/rank0/dump_tensor_data");
  put("out/step3/rank0/dump.json", R"({"task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": ")" +
                                       data_dir +
                                       R"(", "data": {
      "Aten.add.0.forward": {"input_args": [
         {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": 4.0, "Min": 1.0, "Mean": 2.5, "Norm": 5.47,
          "data_name": "Aten.add.0.forward.input.0.npy"},
         {"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [2], "Max": null, "Min": null, "Mean": null, "Norm": null,
          "nan_count": 1, "data_name": "Aten.add.0.forward.input.1.npy"}],
        "input_kwargs": {},
        "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": 4.0, "Min": 1.0, "Mean": 2.5,
                    "Norm": 5.47, "data_name": "Aten.add.0.forward.output.0.npy"}]}}})");
  put("out/step3/rank0/construct.json", R"({"Aten.add.0.forward": null})");
  const float f[4] = {1, 2, 3, 4};
  const std::string floats(reinterpret_cast<const char*>(f), sizeof f);
  put_npy("out/step3/rank0/dump_tensor_data/Aten.add.0.forward.input.0.npy", "<f4", {2, 2}, floats);
  put_npy("out/step3/rank0/dump_tensor_data/Aten.add.0.forward.input.1.npy", "<f4", {2}, floats.substr(0, 8));
  put_npy("out/step3/rank0/dump_tensor_data/Aten.add.0.forward.output.0.npy", "<f2", {2, 2}, floats.substr(0, 8));
  ASSERT_TRUE(is_msprobe_dump(path("out")));
  const MsprobeDump d = read_one("out");
  EXPECT_EQ(d.task, "tensor");
  EXPECT_EQ(d.step, 3);
  EXPECT_EQ(d.rank, 0);
  ASSERT_TRUE(d.load);
  const DumpEntry& e = d.entries.at(0);
  EXPECT_EQ(slots(e), "input.0 input.1 output.0");
  const collector::DumpTensorData x = d.loaded(e, e.values[0]);
  EXPECT_EQ(x.dtype_id, static_cast<std::int32_t>(DType::kF32));
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(x.numel, 4);
  ASSERT_EQ(x.bytes.size(), 16u);
  EXPECT_EQ(std::memcmp(x.bytes.data(), f, 16), 0);
  // bf16 in a .npy is f32 (numpy has no bf16): accepted, the data f32.
  EXPECT_EQ(d.loaded(e, e.values[1]).dtype_id, static_cast<std::int32_t>(DType::kF32));
  try {
    d.loaded(e, e.values[2]);
    ADD_FAILURE() << "an f16 file for an f32 tensor was accepted";
  } catch (const MsprobeDumpError& error) {
    const std::string m = error.what();
    EXPECT_NE(m.find("entry 'Aten.add.0.forward', value 'output.0'"), std::string::npos) << m;
    EXPECT_NE(m.find("Aten.add.0.forward.output.0.npy' holds f16 data, dump.json says torch.float32"),
              std::string::npos)
        << m;
  }
  EXPECT_NE(all_notes(d).find("tensor keys not read ('nan_count')"), std::string::npos) << all_notes(d);
  EXPECT_NE(all_notes(d).find("without stack.json"), std::string::npos) << all_notes(d);
}

TEST_F(MsprobeDumpTest, TensorFilesMissingMismatchedOrNamedAfterTheirFile) {
  put("d/dump.json", dump_json(R"("Functional.linear.0.forward": {"input_args": [
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "Functional.linear.0.forward.input.0.npy"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "Functional.linear.0.forward.input.1.npy"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "Functional.linear.0.forward.input.2.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "../../etc/passwd"}],
      "input_kwargs": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3],
                                  "data_name": "Functional.linear.0.forward.kwargs.weight.pt"}}})",
                               "tensor"));
  const float f[2] = {1, 2};
  put_npy("d/dump_tensor_data/Functional.linear.0.forward.input.1.npy", "<f4", {2},
          std::string(reinterpret_cast<const char*>(f), sizeof f));
  const MsprobeDump d = read_one("d");
  const DumpEntry& e = d.entries.at(0);
  // msprobe's compare names a value with a file after the file: a keyword tensor is "kwargs.weight".
  EXPECT_EQ(slots(e), "input.0 input.1 input.2 input.3 kwargs.weight");
  EXPECT_NE(all_notes(d).find("data_name does not start with their entry's name"), std::string::npos);
  const auto refused = [&](std::size_t i, const std::string& what) {
    try {
      d.loaded(e, e.values[i]);
      ADD_FAILURE() << "value " << i << " loaded; expected: " << what;
    } catch (const MsprobeDumpError& error) {
      const std::string m = error.what();
      EXPECT_NE(m.find("entry 'Functional.linear.0.forward', value '" + e.values[i].slot + "'"), std::string::npos)
          << m;
      EXPECT_NE(m.find(what), std::string::npos) << m;
    }
  };
  refused(0, "its file 'Functional.linear.0.forward.input.0.npy' is in neither " + path("d/dump_tensor_data"));
  refused(1, "holds shape [2], dump.json says [3]");
  refused(3, "is not a file name");
}

// PyTorch's tensor mode: .pt files (torch.save), read by read_torch_pt; a saved view comes back in
// C order. The files are torch 1.13's (tests/data/msprobe/PROVENANCE.md).
TEST_F(MsprobeDumpTest, PtFilesOfPytorchsTensorMode) {
  put("d/dump.json", dump_json(R"("Functional.relu.0.forward": {"input_args": [
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "Functional.relu.0.forward.input.0.pt"}],
      "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3, 2],
                  "data_name": "Functional.relu.0.forward.output.0.pt"},
                 {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [3],
                  "data_name": "Functional.relu.0.forward.input.0.pt"}]})",
                               "tensor"));
  fs::create_directories(path("d/dump_tensor_data"));
  for (const char* name : {"Functional.relu.0.forward.input.0.pt", "Functional.relu.0.forward.output.0.pt"}) {
    fs::copy_file(fs::path(NPUSCOPE_SOURCE_DIR) / "tests/data/msprobe" / name,
                  path(std::string("d/dump_tensor_data/") + name));
  }
  const MsprobeDump d = read_one("d");
  const DumpEntry& e = d.entries.at(0);
  const auto floats = [](const collector::DumpTensorData& t) {
    std::vector<float> v(static_cast<std::size_t>(t.numel));
    std::memcpy(v.data(), t.bytes.data(), v.size() * 4);
    return v;
  };
  EXPECT_EQ(floats(d.loaded(e, e.values[0])), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(floats(d.loaded(e, e.values[1])), (std::vector<float>{0, 3, 1, 4, 2, 5}));  // a transposed view
  EXPECT_THROW(d.loaded(e, e.values[2]), MsprobeDumpError);  // f32 data where dump.json says f16
}

TEST_F(MsprobeDumpTest, UnknownKeysAndUnreadableValuesCountedNeverDropped) {
  put("dump.json", R"({"task": "statistics", "level": "L1", "framework": "mindspore", "dump_data_dir": null, "extra": 1,
      "data": {"Mint.add.0.forward": {"input_args": [5, "x", {"type": "int", "value": 1}], "mystery": {}, "output": []},
               "Cell.broken.0.forward": 7}})");
  const MsprobeDump d = read_one();
  EXPECT_EQ(d.framework, "mindspore");  // read; the comparator decides what to do with it
  ASSERT_EQ(d.entries.size(), 1u);
  EXPECT_EQ(slots(d.entries[0]), "input.2");
  const std::string notes = all_notes(d);
  EXPECT_NE(notes.find("1 dump.json keys not read ('extra')"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 entry keys not read ('mystery')"), std::string::npos) << notes;
  EXPECT_NE(notes.find("2 values that are no value object"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 entries that are no JSON object"), std::string::npos) << notes;
}

// `what` must be in the ImportError read_msprobe_dumps(path) throws.
void expect_import_error(const std::string& path, const std::string& what) {
  try {
    read_msprobe_dumps(path);
    ADD_FAILURE() << "read; expected: " << what;
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST_F(MsprobeDumpTest, BadInputNamesTheFileAndTheByte) {
  const std::string good = dump_json(R"("Functional.relu.0.forward": {"input_args": [], "output": []})");
  const std::string cut = put("cut/dump.json", good.substr(0, 60));
  expect_import_error(path("cut"), "'" + cut + "': malformed JSON at byte 60");
  expect_import_error(path("cut"), "(the file ends there: cut short?)");
  put("bad/dump.json", R"({"task": "statistics", "data": {"a": [1 2]}})");
  expect_import_error(path("bad"), "malformed JSON at byte 40: Missing a comma");
  put("other/dump.json", R"({"traceEvents": []})");
  expect_import_error(path("other"), "is not an msprobe dump.json: it has no \"data\" object");
  put("arr/dump.json", "[1, 2]");
  expect_import_error(path("arr"), "is not an msprobe dump.json");
  put("good/dump.json", good);
  put("good/stack.json", "{\"0\": [[\"Functional.relu.0.forward\"], [\"f\"]");
  expect_import_error(path("good"), "stack.json': malformed JSON at byte");
  put("deep/dump.json", "{\"data\": " + std::string(200000, '['));
  expect_import_error(path("deep"), "malformed JSON");  // deeper than simdjson reads: an error, no crash
  expect_import_error(path("nowhere"), "no such file or folder");
  fs::create_directories(path("empty"));
  expect_import_error(path("empty"), "holds no msprobe dump");
  EXPECT_FALSE(is_msprobe_dump(path("empty")));
  EXPECT_FALSE(is_msprobe_dump(path("nowhere")));
}

}  // namespace
}  // namespace npuscope::importer
