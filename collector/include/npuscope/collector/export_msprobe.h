// Writes msprobe dumps (collector/msprobe_dump.h) in msprobe's layout (REFERENCE.md "msprobe for
// PyTorch: dump, names, dump.json"), for the tools and habits built around it: `npuscope export
// --msprobe` writes a PyTorch script's dump (`npuscope run --dump stats|tensor -- python3 ...`) as the
// analyzer rebuilds it from the trace (analyzer::msprobe_dumps, Note [msprobe dumps from a trace]):
//
//   DIR/step{S}/rank{R}/dump.json       {"task", "level": "mix", "framework": "pytorch",
//                                        "dump_data_dir", "data": {entry: {input_args, input_kwargs,
//                                        output, parameters} | {input, output} | {param: [grad]}}}
//   DIR/step{S}/rank{R}/stack.json      {"0": [[entries], [frames, innermost first]], ...}
//   DIR/step{S}/rank{R}/construct.json  {entry: the module entry it ran in, or null}
//   DIR/step{S}/rank{R}/dump_tensor_data/{entry}.{slot}.npy   (dumps with data only)
//
// R is the dump's rank, 0 when it has none. Values go back where their slots say ("input.3.1": the
// second item of input_args[3]; "input.dim": input_kwargs["dim"]); tensors carry msprobe's statistics
// (Max, Min, Mean, Norm) and, for a tensor dump, the file that holds the data as .npy (msprobe writes
// .pt; NumPy and torch.from_numpy read these).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/collector/export_error.h"
#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::collector {

struct MsprobeExportResult {
  std::string directory;
  std::vector<std::string> dump_files;  // each step's dump.json
  std::int64_t api_entries = 0;         // API entries (forward and backward)
  std::int64_t module_entries = 0;      // Module.* entries (forward, backward, parameters' gradients)
  std::int64_t tensors = 0;             // tensor objects in the dump.json files
  std::int64_t files = 0;               // .npy files written
  std::int64_t bytes = 0;               // their total size
  std::int64_t bad_data = 0;            // dumped tensors whose data could not be written (statistics kept)
  std::vector<std::string> notes;       // the dumps' notes: what the dumps left out, counted
};

// `dumps` (one per step) into `directory`, their tensors' data through each dump's load. Throws
// ExportError if a file cannot be written.
MsprobeExportResult export_msprobe(const std::vector<MsprobeDump>& dumps, const std::string& directory);

}  // namespace npuscope::collector
