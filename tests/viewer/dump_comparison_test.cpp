// The Compare panel's dump comparison without a display (npuscope/viewer/dump_comparison.h): the
// real ResNet-50 msprobe dump of shared/realdata against a copy with a planted change in one entry's
// statistics (the entry first failing, its values, stack and module chain), and the --compare
// flags. The background job (trees, bad dumps) is dump_compare_xvfb_test's.
#include "npuscope/viewer/dump_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "cli/profile_dir_test_util.h"
#include "npuscope/importer/msprobe_dump_reader.h"
#include "npuscope/viewer/view_options.h"
#include "realdata_util.h"

namespace {

using npuscope::viewer::DumpComparison;
using npuscope::viewer::parse_view_args;
using npuscope::viewer::ViewerOptions;
using npuscope::viewer::ViewUsageError;

constexpr const char* kDump = "msprobe/resnet50_gpu/step0/proc2016";
constexpr const char* kPlanted = "Functional.conv2d.20.forward";

using DumpComparisonTest = npuscope::testing::ProfileDirTest;

TEST_F(DumpComparisonTest, APlantedChangeIsTheFirstFailingEntryWithItsValuesStackAndModules) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kDump);
  const auto npu = npuscope::importer::read_msprobe_dumps(planted_dump(src, kPlanted, "npu"));
  const auto bench = npuscope::importer::read_msprobe_dumps(src);
  ASSERT_EQ(npu.size(), 1u);
  ASSERT_EQ(bench.size(), 1u);
  const DumpComparison c(npu[0], bench[0], {}, "step 0");
  EXPECT_EQ(c.place(), "step 0");
  EXPECT_EQ(c.entries().rows.size(), 760u);
  ASSERT_TRUE(c.result().first_failing);
  const std::size_t e = *c.result().first_failing;
  EXPECT_EQ(c.npu_entry(e).name, kPlanted);
  EXPECT_EQ(c.find_entry(kPlanted), e);
  // Worst first: the failing entry is the entries table's first row, and the maps agree.
  EXPECT_EQ(c.entry_of_row(0), e);
  EXPECT_EQ(c.row_of_entry(e), 0u);
  for (std::size_t r = 0; r < c.entries().rows.size(); ++r)
    ASSERT_EQ(std::get<std::string>(c.entries().rows[r][0]), c.npu_entry(c.entry_of_row(r)).name);

  const npuscope::analyzer::Table values = c.values(e);
  ASSERT_NE(values.spec, nullptr);
  EXPECT_EQ(values.spec->name, "compare_result");
  const auto& er = c.result().entries[e];
  ASSERT_EQ(values.rows.size(), er.last_row - er.first_row);
  const int name_at = values.spec->column_index("NPU Name"), result_at = values.spec->column_index("Result");
  ASSERT_GE(name_at, 0);
  ASSERT_GE(result_at, 0);
  bool output_error = false;
  for (const auto& row : values.rows) {
    const std::string name = std::get<std::string>(row[static_cast<std::size_t>(name_at)]);
    EXPECT_EQ(name.rfind(std::string(kPlanted) + ".", 0), 0u) << name;
    output_error |= name == std::string(kPlanted) + ".output.0" &&
                    std::get<std::string>(row[static_cast<std::size_t>(result_at)]) == "error";
  }
  EXPECT_TRUE(output_error) << "its output.0's Result";

  const auto& stack = c.stack(e);
  EXPECT_TRUE(std::any_of(stack.begin(), stack.end(),
                          [](const std::string& f) { return f.find("torchvision/models/resnet.py") != f.npos; }));
  const std::vector<std::string> modules = c.module_chain(e);
  ASSERT_EQ(modules.size(), 3u);
  EXPECT_EQ(modules[0], "Module.layer2.2.conv3.Conv2d.forward.0");
  EXPECT_EQ(modules[1], "Module.layer2.2.Bottleneck.forward.0");
  EXPECT_EQ(modules[2], "Module.layer2.Sequential.forward.0");
}

ViewerOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "view");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_view_args(static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const ViewUsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DumpCompareFlags, CompareTakesTwoDumpsWithOrWithoutATrace) {
  const ViewerOptions alone = parse({"--compare", "a", "b", "-fm", "--mapping", "m.yaml", "--select", "X"});
  EXPECT_EQ(alone.compare_npu, "a");
  EXPECT_EQ(alone.compare_bench, "b");
  EXPECT_TRUE(alone.fuzzy_match);
  EXPECT_EQ(alone.mapping, "m.yaml");
  EXPECT_EQ(alone.trace, "");
  EXPECT_EQ(alone.select, "X");
  const ViewerOptions with = parse({"t.db", "--compare", "a", "b", "--panel", "compare", "--view", "0:10"});
  EXPECT_EQ(with.trace, "t.db");
  EXPECT_TRUE(with.compares_dumps());

  EXPECT_NE(usage_error({"--compare", "a"}).find("--compare (NPU_DUMP BENCH_DUMP) needs a value"), std::string::npos);
  EXPECT_NE(usage_error({"--compare", "a", "-fm"}).find("got '-fm'"), std::string::npos);
  EXPECT_NE(usage_error({"--compare=a", "b"}).find("--compare takes two dumps"), std::string::npos);
  EXPECT_NE(usage_error({"t.db", "--fuzzy-match"}).find("--fuzzy-match needs --compare"), std::string::npos);
  EXPECT_NE(usage_error({"--compare", "a", "b", "--view", "0:10"}).find("--view needs a trace"), std::string::npos);
  EXPECT_NE(usage_error({"--compare", "a", "b", "--panel", "ops"}).find("--panel ops needs a trace"),
            std::string::npos);
  EXPECT_NE(usage_error({}).find("no trace given"), std::string::npos);
}

}  // namespace
