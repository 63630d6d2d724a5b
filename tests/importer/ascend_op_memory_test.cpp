// Per-op memory (OP_MEMORY) from the Ascend profiles: the text export's operator_memory.csv row for
// row, the same blocks per op name from the text and db exports of one job (shared/realdata), the
// db's NPU_OP_MEM events paired into the blocks its OP_MEMORY holds, msprof's db and its
// operator_memory_*.csv; and bad input (a missing column, a file cut short).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "../../importer/src/csv_reader.h"
#include "../realdata_util.h"
#include "foreign_sql.h"
#include "import_test_dir.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::OpMemoryRow;
using collector::TraceReader;

constexpr const char* kText = "ascend_pytorch_profiler/text/level1/rank%d_ascend_pt";
constexpr const char* kDb = "ascend_pytorch_profiler/db/level1/rank%d_ascend_pt";

std::string rank_path(const char* pattern, int rank) {
  std::string s(pattern);
  s.replace(s.find("%d"), 2, std::to_string(rank));
  return s;
}

// A block as the tests compare it: name, device, bytes, allocation, release, active release, the six
// totals, stream.
using Block =
    std::tuple<std::string, std::int32_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
               std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

class AscendOpMemoryTest : public test::ImportTestDir {
 protected:
  std::vector<Block> blocks(const TraceReader& t) {
    std::vector<Block> out;
    t.for_each([&](const OpMemoryRow& b) {
      out.emplace_back(t.string(b.name_id), b.device_id, b.bytes, b.allocation_ns, b.release_ns, b.active_release_ns,
                       b.allocation_allocated_bytes, b.allocation_reserved_bytes, b.allocation_active_bytes,
                       b.release_allocated_bytes, b.release_reserved_bytes, b.release_active_bytes, b.stream_ptr);
    });
    std::sort(out.begin(), out.end());
    return out;
  }
};

// operator_memory.csv read here, field by field, as the rows the import must give.
std::vector<Block> csv_blocks(const std::string& path) {
  CsvReader csv(path);
  const auto col = [&](const char* name) { return csv.require(name); };
  const int name = col("Name"), size = col("Size(KB)"), at = col("Allocation Time(us)"),
            released = col("Release Time(us)"), active = col("Active Release Time(us)"), device = col("Device Type"),
            stream = col("Stream Ptr");
  const int totals[] = {col("Allocation Total Allocated(MB)"), col("Allocation Total Reserved(MB)"),
                        col("Allocation Total Active(MB)"),    col("Release Total Allocated(MB)"),
                        col("Release Total Reserved(MB)"),     col("Release Total Active(MB)")};
  std::vector<Block> out;
  while (csv.next()) {
    const auto ns = [&](int c) { return csv_time_ns(csv.field(c)).value_or(-1); };
    const auto mb = [&](int c) {
      const auto v = csv_double(csv.field(c));
      return v ? static_cast<std::int64_t>(*v * 1024 * 1024) : std::int64_t{-1};
    };
    std::string op(csv.field(name));
    if (op.starts_with("cann::")) op.erase(0, 6);  // GE's ops, as the db export names them
    const std::string dev(csv.field(device));
    out.emplace_back(op, std::stoi(dev.substr(dev.find(':') + 1)),
                     static_cast<std::int64_t>(csv_double(csv.field(size)).value() * 1024), ns(at), ns(released),
                     ns(active), mb(totals[0]), mb(totals[1]), mb(totals[2]), mb(totals[3]), mb(totals[4]),
                     mb(totals[5]), csv_int(csv.field(stream)).value_or(0));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int> blocks_per_name(const std::vector<Block>& blocks) {
  std::map<std::string, int> out;
  for (const Block& b : blocks) ++out[std::get<0>(b)];
  return out;
}

TEST_F(AscendOpMemoryTest, TextExportRowsAreOperatorMemoryCsvs) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kText, 0));
  const auto trace = import(src);
  ASSERT_TRUE(trace);
  const std::vector<Block> want = csv_blocks(src + "/ASCEND_PROFILER_OUTPUT/operator_memory.csv");
  ASSERT_EQ(want.size(), 184u);
  EXPECT_EQ(blocks(*trace), want);
}

// The two exports are two runs of one job: their blocks differ in times and totals, not in which op
// allocated how many (the text export's GE ops are `cann::X`, imported as the db's `X`).
TEST_F(AscendOpMemoryTest, TextAndDbExportsHoldTheSameBlocksPerOpName) {
  for (int rank : {0, 1}) {
    NPUSCOPE_REALDATA_OR_SKIP(text, rank_path(kText, rank));
    NPUSCOPE_REALDATA_OR_SKIP(db, rank_path(kDb, rank));
    const auto from_text = blocks_per_name(blocks(*import(text)));
    const auto from_db = blocks_per_name(blocks(*import(db)));
    EXPECT_EQ(from_text, from_db) << "rank " << rank;
    EXPECT_EQ(from_db.at("ReduceSum7"), 10);
    EXPECT_EQ(from_db.at("aten::_foreach_add"), 17);
  }
}

