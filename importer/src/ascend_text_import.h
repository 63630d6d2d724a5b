// The Ascend tools' text outputs: torch_npu's text export (an `*_ascend_pt` folder or its
// ASCEND_PROFILER_OUTPUT), msprof's PROF_* folders (mindstudio_profiler_output/ or the older
// device_N/timeline/ layout) and a bare trace_view.json / msprof_*.json.
//
// Note [Ascend text import]
// Each is a Chrome-event timeline (AscendTimeline: Note [Ascend timeline mapping]) joined with a
// kernel table (kernel_details.csv, op_summary_*.csv: Note [Kernel details join]) and side files
// (ascend_side_files.h). An export without a timeline (older torch_npu wrote no trace_view.json)
// takes its tasks from the kernel table alone, its steps from the table's Step Id. Times keep the
// source's clock (ns since the epoch); the older msprof layout's boot-relative times are moved to
// the epoch by its start_info's offset (collectionTimeBegin - clockMonotonicRaw). The device's name
// is msprof's info.json's when the folder keeps it; torch_npu's text export does not say it, so a
// profile whose kernels ran on separate cube and vector cores (aic_* and aiv_* PMU columns, MIX_AIV
// tasks) is named "Ascend910B" (the A2/A3 family: 910B, 910_93), any other "Ascend" (a note says so).
// What is missing or broken is an ImportError naming the file: a folder of the set without its
// kernel table when the profile recorded the NPU, a kernel table without a column the join needs.
#pragma once

#include <filesystem>
#include <optional>

#include "formats.h"

namespace npuscope::importer {

std::optional<Source> detect_ascend_text(const std::filesystem::path& path);
void import_ascend_text(const Source& source, ImportSink& sink);

std::optional<Source> detect_msprof_folder(const std::filesystem::path& path);
void import_msprof_folder(const Source& source, ImportSink& sink);

std::optional<Source> detect_ascend_chrome_json(const std::filesystem::path& path);
void import_ascend_chrome_json(const Source& source, ImportSink& sink);

}  // namespace npuscope::importer
