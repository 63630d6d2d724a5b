// Note [Ascend text import] in ascend_text_import.h; the mapping is docs/import.md.
#include "ascend_text_import.h"

#include <zlib.h>

#include <algorithm>
#include <memory>

#include "ascend_side_files.h"
#include "ascend_timeline.h"
#include "chrome_events.h"
#include "kernel_table.h"
#include "source_files.h"

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kOutput = "ASCEND_PROFILER_OUTPUT";

bool has_db(const fs::path& dir) { return !files_like(dir, "", ".db").empty(); }

// The first non-blank character of a (possibly gzip) file.
char first_char(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return '\0';
  char buf[512];
  const int n = gzread(f, buf, sizeof buf);
  gzclose(f);
  for (int i = 0; i < n; ++i) {
    const char c = buf[i];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != '\xEF' && c != '\xBB' && c != '\xBF') return c;
  }
  return '\0';
}

// ---- the text export --------------------------------------------------------------------------------

// The files of a text export, in the order the import reads them (the side files first).
constexpr std::string_view kTextFiles[] = {"profiler_metadata.json",
                                           "communication.json",
                                           "communication_matrix.json",
                                           "memory_record.csv",
                                           "npu_module_mem.csv",
                                           "operator_memory.csv",
                                           "kernel_details.csv",
                                           "trace_view.json",
                                           "operator_details.csv",
                                           "step_trace_time.csv",
                                           "op_statistic.csv",
                                           "api_statistic.csv",
                                           "l2_cache.csv"};

struct TextLayout {
  fs::path root;    // the *_ascend_pt folder (profiler_info_{rank}.json), or the output folder itself
  fs::path output;  // ASCEND_PROFILER_OUTPUT
};

std::optional<TextLayout> text_layout(const fs::path& path) {
  if (!is_dir(path)) return std::nullopt;
  if (path.filename() == kOutput) return TextLayout{path.parent_path(), path};
  if (is_dir(path / kOutput)) return TextLayout{path, path / kOutput};
  return std::nullopt;
}

std::string find_in(const TextLayout& l, std::string_view name) {
  for (const fs::path& dir : {l.output, l.root}) {
    if (is_file(dir / name)) return (dir / name).string();
  }
  return {};
}

// DEVICE_INFO from msprof's info.json of `device` under `root` (an msprof folder, or a torch_npu
// export's PROF_* raw data), else a row of its own; torch_npu's export and an info.json without a
// chip name do not name the device: the cores its kernels ran on tell the family.
void write_device(const fs::path& root, ImportSink& sink, std::int32_t device, bool split_cores) {
  const std::string name = split_cores ? "Ascend910B" : "Ascend";
  const std::string dir_name = "device_" + std::to_string(device);
  std::vector<fs::path> dirs{root / dir_name};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.path().filename().string().starts_with("PROF_")) dirs.push_back(e.path() / dir_name);
  }
  for (const fs::path& d : dirs) {
    if (is_dir(d) && read_msprof_info(d.string(), device, name, sink)) return;
  }
  collector::DeviceInfoRow row;
  row.device_id = device;
  row.name = name;
  sink.add(std::move(row));
  sink.note("the profile does not name its device: written as \"" + name + "\"" +
            (split_cores ? " (its kernels ran on separate cube and vector cores: the 910B / 910_93 family)" : ""));
}

// A timeline (its slices) and its kernel table (its files), the side files read into `in` already.
// `device_from_table`: the device of what says none is the kernel table's first Device_id (msprof's
// op_summary), when it has one.
TimelineResult import_timeline(ImportSink& sink, TimelineInputs in, const std::vector<std::string>& kernel_csvs,
                               const std::vector<std::string>& timelines, bool device_from_table = false) {
  std::unique_ptr<KernelTable> kernels;
  if (!kernel_csvs.empty()) {
    kernels = std::make_unique<KernelTable>(kernel_csvs);
    for (const std::string& cut : kernels->truncated()) {
      sink.set_incomplete();
      sink.note(cut + " ends in the middle of a row (cut short?): the rows before the cut are imported");
    }
    in.kernels = kernels.get();
    if (device_from_table && kernels->device()) in.device_id = static_cast<std::int32_t>(*kernels->device());
  }
  AscendTimeline timeline(sink, std::move(in));
  for (const std::string& t : timelines) timeline.read(t);
  TimelineResult r = timeline.finish();
  if (kernels && kernels->split_cores()) r.split_cores = true;
  return r;
}

}  // namespace