TEST_F(AscendOpMemoryTest, DbExportRowsAreOpMemorys) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kDb, 1));
  const test::Sql db(src + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db");
  auto want = db.rows(
      "SELECT s.value, o.size, o.allocationTime, COALESCE(o.releaseTime, -1), COALESCE(o.activeReleaseTime, -1) "
      "FROM OP_MEMORY o JOIN STRING_IDS s ON s.id = o.name");
  std::sort(want.begin(), want.end());
  ImportReport report;
  const auto trace = import(src, &report);
  std::vector<std::vector<std::string>> got;
  for (const Block& b : blocks(*trace)) {
    got.push_back({std::get<0>(b), std::to_string(std::get<2>(b)), std::to_string(std::get<3>(b)),
                   std::to_string(std::get<4>(b)), std::to_string(std::get<5>(b))});
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  // NPU_OP_MEM holds GE's events of the blocks OP_MEMORY has: counted, not mapped twice.
  const auto it = std::find_if(report.unmapped.begin(), report.unmapped.end(),
                               [](const auto& u) { return u.what.starts_with("table NPU_OP_MEM"); });
  ASSERT_NE(it, report.unmapped.end());
  EXPECT_EQ(it->count, 114);
}

// Without OP_MEMORY (msprof's db) the blocks come from NPU_OP_MEM's allocate/release pairs: on the
// torch_npu db they are exactly the GE blocks its own OP_MEMORY holds.
TEST_F(AscendOpMemoryTest, NpuOpMemPairsAreTheBlocksOpMemoryHolds) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kDb, 1));
  const fs::path copy = copy_dir(src, "rank1_ascend_pt");
  const std::string db = (copy / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db").string();
  std::set<std::string> ge;
  for (const auto& r : test::Sql(db).rows("SELECT DISTINCT s.value FROM NPU_OP_MEM m JOIN STRING_IDS s ON "
                                          "s.id = m.operatorName")) {
    ge.insert(r[0]);
  }
  const auto whole = blocks(*import(copy.string()));
  test::exec(db, "DROP TABLE OP_MEMORY");
  const auto paired = blocks(*import(copy.string()));
  std::vector<Block> want;
  for (const Block& b : whole) {
    if (!ge.contains(std::get<0>(b))) continue;
    // What NPU_OP_MEM does not say: the active release and totals, the stream.
    want.emplace_back(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b), std::get<4>(b), -1,
                      std::get<6>(b), std::get<7>(b), -1, std::get<9>(b), std::get<10>(b), -1, 0);
  }
  ASSERT_EQ(want.size(), 57u);
  EXPECT_EQ(paired, want);
}

TEST_F(AscendOpMemoryTest, MsprofDbPairsItsAllocateAndReleaseEvents) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  const test::Sql db(src);
  const auto events = db.rows("SELECT type, COUNT(*) FROM NPU_OP_MEM GROUP BY type ORDER BY type");
  ASSERT_EQ(events.size(), 2u);  // 5 allocate, 6 release (ENUM_MEMORY)
  const std::vector<Block> got = blocks(*import(src));
  std::int64_t both = 0, release_only = 0, allocation_only = 0;
  for (const Block& b : got) {
    const bool allocated = std::get<3>(b) >= 0, released = std::get<4>(b) >= 0;
    both += allocated && released;
    release_only += !allocated && released;
    allocation_only += allocated && !released;
    if (allocated && released) {
      EXPECT_LE(std::get<3>(b), std::get<4>(b));
    }
    EXPECT_GT(std::get<2>(b), 0);
  }
  // Every event is in one block: a pair, or one end seen in the profile.
  EXPECT_EQ(2 * both + release_only + allocation_only, std::stoll(events[0][1]) + std::stoll(events[1][1]));
  EXPECT_EQ(both + allocation_only, std::stoll(events[0][1]));
  const auto first = db.rows(
      "SELECT s.value, m.size, m.timestampNs, m.totalAllocate FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = "
      "m.operatorName WHERE m.type = 5 ORDER BY m.timestampNs LIMIT 1");
  const auto it = std::find_if(got.begin(), got.end(),
                               [&](const Block& b) { return std::to_string(std::get<3>(b)) == first[0][2]; });
  ASSERT_NE(it, got.end());
  EXPECT_EQ(std::get<0>(*it), first[0][0]);
  EXPECT_EQ(std::to_string(std::get<2>(*it)), first[0][1]);
  EXPECT_EQ(std::to_string(std::get<6>(*it)), first[0][3]);
}

