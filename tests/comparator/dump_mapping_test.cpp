// --mapping in dump comparisons (Note [Dump mapping files]): msprobe's data_mapping (value to value,
// API and module forms) and api_mapping (an API renamed, its values paired by index lists), the
// name map forms beside them, and the errors of files of no known form, each naming its line.
#include "npuscope/comparator/dump_mapping.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dump_test_builders.h"
#include "npuscope/comparator/compare_report.h"

namespace npuscope::comparator {
namespace {

using namespace dump_test;

class DumpMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_dump_mapping_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string file(const std::string& text) {
    const std::string path = (dir_ / "mapping.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  // The NameMapError message of loading `text`, or "" when it loads.
  std::string error_of(const std::string& text) {
    try {
      load_dump_mapping(file(text));
    } catch (const analyzer::NameMapError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

const DumpValue* bench_of(const DumpCompareResult& r, const std::string& entry, const std::string& slot) {
  return row_named(r, entry, slot).bench;
}

TEST_F(DumpMappingTest, DataMappingPairsTwoValuesAndTheirEntries) {
  const MsprobeDump npu =
      dump("npu", {entry("Functional.x.0.forward", {same("input.0"), same("input.1"), same("output.0")}),
                   entry("Module.a.A.forward.0", {same("input.0"), same("output.0")})});
  DumpValue as_int = same("input.1");
  as_int.dtype = "torch.int64";  // data_mapping pairs values whatever their dtypes, as msprobe
  const MsprobeDump bench = dump("bench", {entry("Functional.y.0.forward", {same("input.0"), as_int, same("output.0")}),
                                           entry("Module.b.B.forward.0", {same("input.0"), same("output.0")})});
  DumpCompareOptions options;
  options.mapping =
      load_dump_mapping(file("# API\n"
                             "Functional.x.0.forward.input.0: Functional.y.0.forward.input.1\n"
                             "Functional.x.0.forward.output.0: Functional.y.0.forward.output.0\n"
                             "# Module\n"
                             "Module.a.A.forward.0.output.0: Module.b.B.forward.0.output.0\n"));
  EXPECT_EQ(options.mapping.names.at("Functional.x.0.forward"), "Functional.y.0.forward");
  const DumpCompareResult r = compare_dumps(npu, bench, options);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].match, PairingStage::kNameMap);
  EXPECT_EQ(bench_of(r, "Functional.x.0.forward", "input.0")->slot, "input.1");
  EXPECT_EQ(bench_of(r, "Functional.x.0.forward", "output.0")->slot, "output.0");
  // A value no line names pairs nothing: msprobe looks for its own name, which the bench entry lacks.
  EXPECT_EQ(bench_of(r, "Functional.x.0.forward", "input.1"), nullptr);
  EXPECT_EQ(bench_of(r, "Module.a.A.forward.0", "input.0"), nullptr);
  EXPECT_EQ(bench_of(r, "Module.a.A.forward.0", "output.0")->slot, "output.0");
  EXPECT_EQ(cell(compare_report(r), 0, "Bench Name"), "Functional.y.0.forward.input.1");
}

TEST_F(DumpMappingTest, DataMappingWithinOneEntryLeavesTheOtherValuesByName) {
  const MsprobeDump npu =
      dump("npu", {entry("Torch.cat.0.forward", {same("input.0"), same("input.1"), same("output.0")})});
  const MsprobeDump bench =
      dump("bench", {entry("Torch.cat.0.forward", {same("input.0"), same("input.1"), same("output.0")})});
  DumpCompareOptions options;
  options.mapping =
      load_dump_mapping(file("Torch.cat.0.forward.input.0: Torch.cat.0.forward.input.1\n"
                             "Torch.cat.0.forward.input.1: Torch.cat.0.forward.input.0\n"));
  const DumpCompareResult r = compare_dumps(npu, bench, options);
  EXPECT_EQ(bench_of(r, "Torch.cat.0.forward", "input.0")->slot, "input.1");
  EXPECT_EQ(bench_of(r, "Torch.cat.0.forward", "input.1")->slot, "input.0");
  EXPECT_EQ(bench_of(r, "Torch.cat.0.forward", "output.0")->slot, "output.0");
}

TEST_F(DumpMappingTest, ApiMappingRenamesTheApiAndPairsByIndexLists) {
  MsprobeDump npu = dump("npu", {entry("Functional.abs.0.forward", {same("input.0"), same("input.1"), same("input.2"),
                                                                    same("output.0"), same("output.1")})});
  npu.framework = "mindspore";
  const MsprobeDump bench =
      dump("bench", {entry("Torch.abs.0.forward", {same("input.0"), same("input.1"), same("output.0")})});
  DumpCompareOptions options;
  options.mapping =
      load_dump_mapping(file("- ms_api: Functional.abs\n"
                             "  pt_api: Torch.abs\n"
                             "  ms_args: [0, 2]\n"
                             "  pt_args: [0, 1]\n"
                             "  ms_outputs:\n"
                             "  - 1\n"
                             "  pt_outputs:\n"
                             "  - 0\n"));
  const DumpCompareResult r = compare_dumps(npu, bench, options);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].match, PairingStage::kNameMap);
  EXPECT_EQ(bench_of(r, "Functional.abs.0.forward", "input.0")->slot, "input.0");
  EXPECT_EQ(bench_of(r, "Functional.abs.0.forward", "input.2")->slot, "input.1");
  EXPECT_EQ(bench_of(r, "Functional.abs.0.forward", "output.1")->slot, "output.0");
  // Values the lists do not name pair nothing (msprobe abandons them) and are listed.
  EXPECT_EQ(bench_of(r, "Functional.abs.0.forward", "input.1"), nullptr);
  EXPECT_EQ(bench_of(r, "Functional.abs.0.forward", "output.0"), nullptr);
  EXPECT_EQ(r.unmatched_npu.size(), 2u);
  // msprobe's docs write one item as a map: the same.
  const DumpMapping one =
      load_dump_mapping(file("ms_api: Functional.abs\npt_api: Torch.abs\nms_args:\n- 0\npt_args:\n- 1\n"));
  ASSERT_EQ(one.apis.count("Functional.abs"), 1u);
  EXPECT_EQ(one.apis.at("Functional.abs").slots.at(0), std::make_pair(std::string("input.0"), std::string("input.1")));
}

TEST_F(DumpMappingTest, NameMapFormsStillRead) {
  const DumpMapping m = load_dump_mapping(file("Torch.matmul: Tensor.matmul\nhead.Linear: fc.Linear\n"));
  EXPECT_EQ(m.names.size(), 2u);
  EXPECT_TRUE(m.data.empty());
  const DumpMapping list = load_dump_mapping(file("- npu: Torch.matmul\n  bench: Tensor.matmul\n"));
  EXPECT_EQ(list.names.at("Torch.matmul"), "Tensor.matmul");
}

TEST_F(DumpMappingTest, FilesOfNoKnownFormAreErrorsNamingTheLine) {
  const auto expect = [&](const std::string& text, const std::string& what) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find((dir_ / "mapping.yaml").string()), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  expect("Torch.add: Tensor.add\nFunctional.x.0.forward.input.0: Functional.y.0.forward\n",
         "line 2: 'Functional.x.0.forward.input.0' names a value");
  expect("- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_argz: [0]\n", "line 3: unknown key \"ms_argz\"");
  expect("- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_args: [0, 1]\n  pt_args: [0]\n",
         "ms_args has 2 items and pt_args 1");
  expect("- ms_api: Functional.abs\n  ms_args: [0]\n  pt_args: [0]\n", "line 1: no \"pt_api\" key");
  expect("- ms_api: Functional.abs\n  pt_api: Torch.abs\n- ms_api: Functional.abs\n  pt_api: Torch.neg\n",
         "line 3: API 'Functional.abs' is mapped twice");
  expect("- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_args: 0\n  pt_args: [0]\n", "ms_args must be a list");
  expect("- ms_api: Functional.abs\n  pt_api: Torch.abs\n- 3\n", "line 3: an api_mapping item must be a map");
  expect("[1, 2", "not a YAML or JSON mapping file");
  expect("- just a string\n", "expected a map");
}

}  // namespace
}  // namespace npuscope::comparator
