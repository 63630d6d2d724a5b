// The side files of an Ascend text export or msprof folder: what the timeline import needs from them
// (rank, groups, collectives' groups and waits, clock offsets, the device) and the memory CSVs,
// written as MEMORY_RECORD and COUNTER rows. docs/import.md "Ascend PyTorch Profiler, text export".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ascend_timeline.h"
#include "import_sink.h"

namespace npuscope::importer {

// profiler_info_{rank}.json: rank_id (META rank) and the profiler's config; whether the NPU was profiled.
struct ProfilerInfo {
  std::int32_t rank = -1;
  bool npu_activity = false;
};
ProfilerInfo read_profiler_info(const std::string& path, ImportSink& sink);
// profiler_metadata.json: the parallel groups' ranks (parallel_group_info), versions to META.
void read_profiler_metadata(const std::string& path, TimelineInputs& in, ImportSink& sink);
// communication.json: each collective's group and wait time.
void read_communication(const std::string& path, TimelineInputs& in, ImportSink& sink);
// communication_matrix.json: how many ranks each group's links reached (its link figures are
// COMMUNICATION_LINK's, from the transfers: counted).
void read_communication_matrix(const std::string& path, TimelineInputs& in, ImportSink& sink);

// memory_record.csv: PTA's (torch's caching allocator) totals as MEMORY_RECORD rows, every
// component's totals as COUNTER rows; the device it names (Device Type "NPU:0"), if any.
std::optional<std::int32_t> read_memory_record(const std::string& path, ImportSink& sink, std::int64_t offset_ns);
// npu_module_mem.csv: each module's reserved memory as COUNTER rows.
void read_module_memory(const std::string& path, std::int32_t device, ImportSink& sink, std::int64_t offset_ns);
// operator_memory.csv (torch_npu: Release Time(us), totals in MB) or msprof's operator_memory_*.csv
// (no release time: allocation + Duration; totals in KB): each op's block as an OP_MEMORY row.
// `device` when a row does not name its own (Device Type "NPU:0", Device_id).
void read_operator_memory(const std::string& path, std::int32_t device, ImportSink& sink, std::int64_t offset_ns);
// A CSV npuscope does not map (it derives it, or no table takes it): its rows counted in UNMAPPED.
void count_csv_rows(const std::string& path, std::string_view what, ImportSink& sink);

// msprof's clock files: the offset (ns) from the boot-relative clock of an older msprof timeline to
// the epoch, from start_info.N (collectionTimeBegin us, clockMonotonicRaw ns) or host_start.log
// beside it; nullopt when neither says.
std::optional<std::int64_t> msprof_clock_offset(const std::string& device_dir);
// msprof's info.json.N in `device_dir`: the device's core counts and name as DEVICE_INFO (written
// when found; the name `fallback_name` when the file does not say it).
bool read_msprof_info(const std::string& device_dir, std::int32_t device, const std::string& fallback_name,
                      ImportSink& sink);

}  // namespace npuscope::importer
