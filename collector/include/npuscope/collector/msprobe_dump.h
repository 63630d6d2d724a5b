// An msprobe dump in memory: what msprobe's PyTorch dump writes (dump.json, stack.json,
// construct.json, dump_tensor_data/), and the one form every side of `npuscope compare` becomes
// when either side is a dump (REFERENCE.md "msprobe for PyTorch: dump, names, dump.json";
// FORMATS.md "msprobe dumps").
//
// Note [msprobe dumps in memory]
// Three producers, one consumer:
// - the importer reads a dump folder (importer/msprobe_dump_reader.h): msprobe's own, or an
//   `npuscope export --msprobe` folder;
// - the analyzer rebuilds one from an npuscope trace of a PyTorch script (Note [msprobe entries]),
//   which `export --msprobe` writes out and `compare` compares directly;
// - tests build them by hand;
// and the comparator's compare_dumps pairs the entries of two of them, value by value.
// A value is what msprobe's compare calls one row: a tensor of an entry, or a scalar argument,
// named by its slot in the entry ("input.0", "input.3.1" for the second item of a list argument,
// "input.dim" for a keyword argument, "output.0", "parameters.weight", "weight" for a gradient of a
// parameters_grad entry, ...: DumpValue::slot, the part of msprobe's compare name after the entry's;
// a null of dump.json, an absent argument, is a value of no type whose value is "null"). Tensor
// data is not held here: a tensor dump loads it on demand, one entry at a time, through
// MsprobeDump::load (a .pt or .npy file for a dump folder, the trace's TENSOR data for a trace), so
// that a dump of any size compares in the memory of its largest entry.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::collector {

// A tensor's data could not be loaded (a missing or malformed .pt/.npy file, a shape or dtype that
// disagrees with dump.json). The message names the entry, the value and the file; the comparator
// turns it into that value's verdict, never into the end of the comparison.
class MsprobeDumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One value of an entry: a tensor with its statistics, or any other argument msprobe records.
struct DumpValue {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  std::string slot;  // "input.0", "input.weight", "output.1", "parameters.bias", ... (Note above)
  bool is_tensor = false;
  std::string type;            // msprobe's "type": "torch.Tensor", "int", "float", "bool", "slice", "torch.dtype", ...
  std::string dtype;           // tensors: msprobe's dtype name as written ("torch.float32", "torch.bfloat16")
  std::int32_t dtype_id = -1;  // the vocabulary's DType of `dtype` (vocabulary.h); -1: none (0 is f32)
  std::vector<std::int64_t> shape;
  // Statistics as dump.json holds them (task statistics, and tensor mode): +-inf and NaN where the
  // file says so, NaN too where null or absent. has_stats: any of the four is there; stats_present:
  // which. A null statistic is no NaN one: msprobe's compare writes it "None" (a NaN "Nan") and
  // judges the two apart (Note [msprobe's statistics cells] in the comparator). A producer that has
  // all four sets has_stats and leaves stats_present as it is.
  static constexpr std::uint8_t kHasMax = 1, kHasMin = 2, kHasMean = 4, kHasNorm = 8, kHasAllStats = 15;
  bool has_stats = false;
  std::uint8_t stats_present = kHasAllStats;
  double max = kNone, min = kNone, mean = kNone, norm = kNone;
  bool has_stat(std::uint8_t bit) const { return has_stats && (stats_present & bit) != 0; }
  int requires_grad = -1;  // -1 not recorded, 0, 1
  std::string md5;         // summary_mode md5: the 8-hex CRC-32 msprobe writes; "" when absent
  std::string data_name;   // tensor mode: the file under dump_tensor_data ("" when none)
  std::string value;       // non-tensors: the value's JSON text ("2", "true", "\"mean\""); None: "null"
};

// One entry of dump.json: an API call's or module call's forward or backward pass, or a module's
// parameters' gradients.
struct DumpEntry {
  std::string
      name;  // "Functional.conv2d.0.forward", "Module.conv1.Conv2d.forward.0", "Module.fc.Linear.parameters_grad.0"
  std::vector<DumpValue> values;  // in dump.json's order: inputs, keyword inputs, outputs, parameters
  std::string parent;             // construct.json: the module entry it ran in; "" for none
  std::int32_t stack = -1;        // index into MsprobeDump::stacks; -1 none
  bool is_recompute = false;
};

// The data of one tensor value, raw little-endian elements of dtype_id (the vocabulary's DType),
// as comparator::TensorData reads them.
struct DumpTensorData {
  std::vector<std::uint8_t> bytes;
  std::int32_t dtype_id = 0;
  std::vector<std::int64_t> shape;
  std::int64_t numel = 0;
};

// One step of one rank (dump_path/step{S}/rank{R}/, or proc{PID} when no rank was known).
struct MsprobeDump {
  std::string path;                // the folder (or dump.json) it was read from, or the trace
  std::string task;                // "statistics", "tensor", "md5" (statistics with summary_mode md5), ...
  std::string level;               // "L0", "L1", "L2", "mix"
  std::string framework;           // "pytorch", "mindspore"
  std::int64_t step = -1;          // -1: not known
  std::int64_t rank = -1;          // -1: not known (a proc{PID} folder)
  std::vector<DumpEntry> entries;  // in dump.json's order
  std::vector<std::vector<std::string>> stacks;  // stack.json's call stacks, frames outermost last as written
  std::vector<std::string> notes;                // what was read but not understood, counted ("3 entries without ...")
  // Loads one tensor value's data (tensor mode) into `out`, reusing its buffer: a comparison loads
  // thousands of tensors, and a buffer that is already big enough costs no allocation and no page
  // faults. Null when the dump has none. Throws MsprobeDumpError naming the entry, the value and
  // the file (`out` then holds nothing meaningful).
  std::function<void(const DumpEntry&, const DumpValue&, DumpTensorData& out)> load;
  // `load` into a buffer of its own, for a caller that loads one tensor.
  DumpTensorData loaded(const DumpEntry& e, const DumpValue& v) const {
    DumpTensorData t;
    load(e, v, t);
    return t;
  }
};

// The vocabulary's DType of an msprobe dtype name: torch's ("torch.float32"), numpy's ("float32"),
// MindSpore's ("Float32"); nullopt for one npuscope lacks ("torch.complex64", "torch.float8_e4m3fn").
std::optional<DType> msprobe_dtype(std::string_view name);
// DumpValue::dtype_id of that name: the DType's value, or -1.
inline std::int32_t msprobe_dtype_id(std::string_view name) {
  const std::optional<DType> d = msprobe_dtype(name);
  return d ? static_cast<std::int32_t>(*d) : -1;
}

}  // namespace npuscope::collector