// msprof's operator_memory_*.csv: no release time (allocation + Duration), totals in KB, a release
// whose allocation came before the profile as a negative size with no allocation.
TEST_F(AscendOpMemoryTest, MsprofOperatorMemoryCsvInAProfFolder) {
  const fs::path out = dir_ / "PROF_000001_20240101" / "mindstudio_profiler_output";
  fs::create_directories(out);
  std::ofstream(out / "msprof_20240101.json") << "[]";
  std::ofstream(out / "operator_memory_20240101.csv")
      << "Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(KB),"
         "Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total Reserved(KB),Device\n"
         "3,MatMul_1,2048,1700000000000001.500\t,20.250\t,4096,8192,2048,8192,NPU:3\n"
         "3,,-512,,,,,1024,8192,NPU:3\n"
         "3,Add_2,1,1700000000000100.000\t,,4097,8192,,,NPU:3\n";
  const auto trace = import((dir_ / "PROF_000001_20240101").string());
  ASSERT_TRUE(trace);
  const std::vector<Block> got = blocks(*trace);
  const std::vector<Block> want = {
      {"", 3, 512 * 1024, -1, -1, -1, -1, -1, -1, 1024 * 1024, 8192 * 1024, -1, 0},
      {"Add_2", 3, 1024, 1700000000000100000, -1, -1, 4097 * 1024, 8192 * 1024, -1, -1, -1, -1, 0},
      {"MatMul_1", 3, 2048 * 1024, 1700000000000001500, 1700000000000021750, -1, 4096 * 1024, 8192 * 1024, -1,
       2048 * 1024, 8192 * 1024, -1, 0},
  };
  EXPECT_EQ(got, want);
}

TEST_F(AscendOpMemoryTest, AnOperatorMemoryCsvWithoutItsSizeNamesTheFileAndColumn) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kText, 0));
  const fs::path copy = copy_dir(src, "rank0_ascend_pt");
  const fs::path csv = copy / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv";
  std::ofstream(csv) << "Name,Allocation Time(us)\naten::mm,1736408883694624.810\t\n";
  const std::string e = import_error(copy);
  EXPECT_NE(e.find(csv.string()), std::string::npos) << e;
  EXPECT_NE(e.find("Size(KB)"), std::string::npos) << e;
}

TEST_F(AscendOpMemoryTest, AnOperatorMemoryCsvCutShortImportsItsRowsMarkedIncomplete) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kText, 0));
  const fs::path copy = copy_dir(src, "rank0_ascend_pt");
  const fs::path csv = copy / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv";
  std::string text;
  {
    std::ifstream in(csv, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Ten whole records (the header and nine rows), then half of the next.
  std::size_t at = 0;
  for (int i = 0; i < 10; ++i) at = text.find('\n', at) + 1;
  std::ofstream(csv, std::ios::binary | std::ios::trunc) << text.substr(0, at + 40);
  ImportReport report;
  const auto trace = import(copy.string(), &report);
  EXPECT_TRUE(report.incomplete);
  EXPECT_EQ(trace->rows<OpMemoryRow>().size(), 9u);
}

TEST_F(AscendOpMemoryTest, AnOpMemoryTableWithoutItsAllocationTimeNamesTheColumn) {
  NPUSCOPE_REALDATA_OR_SKIP(src, rank_path(kDb, 1));
  const fs::path copy = copy_dir(src, "rank1_ascend_pt");
  const fs::path db = copy / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db";
  test::exec(db.string(), "ALTER TABLE OP_MEMORY DROP COLUMN allocationTime");
  const std::string e = import_error(copy);
  EXPECT_NE(e.find(db.string()), std::string::npos) << e;
  EXPECT_NE(e.find("table OP_MEMORY has no column allocationTime"), std::string::npos) << e;
}

// NPU_OP_MEM rows of a type neither allocate nor release are counted, the others paired.
TEST_F(AscendOpMemoryTest, NpuOpMemRowsOfAnotherTypeAreCounted) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  const fs::path db = dir_ / "msprof_0.db";
  fs::copy_file(src, db);
  fs::permissions(db, fs::perms::owner_all, fs::perm_options::add);
  test::exec(db.string(), "UPDATE NPU_OP_MEM SET type = 3 WHERE rowid IN (SELECT rowid FROM NPU_OP_MEM LIMIT 2)");
  ImportReport report;
  import(db.string(), &report);
  const auto it = std::find_if(report.unmapped.begin(), report.unmapped.end(),
                               [](const Unmapped& u) { return u.what == "NPU_OP_MEM row of type read"; });
  ASSERT_NE(it, report.unmapped.end());
  EXPECT_EQ(it->count, 2);
}

}  // namespace
}  // namespace npuscope::importer
