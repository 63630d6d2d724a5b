// The Ascend text importers (Note [Ascend text import]) on the real 910B profile of shared/realdata:
// the golden checks (the export's own step_trace_time.csv, kernel_details.csv's kernel time,
// communication_matrix.json, the db export's kernels per op type), the joins, the older layouts
// (no trace_view.json; msprof PROF_* folders old and new; a bare timeline) and bad input.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "../../importer/src/csv_reader.h"
#include "../../importer/src/json_file.h"
#include "../realdata_util.h"
#include "import_test_dir.h"
#include "npuscope/analyzer/step_time.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::TraceReader;

constexpr const char* kRank0 = "ascend_pytorch_profiler/text/level1/rank0_ascend_pt";
constexpr const char* kRank1 = "ascend_pytorch_profiler/text/level1/rank1_ascend_pt";
constexpr const char* kDb0 =
    "ascend_pytorch_profiler/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";

class AscendTextTest : public test::ImportTestDir {};

double us_of(std::string_view v) { return csv_double(v).value_or(NAN); }

// step_trace_time.csv, read here: step -> column -> us.
std::map<std::int64_t, std::map<std::string, double>> step_trace_time(const std::string& path) {
  std::map<std::int64_t, std::map<std::string, double>> out;
  CsvReader csv(path);
  const int step = csv.require("Step");
  std::vector<int> cols;
  for (std::size_t i = 0; i < csv.columns(); ++i) cols.push_back(static_cast<int>(i));
  while (csv.next()) {
    auto& row = out[csv_int(csv.field(step)).value_or(-1)];
    for (const int c : cols) row[csv.header(static_cast<std::size_t>(c))] = us_of(csv.field(c));
  }
  return out;
}

void expect_near_pct(double got_us, double want_us, const std::string& what) {
  EXPECT_NEAR(got_us, want_us, std::max(0.005 * std::abs(want_us), 0.01)) << what;
}

// torch_npu computes step_trace_time.csv in float microseconds since the epoch, which at 1.7e15 us
// resolve a quarter of a microsecond: npuscope's exact figures agree within that.
void expect_within_float_us(double got_us, double want_us, const std::string& what) {
  EXPECT_NEAR(got_us, want_us, 0.25) << what;
}

