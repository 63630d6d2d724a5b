// npuscope export: a recorded trace as a Perfetto protobuf trace (ui.perfetto.dev, trace_processor),
// Chrome trace JSON (the Perfetto UI and chrome://tracing), msprof-style CSV files, .npy files of the tensors it
// dumped, or a PyTorch script's dump in msprobe's layout (dump.json per step).
//
//   npuscope export TRACE.db [--perfetto FILE.pftrace] [--chrome FILE.json] [--csv DIR] [--npy DIR] [--msprobe DIR]
//
// At least one output; several at once are written in that order, each printed as it is done.
#include <cstdio>
#include <string>

#include "command.h"
#include "npuscope/analyzer/msprobe_entries.h"
#include "npuscope/collector/export_chrome.h"
#include "npuscope/collector/export_csv.h"
#include "npuscope/collector/export_msprobe.h"
#include "npuscope/collector/export_npy.h"
#include "npuscope/collector/export_perfetto.h"
#include "npuscope/collector/trace_reader.h"
#include "open_trace.h"

namespace npuscope::cli {
namespace {

namespace col = npuscope::collector;

constexpr const char* kUsage =
    "npuscope export TRACE.db [--perfetto FILE.pftrace] [--chrome FILE.json] [--csv DIR] [--npy DIR] [--msprobe DIR]";

struct ExportFlags {
  std::string trace, perfetto, chrome, csv, npy, msprobe;
};

std::string human_size(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[32];
  if (b < 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  } else if (b < 1024.0 * 1024.0 * 1024.0) {
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1024.0 * 1024.0));
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  }
  return text;
}

void write_perfetto(const col::TraceReader& reader, const std::string& path) {
  const col::PerfettoExportResult r = col::export_perfetto_trace(reader, path);
  std::printf(
      "wrote %s: %lld packets on %lld tracks (%lld tasks, %lld API calls, %lld memcpys, %lld markers, %lld memory "
      "records, %lld flows), %s\n",
      r.path.c_str(), static_cast<long long>(r.packets), static_cast<long long>(r.tracks),
      static_cast<long long>(r.tasks), static_cast<long long>(r.apis), static_cast<long long>(r.memcpys),
      static_cast<long long>(r.markers), static_cast<long long>(r.memory_records), static_cast<long long>(r.flows),
      human_size(r.bytes).c_str());
  if (r.pytorch_ops > 0) {
    std::printf("  %lld PyTorch ops and module calls, with flows to the %lld tasks they launched\n",
                static_cast<long long>(r.pytorch_ops), static_cast<long long>(r.op_flows));
  }
  if (r.unlinked_op_tasks > 0) {
    std::printf("  %lld tasks without a flow from their op (op id of 2^43 or more, or past its 2^20th task)\n",
                static_cast<long long>(r.unlinked_op_tasks));
  }
  if (r.communications > 0)
    std::printf("  %lld collectives, on a track per communicator\n", static_cast<long long>(r.communications));
  if (r.counter_values > 0)
    std::printf("  %lld counter values of the profile (COUNTER)\n", static_cast<long long>(r.counter_values));
  if (r.pmu_values > 0) {
    std::printf("  %lld hardware metrics as task arguments (\"pmu.*\")\n", static_cast<long long>(r.pmu_values));
  }
  if (r.compared_tasks > 0) {
    std::printf("  %lld tasks with a compare verdict (\"compare.*\" arguments)\n",
                static_cast<long long>(r.compared_tasks));
  }
  if (r.overflow_tasks > 0) std::printf("  %lld overflowing tasks marked\n", static_cast<long long>(r.overflow_tasks));
  if (r.underflow_tasks > 0)
    std::printf("  %lld underflowing tasks marked\n", static_cast<long long>(r.underflow_tasks));
  if (r.extra_lanes > 0) {
    std::printf("  %lld extra lanes for rows that overlap others on their stream or thread (named \"... (2)\")\n",
                static_cast<long long>(r.extra_lanes));
  }
  if (r.negative_times > 0) {
    std::printf("  %lld rows left out: they start before time 0, which Perfetto cannot show\n",
                static_cast<long long>(r.negative_times));
  }
  std::printf("  open it in https://ui.perfetto.dev, or query it with Perfetto's trace_processor\n");
}

void write_chrome(const col::TraceReader& reader, const std::string& path) {
  const col::ChromeExportResult r = col::export_chrome_trace(reader, path);
  std::printf(
      "wrote %s: %lld events (%lld tasks, %lld API calls, %lld memcpys, %lld markers, %lld memory records, "
      "%lld flows), %s\n",
      r.path.c_str(), static_cast<long long>(r.events), static_cast<long long>(r.tasks), static_cast<long long>(r.apis),
      static_cast<long long>(r.memcpys), static_cast<long long>(r.markers), static_cast<long long>(r.memory_records),
      static_cast<long long>(r.flows), human_size(r.bytes).c_str());
  if (r.pytorch_ops > 0) std::printf("  %lld PyTorch ops and module calls\n", static_cast<long long>(r.pytorch_ops));
  if (r.overflow_tasks > 0) std::printf("  %lld overflowing tasks marked\n", static_cast<long long>(r.overflow_tasks));
  if (r.underflow_tasks > 0)
    std::printf("  %lld underflowing tasks marked\n", static_cast<long long>(r.underflow_tasks));
  std::printf("  open it in https://ui.perfetto.dev or chrome://tracing\n");
}

