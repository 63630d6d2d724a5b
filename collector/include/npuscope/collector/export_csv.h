// Exports a trace as the CSV files msprof users read, into one directory:
//   op_summary.csv     one row per TASK, msprof's columns (Device_id, Model Name, Task ID, Stream ID,
//                      Op Name, OP Type, Task Type, Task Start Time(us), Task Duration(us),
//                      Task Wait Time(us), Block Dim, Input/Output Shapes and Data Types) plus
//                      FLOPs, Bytes, Overflow. Shapes are "2,3;4" (one per tensor, ';' between),
//                      from TENSOR rows when the trace has them, else empty. Wait time = start -
//                      the previous task's end on the same device and stream (0 for the first).
//   op_statistic.csv   per device, OP Type and Core Type: Count, Total/Avg/Min/Max Time(us),
//                      Ratio(%) of the device's kernel time; the rows of op_statistic.h (what
//                      counts: Note [What op_statistic counts]), by device, then total descending.
//   api_statistic.csv  per host API name: Count, Total/Avg/Min/Max Time(us), Ratio(%) of all API
//                      time; by total time descending.
//   memory_record.csv  one row per MEMORY_RECORD: Timestamp(us), Device_id, Operation, Address
//                      (hex), Size(bytes), Allocated(bytes), Reserved(bytes).
//   gradients.csv      one row per GRADIENT (`npuscope run --grad-probe`): Step, Param Name, Numel,
//                      Norm, Max, Min, Mean, Zero Ratio, NaN Count, Inf Count, Loss Scale
//                      (msprobe's grad_summary columns, every step in one file).
// op_summary's Input Shapes and Input Data Types come from TASK.input_shapes_id/input_dtypes_id
// (recorded at every launch) when the task has no TENSOR rows.
// Times are microseconds with three decimals. Device_id -1 is the cpu golden backend. Model Name
// is META "model_name" when the recorder set it, else "N/A" (as msprof writes for single ops).
// Rows stream to the files (Note [Exports stream]); the statistics hold one entry per group, and
// op_summary holds the shape strings of tasks that have TENSOR rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

struct CsvFile {
  std::string path;
  std::int64_t rows = 0;  // data rows, header excluded
};

struct CsvExportResult {
  std::vector<CsvFile> files;  // op_summary, op_statistic, api_statistic, memory_record, gradients
};

// Writes the five files into `directory` (created if needed, files replaced). Throws ExportError
// if they cannot be written, TraceError if the trace cannot be read.
CsvExportResult export_csv(const TraceReader& reader, const std::string& directory);

}  // namespace npuscope::collector