void check_step_time(const std::string& folder, TraceReader& trace) {
  const auto want = step_trace_time(folder + "/ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
  ASSERT_FALSE(want.empty());
  const auto got = analyzer::step_times(trace);
  std::map<std::int64_t, analyzer::StepTime> by_step;
  for (const auto& s : got) by_step[s.step.value_or(-1)] = s;
  for (const auto& [step, cols] : want) {
    ASSERT_TRUE(by_step.contains(step)) << "step " << step;
    const analyzer::StepTime& s = by_step[step];
    const std::string at = folder + " step " + std::to_string(step) + ": ";
    expect_within_float_us(s.computing_ns / 1e3, cols.at("Computing"), at + "Computing");
    expect_within_float_us(s.communication_not_overlapped_ns() / 1e3, cols.at("Communication(Not Overlapped)"),
                           at + "Communication(Not Overlapped)");
    expect_within_float_us(s.overlapped_ns / 1e3, cols.at("Overlapped"), at + "Overlapped");
    expect_within_float_us(s.communication_ns / 1e3, cols.at("Communication"), at + "Communication");
    expect_within_float_us(s.free_ns / 1e3, cols.at("Free"), at + "Free");
    if (cols.contains("Preparing"))
      expect_within_float_us(s.preparing_ns / 1e3, cols.at("Preparing"), at + "Preparing");
  }
}

TEST_F(AscendTextTest, StepTimeReproducesStepTraceTimeCsv) {
  for (const char* rank : {kRank0, kRank1}) {
    NPUSCOPE_REALDATA_OR_SKIP(src, rank);
    const auto trace = import(src);
    ASSERT_NE(trace, nullptr);
    check_step_time(src, *trace);
  }
}

TEST_F(AscendTextTest, KernelTimeIsKernelDetailsDuration) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  double want_us = 0;
  std::int64_t rows = 0;
  {
    CsvReader csv(src + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    const int dur = csv.require("Duration(us)");
    while (csv.next()) want_us += us_of(csv.field(dur)), ++rows;
  }
  const auto trace = import(src);
  // Every kernel_details row is a task with its op type (a kernel, a collective, a DSA task).
  std::int64_t typed = 0, ns = 0;
  trace->for_each([&](const collector::TaskRow& t) {
    if (t.op_type_id == 0) return;
    ++typed;
    ns += t.end_ns - t.start_ns;
  });
  EXPECT_EQ(typed, rows);
  EXPECT_NEAR(ns / 1e3, want_us, 0.001 * static_cast<double>(rows));
}

TEST_F(AscendTextTest, CommunicationMatrixAgreesWithCommunicationMatrixJson) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const auto trace = import(src);
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> got;  // peer -> bytes, ns
  for (const auto& l : trace->rows<collector::CommunicationLinkRow>()) {
    got[l.peer_rank].first += l.bytes;
    got[l.peer_rank].second += l.time_ns;
  }
  const rapidjson::Document d = read_json_file(src + "/ASCEND_PROFILER_OUTPUT/communication_matrix.json");
  std::size_t checked = 0;
  for (const auto& step : d.GetObject()) {
    for (const auto& kind : step.value.GetObject()) {
      for (const auto& op : kind.value.GetObject()) {
        if (std::string_view(op.name.GetString()).find("-total@") == std::string_view::npos) continue;
        for (const auto& link : op.value.GetObject()) {
          const std::string key = link.name.GetString();
          const std::int32_t src_rank = std::stoi(key.substr(0, key.find('-')));
          const std::int32_t dst = std::stoi(key.substr(key.find('-') + 1));
          ASSERT_EQ(src_rank, 0);
          ASSERT_TRUE(got.contains(dst)) << key;
          const double mb = json_double(link.value, "Transit Size(MB)").value();
          const double ms = json_double(link.value, "Transit Time(ms)").value();
          EXPECT_NEAR(static_cast<double>(got[dst].first) / 1e6, mb, 1e-6 * mb + 1e-6) << key;
          EXPECT_NEAR(static_cast<double>(got[dst].second) / 1e6, ms, 1e-6 * ms + 1e-6) << key;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 8u);
  EXPECT_EQ(got.size(), 8u);
}

TEST_F(AscendTextTest, SameKernelsPerOpTypeAsTheDbExport) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  NPUSCOPE_REALDATA_OR_SKIP(db, kDb0);
  std::map<std::string, std::int64_t> want;  // the db's COMPUTE_TASK_INFO, read directly
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h,
                               "SELECT s.value, COUNT(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON c.opType = s.id "
                               "GROUP BY s.value",
                               -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    want[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  const auto trace = import(src);
  std::map<std::string, std::int64_t> got;
  trace->for_each([&](const collector::TaskRow& t) {
    if (t.op_type_id != 0 && t.task_type != static_cast<std::int32_t>(TaskType::kCommunication)) {
      ++got[trace->string(t.op_type_id)];
    }
  });
  EXPECT_EQ(got, want);
  EXPECT_EQ(got["TransData"], 57);
  EXPECT_EQ(got["Mul"], 20);
}

TEST_F(AscendTextTest, MapsHostOpsStepsDeviceAndJoins) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  ImportReport report;
  const auto trace = import(src, &report);
  EXPECT_TRUE(trace->complete());
  EXPECT_EQ(trace->meta(std::string(collector::kMetaSource)), "ascend_pytorch_profiler_text");
  EXPECT_EQ(trace->meta(std::string(collector::kMetaRank)), "0");
  EXPECT_EQ(trace->meta(std::string(collector::kMetaWorldSize)), "8");
  const auto devices = trace->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "Ascend910B");
  const auto markers = trace->rows<collector::MarkerRow>();
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].step, 50);
  EXPECT_EQ(trace->string(markers[0].name_id), "ProfilerStep#50");
  // 535 Ascend Hardware events (their HCCL plane twins joined to them) and 4 collectives.
  EXPECT_EQ(report.tasks, 539);
  EXPECT_EQ(trace->count("COMMUNICATION"), 4);
  EXPECT_EQ(trace->count("COMMUNICATOR"), 1);
  EXPECT_GT(trace->count("TASK_PMU"), 185 * 20);
  EXPECT_GT(trace->count("COUNTER"), 4000);
  EXPECT_GT(trace->count("MEMORY_RECORD"), 300);
  // call_index counts each name's calls in start order; kernels carry their launching op and shapes.
  std::map<collector::StringId, std::vector<std::pair<std::int64_t, std::int32_t>>> calls;
  std::int64_t kernels = 0, launched = 0, shaped = 0;
  trace->for_each([&](const collector::TaskRow& t) {
    calls[t.name_id].emplace_back(t.start_ns, t.call_index);
    if (!is_device_kernel(t.task_type)) return;
    ++kernels;
    if (t.pytorch_api_id != 0) ++launched;
    if (t.input_shapes_id != 0) ++shaped;
  });
  for (auto& [name, list] : calls) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 0; i < list.size(); ++i) EXPECT_EQ(list[i].second, static_cast<std::int32_t>(i));
  }
  EXPECT_EQ(kernels, 187);  // kernel_details' rows but its 4 HCCL ops: 2 of them DSA_SQE (DropoutGenMask)
  EXPECT_GE(launched, kernels * 9 / 10);
  EXPECT_GE(shaped, kernels * 9 / 10);
  std::int64_t first_transdata_shapes = 0;
  trace->for_each([&](const collector::TaskRow& t) {
    if (first_transdata_shapes == 0 && trace->string(t.name_id) == "trans_TransData_0") {
      first_transdata_shapes = t.input_shapes_id;
      EXPECT_EQ(trace->string(t.input_dtypes_id), "f32;");
      EXPECT_EQ(trace->string(t.output_formats_id), "NC1HWC0;");
      EXPECT_EQ(t.block_dim, 32);
    }
  });
  EXPECT_EQ(trace->string(first_transdata_shapes), "32,3,224,224;");
  // What is passed over is counted.
  std::set<std::string> unmapped;
  for (const auto& u : report.unmapped) unmapped.insert(u.what);
  EXPECT_TRUE(unmapped.contains("event Overlap Analysis Computing"));
  EXPECT_TRUE(unmapped.contains("column Wait Time(us)"));
}