void write_csv(const col::TraceReader& reader, const std::string& dir) {
  const col::CsvExportResult r = col::export_csv(reader, dir);
  for (const col::CsvFile& f : r.files) {
    std::printf("wrote %s: %lld rows\n", f.path.c_str(), static_cast<long long>(f.rows));
  }
}

void write_npy(const col::TraceReader& reader, const std::string& dir) {
  const col::NpyExportResult r = col::export_npy(reader, dir);
  std::printf("wrote %lld .npy files to %s (%s), index %s\n", static_cast<long long>(r.files), r.directory.c_str(),
              human_size(r.bytes).c_str(), r.index_path.c_str());
  if (r.without_data > 0) {
    std::printf("  %lld tensors had statistics only (no data): listed in the index as \"no data\"\n",
                static_cast<long long>(r.without_data));
  }
  if (r.bad_data > 0) {
    std::printf("  %lld tensors had unusable data: listed in the index as \"bad data\"\n",
                static_cast<long long>(r.bad_data));
  }
}

void write_msprobe(const col::TraceReader& reader, const std::string& dir) {
  if (const std::string problem = analyzer::msprobe_dump_problem(reader); !problem.empty()) {
    throw col::ExportError(problem);
  }
  const col::MsprobeExportResult r = col::export_msprobe(analyzer::msprobe_dumps(reader), dir);
  for (const std::string& f : r.dump_files) std::printf("wrote %s\n", f.c_str());
  std::printf("  %lld API entries, %lld module entries, %lld tensors", static_cast<long long>(r.api_entries),
              static_cast<long long>(r.module_entries), static_cast<long long>(r.tensors));
  if (r.files > 0) {
    std::printf(", %lld .npy files (%s)", static_cast<long long>(r.files), human_size(r.bytes).c_str());
  }
  std::printf("\n");
  if (r.bad_data > 0) {
    std::printf("  %lld dumped tensors had unusable data: statistics only in dump.json\n",
                static_cast<long long>(r.bad_data));
  }
  for (const std::string& note : r.notes) std::printf("  %s\n", note.c_str());
}

}  // namespace

int export_command(int argc, char** argv) {
  ExportFlags f;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&f.trace),
                                                 "the trace database, or a profile `npuscope import` reads "
                                                 "(positional)")(
      "perfetto", po::value(&f.perfetto),
      "write a Perfetto protobuf trace to FILE (ui.perfetto.dev, trace_processor): tracks per stream, thread and "
      "communicator, flows from API calls and PyTorch ops to their tasks, counters, a real profile's hardware "
      "metrics and a compare's verdicts as task arguments")(
      "chrome", po::value(&f.chrome), "write Chrome trace JSON to FILE (Perfetto UI, chrome://tracing)")(
      "csv", po::value(&f.csv), "write op_summary, op_statistic, api_statistic and memory_record .csv into DIR")(
      "npy", po::value(&f.npy), "write the dumped tensors as .npy files and index.csv into DIR")(
      "msprobe", po::value(&f.msprobe),
      "PyTorch scripts: write the dump in msprobe's layout into DIR (step{S}/rank0/dump.json, construct.json, "
      "dump_tensor_data/*.npy)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) return 0;
  if (f.trace.empty()) throw UsageError(std::string("no trace given\nusage: ") + kUsage);
  if (f.perfetto.empty() && f.chrome.empty() && f.csv.empty() && f.npy.empty() && f.msprobe.empty()) {
    throw UsageError(
        std::string("nothing to export: give --perfetto FILE.pftrace, --chrome FILE.json, --csv DIR, --npy "
                    "DIR and/or --msprobe DIR\nusage: ") +
        kUsage);
  }
  const auto reader = open_trace(f.trace, {});
  if (!reader->complete()) {
    std::printf("note: %s is incomplete (the workload did not finish cleanly); exporting what it holds\n",
                reader->path().c_str());
  }
  if (!f.perfetto.empty()) write_perfetto(*reader, f.perfetto);
  if (!f.chrome.empty()) write_chrome(*reader, f.chrome);
  if (!f.csv.empty()) write_csv(*reader, f.csv);
  if (!f.npy.empty()) write_npy(*reader, f.npy);
  if (!f.msprobe.empty()) write_msprobe(*reader, f.msprobe);
  return 0;
}

}  // namespace npuscope::cli
