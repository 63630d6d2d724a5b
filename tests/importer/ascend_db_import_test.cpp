// The Ascend db importer (Note [Ascend db import] in importer/src/ascend_db.h) on the real exports of
// shared/realdata: the golden checks against the profiler's own analysis.db (StepTraceTime from the
// imported tasks, the communication matrix from the link tasks), the joins, ids and META; msprof's
// db; and bad input (a foreign SQLite, a missing column, a damaged file, analysis.db alone).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../realdata_util.h"
#include "foreign_sql.h"
#include "npuscope/analyzer/step_time.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::TraceReader;

constexpr const char* kRank0 = "ascend_pytorch_profiler/db/level1/rank0_ascend_pt";
constexpr const char* kRank1 = "ascend_pytorch_profiler/db/level1/rank1_ascend_pt";

using test::exec;
using test::Sql;

class AscendDbImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npuscope_ascend_db_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }

  // Imports `src` into a trace in the temporary folder.
  std::unique_ptr<TraceReader> import(const std::string& src, ImportReport* report = nullptr) {
    const auto source = detect(src);
    EXPECT_TRUE(source.has_value()) << src;
    if (!source) return nullptr;
    const std::string trace = out(fs::path(src).filename().string() + ".npuscope.db");
    const ImportReport r = import_to_file(*source, trace, true);
    if (report != nullptr) *report = r;
    return TraceReader::open(trace);
  }

  fs::path dir_;
};

// The step figures of analysis.db's StepTraceTime, exactly (microseconds to the ns), from npuscope's
// own step time arithmetic over the imported tasks: Computing is every COMPUTE_TASK_INFO task's, its
// DSA_SQE ops too, as torch_npu's own step time (prof_db_parse/_trace_step_time_db_parser.py) has it.
void expect_step_times_of(AscendDbImport& t, const std::string& rank_dir, std::unique_ptr<TraceReader> trace) {
  ASSERT_TRUE(trace);
  const Sql analysis((fs::path(rank_dir) / "ASCEND_PROFILER_OUTPUT" / "analysis.db").string());
  const auto expected = analysis.rows(
      "SELECT step, computing, communication_not_overlapped, overlapped, communication, free, preparing "
      "FROM StepTraceTime ORDER BY step");
  ASSERT_FALSE(expected.empty());
  const auto steps = analyzer::step_times(*trace);
  ASSERT_EQ(steps.size(), expected.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& e = expected[i];
    const analyzer::StepTime& s = steps[i];
    ASSERT_TRUE(s.step.has_value());
    EXPECT_EQ(std::to_string(*s.step), e[0]);
    const auto near = [&](std::int64_t ns, const std::string& us, const char* what) {
      const double want = std::stod(us) * 1000;
      EXPECT_NEAR(static_cast<double>(ns), want, 1.0) << what << " of step " << e[0];  // exact (us, 3 decimals)
    };
    near(s.computing_ns, e[1], "Computing");
    near(s.communication_not_overlapped_ns(), e[2], "Communication(Not Overlapped)");
    near(s.overlapped_ns, e[3], "Overlapped");
    near(s.communication_ns, e[4], "Communication");
    near(s.free_ns, e[5], "Free");
    near(s.preparing_ns, e[6], "Preparing");
  }
  (void)t;
}

TEST_F(AscendDbImport, Rank0ReproducesItsStepTraceTime) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  expect_step_times_of(*this, src, import(src));
}

TEST_F(AscendDbImport, Rank1ReproducesItsStepTraceTime) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank1);
  expect_step_times_of(*this, src, import(src));
}