// ---- older and other layouts ----------------------------------------------------------------------

// A collective's row, as the trace a test compares: name, kind, sequence, its communicator's name,
// size and members, and its own times.
using CollectiveSeen = std::tuple<std::string, std::int32_t, std::int32_t, std::string, std::int32_t, std::string,
                                  std::int64_t, std::int64_t, std::int64_t>;
std::vector<CollectiveSeen> collectives(const TraceReader& t) {
  std::map<std::int64_t, collector::CommunicatorRow> communicators;
  for (const auto& c : t.rows<collector::CommunicatorRow>()) communicators[c.communicator_id] = c;
  std::map<std::int64_t, std::string> names;
  t.for_each([&](const collector::TaskRow& r) { names[r.task_id] = t.string(r.name_id); });
  std::vector<CollectiveSeen> out;
  for (const auto& c : t.rows<collector::CommunicationRow>()) {
    const collector::CommunicatorRow& g = communicators.at(c.communicator_id);
    out.emplace_back(names.at(c.task_id), c.kind, c.sequence, t.string(g.name_id), g.size, t.string(g.members_id),
                     c.arrival_ns, c.start_ns, c.end_ns);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(AscendTextTest, AnExportWithoutTraceViewTakesItsTasksFromKernelDetails) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const fs::path root = dir_ / "old_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
  fs::create_directories(root);
  for (const char* f :
       {"kernel_details.csv", "step_trace_time.csv", "communication.json", "communication_matrix.json"}) {
    fs::copy_file(src + "/ASCEND_PROFILER_OUTPUT/" + f, root / f);
  }
  fs::copy_file(src + "/profiler_info_0.json", root.parent_path() / "profiler_info_0.json");
  ImportReport report;
  const auto trace = import((dir_ / "old_ascend_pt").string(), &report);
  EXPECT_EQ(report.tasks, 191);
  const auto markers = trace->rows<collector::MarkerRow>();
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].step, 50);
  // Computing is the kernels' union, whatever the timeline: the same figure.
  const auto steps = analyzer::step_times(*trace);
  ASSERT_EQ(steps.size(), 1u);
  expect_near_pct(steps[0].computing_ns / 1e3, 8873.756, "Computing");
  // Its HCCL rows are collectives as the timeline's are (the same code from the kernel rows on): the
  // same communicator (its size from communication_matrix.json's links), kinds, sequences, waits from
  // communication.json, and times (kernel_details' rounding of them: within 1 us).
  auto without = collectives(*trace);
  ASSERT_EQ(without.size(), 4u);
  auto with = collectives(*import(src));
  ASSERT_EQ(with.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(std::get<6>(without[i]), std::get<6>(with[i]), 1000);
    EXPECT_NEAR(std::get<7>(without[i]), std::get<7>(with[i]), 1000);
    EXPECT_NEAR(std::get<8>(without[i]), std::get<8>(with[i]), 1000);
    for (auto* c : {&without[i], &with[i]}) std::get<6>(*c) = std::get<7>(*c) = std::get<8>(*c) = 0;
  }
  EXPECT_EQ(without, with);
  EXPECT_EQ(std::get<5>(without[0]), "0,1,2,3,4,5,6,7");
  EXPECT_EQ(std::get<3>(without[0]), "17522688603477080586");
  EXPECT_EQ(std::get<1>(without[0]), static_cast<std::int32_t>(CollectiveKind::kAllReduce));
}