std::optional<Source> detect_ascend_text(const fs::path& path) {
  const auto l = text_layout(path);
  if (!l) return std::nullopt;
  const bool timeline = is_file(l->output / "trace_view.json");
  const bool kernels = is_file(l->output / "kernel_details.csv");
  if (!timeline && !kernels) {
    if (has_db(l->output)) return std::nullopt;  // the db export
    if (!fs::path(path).filename().string().ends_with("_ascend_pt") && path.filename() != kOutput) return std::nullopt;
    throw ImportError((l->output).string() +
                      ": neither trace_view.json nor kernel_details.csv (nor a db export) is there: not a finished "
                      "Ascend PyTorch Profiler export (was the profiler stopped before it exported? "
                      "torch_npu.profiler.profiler.analyse() exports it again)");
  }
  Source s{Format::kAscendPtText, path.string(), {}};
  for (const auto& e : files_like(l->root, "profiler_info", ".json")) s.files.push_back(e);
  for (std::string_view name : kTextFiles) {
    if (auto f = find_in(*l, name); !f.empty()) s.files.push_back(std::move(f));
  }
  return s;
}

void import_ascend_text(const Source& source, ImportSink& sink) {
  const auto l = text_layout(source.path);
  if (!l) throw ImportError(source.path + ": no ASCEND_PROFILER_OUTPUT folder");
  TimelineInputs in;
  ProfilerInfo info;
  const std::vector<std::string> infos = files_like(l->root, "profiler_info", ".json");
  if (!infos.empty()) info = read_profiler_info(infos.front(), sink);
  in.rank = info.rank;
  const auto file = [&](std::string_view name) { return find_in(*l, name); };
  if (const auto f = file("profiler_metadata.json"); !f.empty()) read_profiler_metadata(f, in, sink);
  if (const auto f = file("communication.json"); !f.empty()) read_communication(f, in, sink);
  if (const auto f = file("communication_matrix.json"); !f.empty()) read_communication_matrix(f, in, sink);
  std::int32_t device = info.rank >= 0 ? info.rank : 0;
  if (const auto f = file("memory_record.csv"); !f.empty()) {
    if (const auto d = read_memory_record(f, sink, 0)) device = *d;
  }
  in.device_id = device;
  if (const auto f = file("npu_module_mem.csv"); !f.empty()) read_module_memory(f, device, sink, 0);
  if (const auto f = file("operator_memory.csv"); !f.empty()) read_operator_memory(f, device, sink, 0);
  const std::string kernel_csv = file("kernel_details.csv");
  const std::string trace = file("trace_view.json");
  if (kernel_csv.empty() && info.npu_activity) {
    throw ImportError((l->output / "kernel_details.csv").string() +
                      ": missing: the profile recorded the NPU (profiler_info's activities) but its kernel table "
                      "is not there (an export cut short? torch_npu.profiler.profiler.analyse() exports it again)");
  }
  if (trace.empty()) sink.note("no trace_view.json (an older export): the tasks are kernel_details.csv's rows");
  std::vector<std::string> timelines;
  if (!trace.empty()) timelines.push_back(trace);
  const TimelineResult r = import_timeline(
      sink, std::move(in), kernel_csv.empty() ? std::vector<std::string>{} : std::vector{kernel_csv}, timelines);
  for (const std::int32_t d : r.devices) write_device(l->root, sink, d, r.split_cores);
  if (r.world_size > 0) sink.meta(collector::kMetaWorldSize, std::to_string(r.world_size));
  // What the export derived from the data npuscope imports: its tools compute the same.
  for (const auto& [name, what] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {"operator_details.csv", "row (per-op sums npuscope derives from PYTORCH_API and TASK)"},
           {"step_trace_time.csv", "row (step figures npuscope derives: analyze's step time)"},
           {"op_statistic.csv", "row (op statistics npuscope derives from TASK)"},
           {"api_statistic.csv", "row (API statistics npuscope derives from API)"},
           {"l2_cache.csv", "row (a task's L2 hit and victim rates)"}}) {
    if (const auto f = file(name); !f.empty()) count_csv_rows(f, what, sink);
  }
}

// ---- msprof's PROF_* folder ---------------------------------------------------------------------------

namespace {

constexpr std::string_view kMsprofOutput = "mindstudio_profiler_output";

struct MsprofDevice {
  std::int32_t id = 0;
  fs::path dir;                       // device_N
  std::vector<std::string> timeline;  // device_N/timeline/*.json
};

std::vector<MsprofDevice> msprof_devices(const fs::path& root) {
  std::vector<MsprofDevice> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || !name.starts_with("device_")) continue;
    const auto id = parse_int(std::string_view(name).substr(7));
    if (!id) continue;
    MsprofDevice d{static_cast<std::int32_t>(*id), e.path(), files_like(e.path() / "timeline", "", ".json")};
    if (!d.timeline.empty()) out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const MsprofDevice& a, const MsprofDevice& b) { return a.id < b.id; });
  return out;
}

}  // namespace