// CommAnalyzerMatrix's transit sizes (MB) per collective and link, from COMMUNICATION_LINK.
TEST_F(AscendDbImport, CommunicationMatrixAgreesWithAnalysisDb) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const auto trace = import(src);
  ASSERT_TRUE(trace);
  std::map<std::int64_t, std::string> names;  // task id -> collective name
  trace->for_each([&](const collector::TaskRow& t) {
    if (t.task_type == static_cast<std::int32_t>(TaskType::kCommunication)) names[t.task_id] = trace->string(t.name_id);
  });
  ASSERT_EQ(names.size(), 4u);
  std::map<std::pair<std::string, int>, std::int64_t> bytes;
  std::map<std::pair<std::string, int>, std::int32_t> transport;
  trace->for_each([&](const collector::CommunicationLinkRow& l) {
    bytes[{names.at(l.task_id), l.peer_rank}] += l.bytes;
    transport[{names.at(l.task_id), l.peer_rank}] = l.transport;
  });
  const Sql analysis((fs::path(src) / "ASCEND_PROFILER_OUTPUT" / "analysis.db").string());
  const auto matrix = analysis.rows(
      "SELECT DISTINCT op_name, dst_rank, transport_type, transit_size FROM CommAnalyzerMatrix WHERE src_rank = 0 AND "
      "op_name LIKE 'hcom%'");
  ASSERT_FALSE(matrix.empty());
  std::set<std::pair<std::string, int>> checked;
  for (const auto& m : matrix) {
    const std::pair<std::string, int> key{m[0], std::stoi(m[1])};
    if (!checked.insert(key).second) continue;
    ASSERT_TRUE(bytes.contains(key)) << m[0] << " to " << m[1];
    EXPECT_NEAR(static_cast<double>(bytes[key]), std::stod(m[3]) * 1e6, 0.005 * std::stod(m[3]) * 1e6) << m[0];
    EXPECT_EQ(collector::stored_name<LinkTransport>(transport[key], "link"), m[2]) << m[0] << " to " << m[1];
  }
  EXPECT_EQ(checked.size(), 4u * 8u);
}