TEST_F(AscendTextTest, AMsprofFolderAndABareMsprofJson) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  NPUSCOPE_REALDATA_OR_SKIP(summary, "msprof/op_summary_1.csv");
  // mindstudio_profiler_output/: a timeline and msprof's op_summary (of another run: its rows are
  // tasks of their own, none lost).
  const fs::path prof = dir_ / "PROF_000001_20250109_ABCDEF";
  fs::create_directories(prof / "mindstudio_profiler_output");
  fs::copy_file(src + "/ASCEND_PROFILER_OUTPUT/trace_view.json",
                prof / "mindstudio_profiler_output/msprof_20250109.json");
  fs::copy_file(summary, prof / "mindstudio_profiler_output/op_summary_20250109.csv");
  std::int64_t summary_rows = 0;
  {
    CsvReader csv(summary);
    while (csv.next()) ++summary_rows;
  }
  const auto s = detect(prof.string());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->format, Format::kMsprofFolder);
  ImportReport report;
  auto trace = import(prof.string(), &report);
  EXPECT_EQ(report.tasks, 539 + summary_rows);
  EXPECT_GT(trace->count("TASK_PMU"), 0);
  trace.reset();
  // The same timeline alone.
  const fs::path bare = dir_ / "msprof_0.json";
  fs::copy_file(src + "/ASCEND_PROFILER_OUTPUT/trace_view.json", bare);
  ASSERT_EQ(detect(bare.string())->format, Format::kChromeJson);
  trace = import(bare.string(), &report);
  EXPECT_EQ(report.tasks, 539);
  EXPECT_EQ(trace->rows<collector::MarkerRow>().size(), 1u);
}

