// Exports a PyTorch script's dump (`npuscope run --dump stats|tensor -- python3 ...`) in msprobe's
// layout (REFERENCE.md "msprobe for PyTorch: dump, names, dump.json"), for the tools and habits
// built around it:
//
//   DIR/step{S}/rank0/dump.json       {"task", "level": "mix", "framework": "pytorch",
//                                      "dump_data_dir", "data": {entry: {input_args, output, ...}}}
//   DIR/step{S}/rank0/construct.json  {entry: the module entry it ran in, or null}
//   DIR/step{S}/rank0/dump_tensor_data/{entry}.{input|output}.{k}.npy   (dumps with data only)
//
// Entries, worked out by the analyzer (analyzer::msprobe_entries, Note [msprobe entries] in
// analyzer/msprobe_entries.h: the store writes them, the layer above reconstructs them):
//   Aten.{op}.{n}.forward     an aten op the script called (n counts that op's calls in the step);
//   Aten.{op}.{n}.backward    the autograd nodes that op made, run by the backward pass: input the
//                             gradients flowing in, output the gradients it computed;
//   Module.{path}.{Class}.forward.{n} / .backward.{n}   a module call, and its part of the backward
//                             pass, with the module's parameters under "parameters" where the
//                             optimizer shows which tensors they are.
// Tensors carry msprobe's statistics (Max, Min, Mean, Norm) and, for a tensor dump, the file that
// holds the data as .npy (msprobe writes .pt; NumPy and torch.from_numpy read these).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::collector {

// One entry of dump.json: an API or module call's pass, with its tensors.
struct MsprobeEntry {
  std::string name;    // "Aten.addmm.0.forward", "Module.fc.Linear.backward.0"
  std::string parent;  // the module entry it ran in (construct.json); empty if none
  std::int64_t step = 0;
  bool is_module = false;
  std::int64_t first_task = 0;               // its first task: entries are written in this order
  std::vector<std::size_t> inputs, outputs;  // indexes into MsprobeEntries::tensors
  std::vector<std::size_t> parameters;       // module forward entries: the parameters it read
};

// Every entry of a trace, as analyzer::msprobe_entries rebuilds them.
struct MsprobeEntries {
  std::vector<TensorRow> tensors;     // every TENSOR row, in the reader's order, without data
  std::vector<MsprobeEntry> entries;  // ordered by step, then first task
  std::int64_t unattributed_tasks = 0;
  bool has_pytorch_ops = false;
};

struct MsprobeExportResult {
  std::string directory;
  std::vector<std::string> dump_files;  // each step's dump.json
  std::int64_t api_entries = 0;         // Aten.* entries (forward and backward)
  std::int64_t module_entries = 0;      // Module.* entries
  std::int64_t tensors = 0;             // tensor objects in the dump.json files
  std::int64_t files = 0;               // .npy files written
  std::int64_t bytes = 0;               // their total size
  std::int64_t bad_data = 0;            // dumped tensors whose data could not be written (statistics kept)
  std::int64_t unattributed_tasks = 0;  // tasks with tensors that no PyTorch op launched (not in any entry)
};

// `entries` of `reader`'s trace into `directory` (the tensors' data read from `reader`). Throws
// ExportError if the trace has no PyTorch ops or no recorded tensors (saying how to record them), or
// a file cannot be written; TraceError if the trace cannot be read.
MsprobeExportResult export_msprobe(const TraceReader& reader, const MsprobeEntries& entries,
                                   const std::string& directory);

}  // namespace npuscope::collector