// What the tools need of every task and host op: names, types, joins, call indexes, ids, META.
TEST_F(AscendDbImport, TasksKeepTheirJoinsShapesAndMetrics) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  ImportReport report;
  const auto trace = import(src, &report);
  ASSERT_TRUE(trace);
  const Sql profile((fs::path(src) / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db").string());
  EXPECT_EQ(trace->meta(std::string(collector::kMetaSource)), "ascend_pytorch_profiler_db");
  EXPECT_EQ(trace->meta(std::string(collector::kMetaSourceVersion)), "db schema 1.0.0");
  EXPECT_EQ(trace->meta(std::string(collector::kMetaRank)), "0");
  EXPECT_EQ(trace->meta(std::string(collector::kMetaWorldSize)), "8");
  const auto devices = trace->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "Ascend910B");

  std::set<std::int64_t> api_connections;
  trace->for_each([&](const collector::ApiRow& a) { api_connections.insert(a.connection_id); });
  std::set<std::int64_t> host_ops;
  std::int64_t with_stack = 0, with_shapes = 0, with_sequence = 0;
  trace->for_each([&](const collector::PytorchApiRow& p) {
    host_ops.insert(p.id);
    with_stack += p.stack_id != 0;
    with_shapes += p.input_shapes_id != 0;
    with_sequence += p.sequence_number >= 0;
  });
  EXPECT_GT(with_stack, 0);
  EXPECT_GT(with_shapes, 0);
  EXPECT_GT(with_sequence, 0);
  trace->for_each([&](const collector::PytorchApiRow& p) {
    if (p.parent_id != 0) {
      EXPECT_TRUE(host_ops.contains(p.parent_id));
    }
  });

  std::map<std::string, std::int64_t> kernels_by_type;
  std::map<std::string, std::vector<std::int32_t>> calls_by_name;
  std::int64_t kernels = 0, joined_to_api = 0, joined_to_op = 0, link_tasks = 0, dsa = 0;
  trace->for_each([&](const collector::TaskRow& t) {
    const auto type = static_cast<TaskType>(t.task_type);
    calls_by_name[trace->string(t.name_id)].push_back(t.call_index);
    if (type == TaskType::kCommunicationTask) ++link_tasks;
    if (type == TaskType::kDsa) {  // COMPUTE_TASK_INFO's DSA_SQE: an op (msprof counts it), no block dim
      ++dsa;
      EXPECT_EQ(trace->string(t.op_type_id), "DSAGenBitMask");
      EXPECT_TRUE(is_device_kernel(t.task_type));
    }
    if (type != TaskType::kAiCore && type != TaskType::kAiVectorCore && type != TaskType::kMixAiVector) return;
    ++kernels;
    ++kernels_by_type[trace->string(t.op_type_id)];
    joined_to_api += api_connections.contains(t.connection_id);
    if (t.pytorch_api_id != 0) {
      ++joined_to_op;
      EXPECT_TRUE(host_ops.contains(t.pytorch_api_id));
    }
    EXPECT_GT(t.block_dim, 0);
    EXPECT_NE(t.input_shapes_id, 0) << trace->string(t.name_id);
  });
  // Every COMPUTE_TASK_INFO kernel: 185 on the AI cores, 2 on the DSA.
  EXPECT_EQ(kernels, 185);
  EXPECT_EQ(dsa, 2);
  EXPECT_EQ(kernels_by_type["TransData"], 57);
  EXPECT_EQ(joined_to_api, kernels);
  EXPECT_GT(joined_to_op, kernels / 2);
  EXPECT_EQ(link_tasks, 296);
  for (const auto& [name, calls] : calls_by_name) {
    for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], static_cast<std::int32_t>(i)) << name;
  }
  // A kernel's shapes in npuscope's form.
  bool shapes_ok = false;
  trace->for_each([&](const collector::TaskRow& t) {
    if (t.input_shapes_id == 0) return;
    const std::string s = trace->string(t.input_shapes_id);
    if (!s.empty() && s.back() == ';' && s.find('"') == std::string::npos) shapes_ok = true;
  });
  EXPECT_TRUE(shapes_ok);

  EXPECT_EQ(static_cast<std::int64_t>(trace->rows<collector::TaskPmuRow>().size()),
            std::stoll(profile.rows("SELECT COUNT(*) FROM TASK_PMU_INFO")[0][0]));
  const auto steps = trace->rows<collector::MarkerRow>();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 50);
  EXPECT_FALSE(trace->rows<collector::MemoryRow>().empty());
  std::set<std::string> counters;
  trace->for_each([&](const collector::CounterRow& c) { counters.insert(trace->string(c.name_id)); });
  EXPECT_TRUE(counters.contains("AI Core Freq (MHz)"));
  EXPECT_TRUE(counters.contains("HBM0 read bandwidth (B/s)"));
  const auto communicators = trace->rows<collector::CommunicatorRow>();
  ASSERT_EQ(communicators.size(), 1u);
  EXPECT_EQ(communicators[0].size, 8);
  std::set<std::int32_t> sequences;
  trace->for_each([&](const collector::CommunicationRow& c) { sequences.insert(c.sequence); });
  EXPECT_EQ(sequences, (std::set<std::int32_t>{0, 1, 2, 3}));
  // What is not mapped is counted.
  std::set<std::string> unmapped;
  for (const Unmapped& u : report.unmapped) unmapped.insert(u.what);
  EXPECT_TRUE(unmapped.contains("table OVERLAP_ANALYSIS"));
  EXPECT_TRUE(unmapped.contains("TASK row of a kernel without COMPUTE_TASK_INFO (a mix kernel's second part)"));
  EXPECT_TRUE(unmapped.contains("column TASK.modelId"));
}

