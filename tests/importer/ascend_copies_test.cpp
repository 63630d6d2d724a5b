// The copies of the Ascend exports: each copy task has its MEMCPY row, with the size and direction
// where the export says them (msprof's MEMCPY_ASYNC `size(B)` / `operation` since 2024-12, the older
// timeline's runtime calls' `data size` / `memcpy direction`, the db's MEMCPY_INFO), 0 and unknown
// where it does not (the 910B exports of shared/realdata, which the small-copy advice then leaves alone).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "../realdata_util.h"
#include "foreign_sql.h"
#include "import_test_dir.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/report.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::MemcpyRow;
using collector::TaskRow;

class AscendCopiesTest : public test::ImportTestDir {
 protected:
  // Every copy task's MEMCPY row, checked against its task, by task id.
  static std::map<std::int64_t, MemcpyRow> copies(const collector::TraceReader& t) {
    std::map<std::int64_t, TaskRow> tasks;
    t.for_each([&](const TaskRow& r) {
      if (is(r.task_type, TaskType::kMemcpy)) tasks[r.task_id] = r;
    });
    std::map<std::int64_t, MemcpyRow> out;
    for (const MemcpyRow& m : t.rows<MemcpyRow>()) {
      const auto task = tasks.find(m.task_id);
      EXPECT_NE(task, tasks.end()) << "MEMCPY row of no copy task " << m.task_id;
      if (task == tasks.end()) continue;
      EXPECT_EQ(m.start_ns, task->second.start_ns);
      EXPECT_EQ(m.end_ns, task->second.end_ns);
      EXPECT_EQ(m.stream_id, task->second.stream_id);
      EXPECT_EQ(m.connection_id, task->second.connection_id);
      out[m.task_id] = m;
    }
    EXPECT_EQ(out.size(), tasks.size()) << "a copy task without its MEMCPY row";
    return out;
  }
};

// trace_view.json of 2025 says no copy's size: 24 copies (PCIE_DMA_SQE, SDMA_SQE), size 0, unknown
// direction; no small-copy advice about them.
TEST_F(AscendCopiesTest, TheRealTextExportsCopiesWithoutTheirSize) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  const auto trace = import(src);
  const auto got = copies(*trace);
  EXPECT_EQ(got.size(), 24u);
  for (const auto& [id, m] : got) {
    EXPECT_EQ(m.bytes, 0);
    EXPECT_EQ(m.copy_kind, static_cast<std::int32_t>(CopyKind::kUnknown));
  }
  const analyzer::Report r = analyzer::analyze(*trace);
  if (const analyzer::Table* advice = r.find("advice")) {
    for (std::size_t i = 0; i < advice->rows.size(); ++i) {
      EXPECT_NE(std::get<std::string>(*advice->cell(i, "rule")), "small_memcpy");
    }
  }
}

