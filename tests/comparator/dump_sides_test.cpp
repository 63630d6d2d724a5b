// The sides of a dump comparison (Note [Dump comparison sides] in comparator/dump_sides.h): an
// msprobe dump read from its files without opening a trace, a trace opened by the caller's opener
// and kept open, what is neither said with its path, the NPU side's error first when both fail, the
// opener's own errors passed through, and two sides whose dumps pair nothing.
#include "npuscope/comparator/dump_sides.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "collector/export_test_util.h"

namespace npuscope::comparator {
namespace {

constexpr const char* kEntry =
    R"("Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2],
      "Max": 2.0, "Min": 1.0, "Mean": 1.5, "Norm": 2.2, "requires_grad": false}], "input_kwargs": {}, "output": []})";

class DumpSidesTest : public collector::testing::ExportTest {
 protected:
  // A statistics dump.json of one entry at `rel` under the test's directory; its folder's path.
  std::string dump(const std::string& rel) {
    const std::filesystem::path p = std::filesystem::path(path(rel));
    std::filesystem::create_directories(p);
    std::ofstream(p / "dump.json") << R"({"task": "statistics", "level": "L1", "dump_data_dir": null, "data": {)"
                                   << kEntry << "}}";
    return p.string();
  }

  // Opens traces read-only and counts them.
  TraceOpener opener() {
    return [this](const std::string& p) {
      ++opened_;
      return collector::TraceReader::open(p, {.verify = false});
    };
  }
  std::atomic<int> opened_{0};
};

// The message of the CompareError `f` throws; "" if it throws none.
template <typename F>
std::string compare_error(F&& f) {
  try {
    f();
  } catch (const CompareError& e) {
    return e.what();
  }
  return "";
}

TEST_F(DumpSidesTest, AnMsprobeDumpIsReadFromItsFilesWithoutATrace) {
  const DumpSide side = read_dump_side(dump("npu/step0/rank0"), opener());
  EXPECT_EQ(opened_, 0) << "an msprobe dump opens no trace";
  EXPECT_EQ(side.trace, nullptr);
  ASSERT_EQ(side.dumps.size(), 1u);
  EXPECT_EQ(side.dumps[0].step, 0);
  EXPECT_EQ(side.dumps[0].rank, 0);
  EXPECT_EQ(side.dumps[0].entries.size(), 1u);
  EXPECT_EQ(side.path, path("npu/step0/rank0"));
}

TEST_F(DumpSidesTest, ATraceWithoutAPyTorchDumpIsNeither) {
  collector::testing::write_sample_trace(path("t.db"));
  const std::string e = compare_error([&] { read_dump_side(path("t.db"), opener()); });
  EXPECT_EQ(opened_, 1);
  EXPECT_EQ(e.rfind(path("t.db") + " is neither an msprobe dump nor a trace with a PyTorch dump: ", 0), 0u) << e;
  EXPECT_NE(e.find("--dump"), std::string::npos) << "it says how to record one: " << e;
}

TEST_F(DumpSidesTest, ABadDumpIsACompareErrorNamingItsFile) {
  std::filesystem::create_directories(path("bad"));
  std::ofstream(path("bad/dump.json")) << R"({"task": "statistics", "data": {"Functional.relu.0.forward": )";
  const std::string e = compare_error([&] { read_dump_side(path("bad"), opener()); });
  EXPECT_NE(e.find(path("bad/dump.json")), std::string::npos) << e;
  EXPECT_EQ(opened_, 0);
}

TEST_F(DumpSidesTest, TheOpenersErrorsPassThrough) {
  const TraceOpener failing = [](const std::string& p) -> std::unique_ptr<collector::TraceReader> {
    throw std::runtime_error("cannot open " + p);
  };
  try {
    read_dump_side(path("missing.db"), failing);
    FAIL() << "no error";
  } catch (const CompareError& e) {
    FAIL() << "the opener's error became a CompareError: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open " + path("missing.db"));
  }
}

TEST_F(DumpSidesTest, BothSidesAreReadAndPairedStepByStep) {
  dump("npu/step0/rank0");
  dump("npu/step1/rank0");
  dump("npu/step2/rank0");
  dump("bench/step0/rank0");
  dump("bench/step1/rank0");
  DumpSides s = read_dump_sides(path("npu"), path("bench"), opener());
  ASSERT_EQ(s.pairs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s.pairs[i].npu, &s.npu.dumps[i]);
    EXPECT_EQ(s.pairs[i].bench, &s.bench.dumps[i]);
  }
  ASSERT_EQ(s.unpaired.size(), 1u);
  EXPECT_NE(s.unpaired[0].find("step 2, rank 0: the NPU dump"), std::string::npos) << s.unpaired[0];
  // A move keeps the pairs pointing into the sides.
  const DumpSides moved = std::move(s);
  EXPECT_EQ(moved.pairs[1].npu, &moved.npu.dumps[1]);
}

TEST_F(DumpSidesTest, TheNpuSidesErrorComesFirst) {
  collector::testing::write_sample_trace(path("a.db"));
  collector::testing::write_sample_trace(path("b.db"));
  const std::string e = compare_error([&] { read_dump_sides(path("a.db"), path("b.db"), opener()); });
  EXPECT_EQ(opened_, 2) << "both read at once";
  EXPECT_EQ(e.rfind(path("a.db") + " is neither", 0), 0u) << e;
  const std::string bench = compare_error([&] { read_dump_sides(dump("npu"), path("b.db"), opener()); });
  EXPECT_EQ(bench.rfind(path("b.db") + " is neither", 0), 0u) << bench;
}

TEST_F(DumpSidesTest, SidesThatPairNothingAreSaid) {
  dump("npu/step0/rank0");
  dump("npu/step0/rank1");
  dump("bench/step0/rank2");
  dump("bench/step0/rank3");
  const std::string e = compare_error([&] { read_dump_sides(path("npu"), path("bench"), opener()); });
  EXPECT_EQ(e, "no step and rank of " + path("npu") + " (step 0, rank 0; step 0, rank 1) is in " + path("bench") +
                   " (step 0, rank 2; step 0, rank 3): nothing to compare");
}

}  // namespace
}  // namespace npuscope::comparator