// The same collective has the same sequence number on both ranks.
TEST_F(AscendDbImport, CollectivesShareTheirSequenceAcrossRanks) {
  NPUSCOPE_REALDATA_OR_SKIP(r0, kRank0);
  NPUSCOPE_REALDATA_OR_SKIP(r1, kRank1);
  std::map<std::string, std::int32_t> seq[2];
  int i = 0;
  for (const std::string& src : {r0, r1}) {
    const auto trace = import(src);
    ASSERT_TRUE(trace);
    EXPECT_EQ(trace->meta(std::string(collector::kMetaRank)), std::to_string(i));
    std::map<std::int64_t, std::string> names;
    trace->for_each([&](const collector::TaskRow& t) { names[t.task_id] = trace->string(t.name_id); });
    trace->for_each([&](const collector::CommunicationRow& c) { seq[i][names[c.task_id]] = c.sequence; });
    ++i;
  }
  EXPECT_EQ(seq[0], seq[1]);
  EXPECT_EQ(seq[0].size(), 4u);
}

TEST_F(AscendDbImport, MsprofDbImportsItsKernels) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "msprof/msprof_0.db");
  const Sql profile(src);
  const auto trace = import(src);
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->meta(std::string(collector::kMetaSource)), "msprof_db");
  std::int64_t kernels = 0;
  trace->for_each([&](const collector::TaskRow& t) {
    if (t.op_type_id != 0 && t.block_dim > 0) ++kernels;
    EXPECT_EQ(t.device_id, 2);
  });
  EXPECT_EQ(kernels, std::stoll(profile.rows("SELECT COUNT(*) FROM COMPUTE_TASK_INFO")[0][0]));
  const auto devices = trace->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].device_id, 2);
  EXPECT_EQ(devices[0].name, "Ascend910B");
  EXPECT_FALSE(trace->rows<collector::CounterRow>().empty());
  EXPECT_FALSE(trace->rows<collector::ApiRow>().empty());
  EXPECT_FALSE(trace->rows<collector::MarkerRow>().empty());  // MSTX_EVENTS
}

// msprof's PROF_* folder with the db in mindstudio_profiler_output, and torch_npu's folders.
TEST_F(AscendDbImport, FoldersHoldingADbAreDetected) {
  NPUSCOPE_REALDATA_OR_SKIP(ms, "msprof/msprof_0.db");
  NPUSCOPE_REALDATA_OR_SKIP(r0, kRank0);
  const fs::path prof = dir_ / "PROF_000001_20250101" / "mindstudio_profiler_output";
  fs::create_directories(prof);
  fs::copy_file(ms, prof / "msprof_20250101.db");
  const auto s = detect(prof.parent_path().string());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->format, Format::kMsprofDb);
  for (const std::string& p : {r0, r0 + "/ASCEND_PROFILER_OUTPUT", r0 + "/ASCEND_PROFILER_OUTPUT/analysis.db"}) {
    const auto d = detect(p);
    ASSERT_TRUE(d.has_value()) << p;
    EXPECT_EQ(d->format, Format::kAscendPtDb);
    EXPECT_TRUE(d->files[0].ends_with("ascend_pytorch_profiler_0.db")) << p;
  }
}