TEST_F(AscendTextTest, AnOlderMsprofFolderMovesBootRelativeTimesToTheEpoch) {
  const fs::path dev = dir_ / "PROF_000002_old" / "device_3";
  fs::create_directories(dev / "timeline");
  std::ofstream(dev / "start_info.3")
      << R"({"collectionTimeBegin": "1700000000000000", "clockMonotonicRaw": "5000000000"})";
  std::ofstream(dev / "info.json.3")
      << R"({"platform_version": "5", "DeviceInfo": [{"id": 3, "ai_core_num": 24, "aiv_num": 48, "aic_frequency": "1800"}]})";
  std::ofstream(dev / "timeline" / "task_time_3.json")
      << R"([{"name": "process_name", "pid": 7, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},)"
      << R"({"name": "MatMul_1", "pid": 7, "tid": 2, "ts": 6000.5, "dur": 10, "ph": "X",)"
      << R"( "args": {"Task Type": "AI_CORE", "Stream Id": 2, "Task Id": 9}}])";
  // Its kernel table, on the same boot-relative clock: joined to the event.
  fs::create_directories(dev / "summary");
  std::ofstream(dev / "summary" / "op_summary_3_1.csv")
      << "Device_id,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Stream ID,Task ID,Block Dim\n"
         "3,MatMul_1,MatMul,AI_CORE,6000.5,10,2,9,20\n";
  ImportReport report;
  const auto trace = import((dir_ / "PROF_000002_old").string(), &report);
  const auto tasks = trace->rows<collector::TaskRow>();
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].start_ns, 1700000000000000LL * 1000 - 5000000000LL + 6000500);
  EXPECT_EQ(tasks[0].device_id, 3);
  EXPECT_EQ(tasks[0].stream_id, 2);
  EXPECT_EQ(trace->string(tasks[0].op_type_id), "MatMul");
  EXPECT_EQ(tasks[0].block_dim, 20);
  const auto devices = trace->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].cube_cores, 24);
  EXPECT_EQ(devices[0].vector_cores, 48);
}

// ---- bad input --------------------------------------------------------------------------------------

TEST_F(AscendTextTest, ATruncatedTraceViewImportsWhatIsThereMarkedIncomplete) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const fs::path copy = copy_dir(src, "cut_ascend_pt");
  const fs::path tv = copy / "ASCEND_PROFILER_OUTPUT/trace_view.json";
  fs::resize_file(tv, fs::file_size(tv) / 2);
  ImportReport report;
  const auto trace = import(copy.string(), &report);
  EXPECT_TRUE(report.incomplete);
  EXPECT_FALSE(trace->complete());
  EXPECT_GT(report.tasks, 100);
}

TEST_F(AscendTextTest, AKernelTableWithoutAJoinColumnNamesTheFileAndColumn) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const fs::path copy = copy_dir(src, "renamed_ascend_pt");
  const fs::path kd = copy / "ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  std::string text;
  {
    std::ifstream in(kd, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("Start Time(us)"), 14, "Begin(us)");
  std::ofstream(kd, std::ios::binary) << text;
  const std::string error = import_error(copy);
  EXPECT_NE(error.find("kernel_details.csv"), std::string::npos) << error;
  EXPECT_NE(error.find("Start Time(us)"), std::string::npos) << error;
}

TEST_F(AscendTextTest, AFolderMissingItsKernelTableNamesTheFile) {
  NPUSCOPE_REALDATA_OR_SKIP(src, kRank0);
  const fs::path copy = copy_dir(src, "nokernels_ascend_pt");
  fs::remove(copy / "ASCEND_PROFILER_OUTPUT/kernel_details.csv");
  std::string error = import_error(copy);
  EXPECT_NE(error.find("kernel_details.csv: missing"), std::string::npos) << error;
  // Without either file of the timeline, the folder is recognisably an export, and broken.
  fs::remove(copy / "ASCEND_PROFILER_OUTPUT/trace_view.json");
  error = import_error(copy);
  EXPECT_NE(error.find("neither trace_view.json nor kernel_details.csv"), std::string::npos) << error;
}

TEST_F(AscendTextTest, AProfFolderWithoutExportSaysSo) {
  fs::create_directories(dir_ / "PROF_000003_empty" / "host");
  const std::string error = import_error(dir_ / "PROF_000003_empty");
  EXPECT_NE(error.find("mindstudio_profiler_output"), std::string::npos) << error;
}

}  // namespace
}  // namespace npuscope::importer
