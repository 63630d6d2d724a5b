// API.level of imported host calls: the names each tool gives its layers (importer/src/api_levels.h),
// the db export's CANN_API.type, the text export's `level` argument (and the name's `AscendCL@`
// prefix where a timeline has no level), msprof's db, and Kineto's runtime and driver categories.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "../../importer/src/api_levels.h"
#include "../realdata_util.h"
#include "foreign_sql.h"
#include "import_test_dir.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::ApiRow;

class ApiLevelTest : public test::ImportTestDir {
 protected:
  // How many calls of each level the trace of `src` holds.
  std::map<std::string, std::int64_t> levels(const std::string& src) {
    std::map<std::string, std::int64_t> out;
    const auto trace = import(src);
    if (!trace) return out;
    trace->for_each([&](const ApiRow& a) { ++out[collector::stored_name<ApiLevel>(a.level, "level")]; });
    return out;
  }
};

TEST_F(ApiLevelTest, EachToolsNamesOfItsLayers) {
  EXPECT_EQ(cann_api_level("acl"), ApiLevel::kAcl);
  EXPECT_EQ(cann_api_level("node"), ApiLevel::kNode);
  EXPECT_EQ(cann_api_level("model"), ApiLevel::kModel);
  EXPECT_EQ(cann_api_level("hccl"), ApiLevel::kHccl);
  EXPECT_EQ(cann_api_level("runtime"), ApiLevel::kRuntime);
  EXPECT_EQ(cann_api_level("mstx"), ApiLevel::kUnknown);  // PYTORCH_API's types are no CANN layer
  EXPECT_EQ(cann_api_level("", "AscendCL@aclrtMemcpyAsync"), ApiLevel::kAcl);
  EXPECT_EQ(cann_api_level("", "Runtime@rtKernelLaunch"), ApiLevel::kRuntime);
  EXPECT_EQ(cann_api_level("", "Hccl@HcclAllReduce"), ApiLevel::kHccl);
  EXPECT_EQ(cann_api_level("", "aclnnAdd"), ApiLevel::kUnknown);
  EXPECT_EQ(kineto_api_level("cuda_runtime"), ApiLevel::kRuntime);
  EXPECT_EQ(kineto_api_level("cuda_driver"), ApiLevel::kDriver);
  EXPECT_EQ(kineto_api_level("privateuse1_runtime"), ApiLevel::kRuntime);
  EXPECT_EQ(kineto_api_level("mtia_runtime"), ApiLevel::kRuntime);
  EXPECT_EQ(kineto_api_level("Runtime"), ApiLevel::kRuntime);  // PyTorch <= 1.9
  EXPECT_EQ(kineto_api_level("Driver"), ApiLevel::kDriver);
  EXPECT_EQ(kineto_api_level("cpu_op"), ApiLevel::kUnknown);
}

// CANN_API.type by ENUM_API_TYPE (5500 hccl, 10000 node, 20000 acl): every call keeps its own.
TEST_F(ApiLevelTest, DbExportTakesCannApiType) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/db/level1/rank0_ascend_pt");
  const test::Sql db(src + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
  std::map<std::string, std::int64_t> want;
  for (const auto& r : db.rows("SELECT e.name, COUNT(*) FROM CANN_API c JOIN ENUM_API_TYPE e ON e.id = c.type "
                               "GROUP BY e.name")) {
    want[r[0]] = std::stoll(r[1]);
  }
  EXPECT_EQ(want, (std::map<std::string, std::int64_t>{{"acl", 515}, {"hccl", 4}, {"node", 191}}));
  EXPECT_EQ(levels(src), want);
}

TEST_F(ApiLevelTest, MsprofDbTakesCannApiType) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  EXPECT_EQ(levels(src), (std::map<std::string, std::int64_t>{{"acl", 4}}));
}

// trace_view.json's CANN events carry `level` (512 acl, 191 node, 4 hccl on rank 0).
TEST_F(ApiLevelTest, TextExportTakesTheLevelArgument) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  EXPECT_EQ(levels(src), (std::map<std::string, std::int64_t>{{"acl", 512}, {"hccl", 4}, {"node", 191}}));
}

// An msprof timeline without `level` arguments: the name's prefix says it.
TEST_F(ApiLevelTest, ATimelineWithoutLevelsTakesTheNamesPrefix) {
  const fs::path json = dir_ / "msprof_1.json";
  std::ofstream(json) << R"([
    {"name": "AscendCL@aclrtMemcpy", "pid": 1, "tid": 2, "ts": "100.000", "dur": 5, "ph": "X", "args": {}},
    {"name": "Runtime@rtMemcpy", "pid": 1, "tid": 2, "ts": "101.000", "dur": 2, "ph": "X", "args": {}},
    {"name": "Model@ModelExecute", "pid": 1, "tid": 2, "ts": "110.000", "dur": 2, "ph": "X", "args": {}}])";
  EXPECT_EQ(levels(json.string()), (std::map<std::string, std::int64_t>{{"acl", 1}, {"model", 1}, {"runtime", 1}}));
}

TEST_F(ApiLevelTest, KinetoRuntimeAndDriverCategories) {
  const fs::path json = dir_ / "w.pt.trace.json";
  std::ofstream(json) << R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 3,
     "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 1, "ts": 20, "dur": 3,
     "args": {"correlation": 2}},
    {"ph": "X", "cat": "privateuse1_runtime", "name": "aclrtMemcpy", "pid": 1, "tid": 1, "ts": 30, "dur": 3,
     "args": {}},
    {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 40, "dur": 3, "args": {}}]})";
  EXPECT_EQ(levels(json.string()), (std::map<std::string, std::int64_t>{{"driver", 1}, {"runtime", 3}}));
}

// The H100 trace's 334 cuda_runtime and 49 cuda_driver calls (cuLaunchKernelEx), MTIA's mtia_runtime.
TEST_F(ApiLevelTest, RealKinetoTracesSplitRuntimeFromDriver) {
  NPUSCOPE_REALDATA_OR_SKIP(h100, "kineto/cross_hw/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
  EXPECT_EQ(levels(h100), (std::map<std::string, std::int64_t>{{"driver", 49}, {"runtime", 334}}));
  NPUSCOPE_REALDATA_OR_SKIP(mtia, "kineto/mtia_inference_rank0.json.gz");
  EXPECT_EQ(levels(mtia), (std::map<std::string, std::int64_t>{{"runtime", 823}}));
}

}  // namespace
}  // namespace npuscope::importer