std::string import_error(const std::string& path) {
  try {
    const auto source = detect(path);
    if (!source) return "not detected";
    import_to_file(*source, path + ".npuscope.db", true);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

TEST_F(AscendDbImport, AForeignSqliteIsAnErrorNamingWhatIsMissing) {
  const std::string db = out("msprof_1.db");
  exec(db, "CREATE TABLE other(a, b); INSERT INTO other VALUES (1, 2);");
  const std::string e = import_error(db);
  EXPECT_NE(e.find(db), std::string::npos) << e;
  EXPECT_NE(e.find("STRING_IDS"), std::string::npos) << e;
  EXPECT_NE(e.find("other"), std::string::npos) << e;
}

TEST_F(AscendDbImport, AMissingColumnIsAnErrorNamingIt) {
  const std::string db = out("ascend_pytorch_profiler_3.db");
  exec(db,
       "CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT); INSERT INTO STRING_IDS VALUES (1, 'x');"
       "CREATE TABLE TASK(begin INTEGER, endNs INTEGER, globalTaskId INTEGER); INSERT INTO TASK VALUES (1, 2, 0);");
  const std::string e = import_error(db);
  EXPECT_NE(e.find(db), std::string::npos) << e;
  EXPECT_NE(e.find("table TASK has no column startNs"), std::string::npos) << e;
}

TEST_F(AscendDbImport, NotSqliteOrAnalysisDbAloneIsAnError) {
  const std::string text = out("msprof_2.db");
  std::ofstream(text) << "not a database";
  EXPECT_NE(import_error(text).find("not an SQLite database"), std::string::npos) << import_error(text);
  fs::create_directories(dir_ / "alone");
  exec(out("alone/analysis.db"), "CREATE TABLE StepTraceTime(step);");
  EXPECT_NE(import_error(out("alone/analysis.db")).find("ascend_pytorch_profiler_{rank}.db"), std::string::npos);
}

// A db cut short (a copy interrupted, a disk full): what can be read is imported and the trace is
// marked incomplete (Note [A database cut short]), or the import says the file is damaged; never a crash.
TEST_F(AscendDbImport, ACutShortDbImportsWhatIsThere) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const std::string full = out("full.db");
  {
    const Sql profile((fs::path(src) / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db").string());
    profile.rows("VACUUM INTO '" + full + "'");  // its tables one after the other
  }
  const auto size = fs::file_size(full);
  const std::string cut = out("ascend_pytorch_profiler_0.db");
  fs::copy_file(full, cut);
  fs::resize_file(cut, size * 6 / 10);
  ImportReport report;
  const auto trace = import(cut, &report);
  ASSERT_TRUE(trace);
  EXPECT_TRUE(report.incomplete);
  EXPECT_FALSE(trace->complete());
  EXPECT_GT(report.tasks, 400);
  // The profiler's own file, cut anywhere: incomplete, or an error naming the file.
  const std::string raw = (fs::path(src) / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db").string();
  for (const int tenths : {1, 3, 6, 9}) {
    const std::string part = out("ascend_pytorch_profiler_" + std::to_string(tenths) + ".db");
    fs::copy_file(raw, part);
    fs::resize_file(part, fs::file_size(raw) * static_cast<std::uintmax_t>(tenths) / 10);
    try {
      const auto source = detect(part);
      ASSERT_TRUE(source);
      EXPECT_TRUE(import_to_file(*source, part + ".npuscope.db", true).incomplete) << part;
    } catch (const ImportError& e) {
      EXPECT_NE(std::string(e.what()).find(part + ": not a readable SQLite database"), std::string::npos) << e.what();
    }
  }
}

// A db whose -wal holds frames and has no -shm (a killed profiler) is read with its frames, and
// nothing is written beside it.
TEST_F(AscendDbImport, AWalWithoutShmIsReadWithItsFrames) {
  const std::string db = out("msprof_9.db");
  exec(db,
       "PRAGMA journal_mode=WAL; CREATE TABLE STRING_IDS(id INTEGER PRIMARY KEY, value TEXT);"
       "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER, streamId INTEGER, connectionId INTEGER,"
       " globalTaskId INTEGER, taskType INTEGER);");
  // Keep the -wal: a second connection writes and is left open while the files are copied.
  sqlite3* w = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &w), SQLITE_OK);
  sqlite3_exec(w,
               "PRAGMA wal_autocheckpoint=0; INSERT INTO STRING_IDS VALUES (1, 'MEMCPY_ASYNC');"
               "INSERT INTO TASK VALUES (10, 20, 0, 1, 5, 0, 1);",
               nullptr, nullptr, nullptr);
  fs::create_directories(dir_ / "killed");
  const fs::path copy = dir_ / "killed" / "msprof_9.db";
  fs::copy_file(db, copy);
  fs::copy_file(db + "-wal", copy.string() + "-wal");
  sqlite3_close(w);
  ASSERT_GT(fs::file_size(copy.string() + "-wal"), 32u);
  const auto trace = import(copy.string());
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->rows<collector::TaskRow>().size(), 1u);
  EXPECT_FALSE(fs::exists(copy.string() + "-shm"));
}

}  // namespace
}  // namespace npuscope::importer