std::optional<Source> detect_msprof_folder(const fs::path& path) {
  if (!is_dir(path)) return std::nullopt;
  const std::string name = path.filename().string();
  const fs::path out = path / kMsprofOutput;
  const bool prof = name.starts_with("PROF_");
  if (!prof && !is_dir(out)) return std::nullopt;
  Source s{Format::kMsprofFolder, path.string(), {}};
  if (is_dir(out)) {
    for (const std::string_view csv : {"op_summary", "operator_memory"}) {
      for (auto& f : files_like(out, csv, ".csv")) s.files.push_back(std::move(f));
    }
    const auto jsons = files_like(out, "msprof", ".json");
    if (jsons.empty()) {
      if (has_db(out)) return std::nullopt;  // the db export: msprof_*.db's importer
      throw ImportError(out.string() +
                        ": no msprof_*.json timeline (nor msprof_*.db): an msprof export cut short? "
                        "`msprof --export=on --output=" +
                        path.string() + "` exports it again");
    }
    s.files.insert(s.files.end(), jsons.begin(), jsons.end());
    return s;
  }
  const auto devices = msprof_devices(path);
  if (devices.empty()) {
    throw ImportError(path.string() +
                      ": neither mindstudio_profiler_output/ nor device_N/timeline/*.json is there: "
                      "export it first (`msprof --export=on --output=" +
                      path.string() + "`)");
  }
  for (const MsprofDevice& d : devices) {
    s.files.insert(s.files.end(), d.timeline.begin(), d.timeline.end());
    for (auto& f : files_like(d.dir / "summary", "op_summary", ".csv")) s.files.push_back(std::move(f));
  }
  return s;
}

void import_msprof_folder(const Source& source, ImportSink& sink) {
  const fs::path root(source.path);
  const fs::path out = root / kMsprofOutput;
  if (is_dir(out)) {
    // Every op_summary_*.csv (one per device, or slices of one) is one kernel table, its rows joined
    // to the events of their Device_id; every msprof_*.json slice one timeline.
    const TimelineResult r = import_timeline(sink, TimelineInputs{}, files_like(out, "op_summary", ".csv"),
                                             files_like(out, "msprof", ".json"), true);
    for (const auto& f : files_like(out, "operator_memory", ".csv")) read_operator_memory(f, r.device_id, sink, 0);
    for (const std::int32_t d : r.devices) write_device(root, sink, d, r.split_cores);
    if (r.world_size > 0) sink.meta(collector::kMetaWorldSize, std::to_string(r.world_size));
    return;
  }
  for (const MsprofDevice& d : msprof_devices(root)) {
    TimelineInputs in;
    in.device_id = d.id;
    if (const auto offset = msprof_clock_offset(d.dir.string())) {
      in.clock_offset_ns = *offset;
    } else if (const auto host = msprof_clock_offset((root / "host").string())) {
      in.clock_offset_ns = *host;
    } else {
      sink.note(d.dir.string() + ": no start_info: its times stay boot-relative (since the machine started)");
    }
    const TimelineResult r =
        import_timeline(sink, std::move(in), files_like(d.dir / "summary", "op_summary", ".csv"), d.timeline);
    for (const std::int32_t id : r.devices) write_device(root, sink, id, r.split_cores);
  }
}

// ---- a bare timeline ----------------------------------------------------------------------------------

std::optional<Source> detect_ascend_chrome_json(const fs::path& path) {
  if (!is_file(path)) return std::nullopt;
  const std::string name = path.filename().string();
  const bool named = name == "trace_view.json" || name == "trace_view.json.gz" ||
                     (name.starts_with("msprof") && (name.ends_with(".json") || name.ends_with(".json.gz")));
  if (!named) return std::nullopt;
  const char c = first_char(path);
  if (c != '[' && c != '{') return std::nullopt;
  return Source{Format::kChromeJson, path.string(), {path.string()}};
}

void import_ascend_chrome_json(const Source& source, ImportSink& sink) {
  const TimelineResult r = import_timeline(sink, TimelineInputs{}, {}, {source.path});
  for (const std::int32_t d : r.devices) write_device(fs::path(source.path).parent_path(), sink, d, r.split_cores);
  if (r.world_size > 0) sink.meta(collector::kMetaWorldSize, std::to_string(r.world_size));
  static const std::string kBare =
      "a bare timeline: op types, shapes and PMU metrics come from the events alone (point npuscope at the "
      "whole folder to join its kernel table)";
  sink.note(kBare);
}

}  // namespace npuscope::importer
