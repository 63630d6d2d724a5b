// A PROF_* folder of two devices, made from the two ranks of the 910B text export (shared/realdata)
// as msprof lays out one process's two devices: the timeline in two msprof_*.json slices (no Python
// process; the hardware processes labelled "NPU 0" and "NPU 1"), one op_summary_*.csv per device
// (op_summary's column names, Device_id first). Each device's tasks must import as that rank's own
// export does, on its own device id, joined to its own op_summary rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../realdata_util.h"
#include "import_test_dir.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kText = "ascend_pytorch_profiler/text/level1/rank";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What a device's tasks come to: how many, how many joined to their kernel table row (an op type),
// their PMU rows, their kernel time.
struct DeviceTasks {
  std::int64_t tasks = 0, typed = 0, pmu = 0, time_ns = 0;
  bool operator==(const DeviceTasks&) const = default;
};
std::ostream& operator<<(std::ostream& o, const DeviceTasks& d) {
  return o << "{tasks " << d.tasks << ", typed " << d.typed << ", pmu " << d.pmu << ", time " << d.time_ns << "}";
}

std::map<std::int32_t, DeviceTasks> per_device(const collector::TraceReader& t) {
  std::map<std::int32_t, DeviceTasks> out;
  std::map<std::int64_t, std::int32_t> device_of;
  t.for_each([&](const collector::TaskRow& r) {
    DeviceTasks& d = out[r.device_id];
    ++d.tasks;
    d.typed += r.op_type_id != 0;
    d.time_ns += r.end_ns - r.start_ns;
    device_of[r.task_id] = r.device_id;
  });
  t.for_each([&](const collector::TaskPmuRow& p) { ++out[device_of.at(p.task_id)].pmu; });
  return out;
}

class AscendMsprofDevicesTest : public test::ImportTestDir {
 protected:
  // The PROF_* folder made of both ranks' exports.
  fs::path two_device_folder(const std::string& rank0, const std::string& rank1) {
    const fs::path out = dir_ / "PROF_000001_20250109093340_ABCDEFGH" / "mindstudio_profiler_output";
    fs::create_directories(out);
    const std::string ranks[] = {rank0, rank1};
    for (int r = 0; r < 2; ++r) {
      const fs::path export_dir = fs::path(ranks[r]) / "ASCEND_PROFILER_OUTPUT";
      json events = json::parse(read_file(export_dir / "trace_view.json"));
      std::set<json> python;  // msprof's timeline has no Python process
      for (const json& e : events) {
        if (e.value("name", "") == "process_name" && e["args"].value("name", "") == "Python") python.insert(e["pid"]);
      }
      json kept = json::array();
      for (json& e : events) {
        if (python.contains(e.value("pid", json()))) continue;
        if (e.value("name", "") == "process_labels" && e["args"].value("labels", "") == "NPU") {
          e["args"]["labels"] = "NPU " + std::to_string(r);
        }
        kept.push_back(std::move(e));
      }
      std::ofstream(out / ("msprof_20250109093400_slice_" + std::to_string(r) + ".json")) << kept.dump();
      // kernel_details.csv as op_summary_*.csv: msprof's names for its columns, the device first.
      std::istringstream lines(read_file(export_dir / "kernel_details.csv"));
      std::ofstream summary(out / ("op_summary_20250109093400_" + std::to_string(r) + ".csv"), std::ios::binary);
      std::string line;
      for (bool header = true; std::getline(lines, line); header = false) {
        if (header) {
          for (const auto& [from, to] : {std::pair{"Name,", "Op Name,"},
                                         {"Type,", "OP Type,"},
                                         {"Accelerator Core", "Task Type"},
                                         {"Start Time(us)", "Task Start Time(us)"},
                                         {"Duration(us)", "Task Duration(us)"},
                                         {"Wait Time(us)", "Task Wait Time(us)"}}) {
            const std::string f(from);
            line.replace(line.find(f), f.size(), to);
          }
        }
        summary << (header ? std::string("Device_id") : std::to_string(r)) << ',' << line << '\n';
      }
    }
    return out.parent_path();
  }
};

TEST_F(AscendMsprofDevicesTest, EachDevicesTasksOnItsOwnIdJoinedToItsOwnOpSummary) {
  NPUSCOPE_REALDATA_OR_SKIP(rank0, std::string(kText) + "0_ascend_pt");
  NPUSCOPE_REALDATA_OR_SKIP(rank1, std::string(kText) + "1_ascend_pt");
  std::map<std::int32_t, DeviceTasks> want;
  for (const auto& [rank, src] : {std::pair{0, rank0}, {1, rank1}}) {
    const auto alone = per_device(*import(src));
    ASSERT_EQ(alone.size(), 1u);
    ASSERT_EQ(alone.begin()->first, rank);  // the text export's memory_record.csv names its device
    want[rank] = alone.begin()->second;
  }
  ImportReport report;
  const auto trace = import(two_device_folder(rank0, rank1).string(), &report);
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->meta(std::string(collector::kMetaSource)), "msprof_folder");
  EXPECT_EQ(per_device(*trace), want);
  std::set<std::int32_t> devices;
  for (const auto& d : trace->rows<collector::DeviceInfoRow>()) devices.insert(d.device_id);
  EXPECT_EQ(devices, (std::set<std::int32_t>{0, 1}));
  for (const Unmapped& u : report.unmapped) EXPECT_EQ(u.what.find("op_summary"), std::string::npos) << u.what;
  // Each device's collectives on a communicator of its own, numbered from 0 on each.
  std::map<std::int64_t, std::int32_t> device_of_task;
  trace->for_each([&](const collector::TaskRow& t) { device_of_task[t.task_id] = t.device_id; });
  std::map<std::int64_t, std::set<std::int32_t>> devices_of_communicator;
  std::map<std::int64_t, std::int32_t> first_sequence;
  for (const auto& c : trace->rows<collector::CommunicationRow>()) {
    devices_of_communicator[c.communicator_id].insert(device_of_task.at(c.task_id));
    first_sequence.try_emplace(c.communicator_id, c.sequence);
  }
  ASSERT_EQ(devices_of_communicator.size(), 2u);
  for (const auto& [id, on] : devices_of_communicator) EXPECT_EQ(on.size(), 1u) << "communicator " << id;
  for (const auto& [id, first] : first_sequence) EXPECT_EQ(first, 0) << "communicator " << id;
}

}  // namespace
}  // namespace npuscope::importer
