// Exports the tensors a trace dumped (`npuscope run --dump tensor`) as NumPy .npy files, one per
// tensor, into a directory, plus index.csv mapping the files to their tasks.
//
// Files are named <op name>.<call index>.<role>.<index>.npy, the op instance name made safe for
// the file system ('/' and other odd characters become '_'): "layer0/attn/q_proj", second call,
// first output -> layer0_attn_q_proj.1.output.0.npy. Where two tensors would get one name (names
// that differ only in the replaced characters, or the same op on the NPU and the golden backend
// in one trace) the later gets ".t<task_id>" before ".npy". The .npy type is the tensor's
// (f16 stays f16), except bf16, which NumPy lacks: written as f32 (exact).
//
// index.csv: file,task_id,device_id,op_name,op_type,call_index,role,index,dtype,shape,status
// with status "ok", "no data" (statistics only: no file) or "bad data: ..." (no file, counted): a
// dtype this build does not know (a newer build's), or a shape the recorder cut short (it keeps
// hooks::kMaxDims dims). A damaged TENSOR row (sizes that do not add up, data that does not
// decompress) is the reader's TraceError (Note [Checked tensor rows]), not a status. A trace with no
// dumped data at all is an ExportError that says to record with `npuscope run --dump tensor`.
// Headers are format 1.0, or 2.0 when the shape's header does not fit 1.0's 64 KiB.
#pragma once

#include <cstdint>
#include <string>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

struct NpyExportResult {
  std::string directory, index_path;
  std::int64_t files = 0;         // .npy files written
  std::int64_t without_data = 0;  // tensors with statistics only
  std::int64_t bad_data = 0;      // tensors whose stored bytes could not be used
  std::int64_t bytes = 0;         // total size of the .npy files
};

// Throws ExportError if the trace has no dumped tensor data or the files cannot be written,
// TraceError if the trace cannot be read.
NpyExportResult export_npy(const TraceReader& reader, const std::string& directory);

// The name of a TENSOR.dtype value ("f32", "bf16", ...; "dtype<N>" if unknown): the
// emulator's DType numbering, which the collector does not link.
std::string tensor_dtype_name(std::int32_t dtype);

}  // namespace npuscope::collector