// msprof's timeline since 2024-12: MEMCPY_ASYNC's own size(B) and operation; before it, the runtime
// call's data size and memcpy direction, joined by connection id or by stream and task id.
TEST_F(AscendCopiesTest, ATimelineSaysItsCopiesSizes) {
  const fs::path json = dir_ / "msprof_0.json";
  std::ofstream(json) << R"json([
    {"name": "MEMCPY_ASYNC", "pid": 7, "tid": 2, "ts": "100.000", "dur": 5, "ph": "X",
     "args": {"Task Type": "MEMCPY_ASYNC", "Physic Stream Id": 2, "Task Id": 1, "connection_id": 11,
              "size(B)": 4096, "bandwidth(GB/s)": 0.8192, "operation": "host to device"}},
    {"name": "Runtime@rtMemcpyAsync", "pid": 5, "tid": 9, "ts": "109.000", "dur": 1, "ph": "X",
     "args": {"level": "runtime", "connection_id": 12, "data size": "65536 byte", "memcpy direction": "device to host"}},
    {"name": "MEMCPY_ASYNC", "pid": 7, "tid": 2, "ts": "110.000", "dur": 5, "ph": "X",
     "args": {"Task Type": "MEMCPY_ASYNC", "Physic Stream Id": 2, "Task Id": 2, "connection_id": 12}},
    {"name": "rtMemcpyAsync", "pid": 5, "tid": 9, "ts": "119.000", "dur": 1, "ph": "X", "cat": "runtime",
     "args": {"data size": "512 byte", "memcpy direction": "device to device", "stream id": 2, "task id": 3}},
    {"name": "MEMCPY_ASYNC", "pid": 7, "tid": 2, "ts": "120.000", "dur": 5, "ph": "X",
     "args": {"Task Type": "PCIE_DMA_SQE", "Physic Stream Id": 2, "Task Id": 3}},
    {"name": "MEMCPY_ASYNC", "pid": 7, "tid": 2, "ts": "130.000", "dur": 5, "ph": "X",
     "args": {"Task Type": "SDMA_SQE", "Physic Stream Id": 2, "Task Id": 4, "operation": "managed memory"}}])json";
  ImportReport report;
  const auto got = copies(*import(json.string(), &report));
  std::vector<std::pair<std::int64_t, CopyKind>> seen;
  for (const auto& [id, m] : got) seen.emplace_back(m.bytes, static_cast<CopyKind>(m.copy_kind));
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, CopyKind>>{{4096, CopyKind::kHostToDevice},
                                                                  {65536, CopyKind::kDeviceToHost},
                                                                  {512, CopyKind::kDeviceToDevice},
                                                                  {0, CopyKind::kUnknown}}));
  for (const Unmapped& u : report.unmapped) {
    EXPECT_EQ(u.what.find("size(B)"), std::string::npos) << u.what;
    EXPECT_EQ(u.what.find("data size"), std::string::npos) << u.what;
  }
}

// msprof's db since 2024-12: MEMCPY_INFO (size, memcpyOperation named by ENUM_MEMCPY_OPERATION).
TEST_F(AscendCopiesTest, ADbWithMemcpyInfo) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/db/level1/rank1_ascend_pt");
  const std::string db_name = "ascend_pytorch_profiler_1.db";
  const auto without = copies(*import(src));
  ASSERT_FALSE(without.empty());
  for (const auto& [id, m] : without) EXPECT_EQ(m.bytes, 0);
  const fs::path copy = copy_dir(src, "rank1_ascend_pt");
  const std::string db = (copy / "ASCEND_PROFILER_OUTPUT" / db_name).string();
  test::exec(db,
             "CREATE TABLE ENUM_MEMCPY_OPERATION (id INTEGER PRIMARY KEY, name TEXT);"
             "INSERT INTO ENUM_MEMCPY_OPERATION VALUES (0, 'host to host'), (1, 'host to device'), "
             "(2, 'device to host'), (3, 'device to device'), (65535, 'other');"
             "CREATE TABLE MEMCPY_INFO (globalTaskId INTEGER PRIMARY KEY, size INTEGER, memcpyOperation INTEGER);"
             "INSERT INTO MEMCPY_INFO SELECT t.globalTaskId, 1000 + t.globalTaskId, t.globalTaskId % 4 FROM TASK t "
             "JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value = 'MEMCPY_ASYNC'");
  const auto with = copies(*import(copy.string()));
  ASSERT_EQ(with.size(), without.size());
  constexpr CopyKind kByOperation[] = {CopyKind::kHostToHost, CopyKind::kHostToDevice, CopyKind::kDeviceToHost,
                                       CopyKind::kDeviceToDevice};
  for (const auto& [id, m] : with) {
    const std::int64_t global_task_id = id - 1;  // Note [Ascend db import]: a task's id is its globalTaskId + 1
    EXPECT_EQ(m.bytes, 1000 + global_task_id);
    EXPECT_EQ(m.copy_kind, static_cast<std::int32_t>(kByOperation[global_task_id % 4]));
  }
}

}  // namespace
}  // namespace npuscope::importer
