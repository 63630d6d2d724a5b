// Pairing two msprobe dumps' entries, then a paired entry's values (Note [Dump entry matching] in
// npuscope/comparator/compare_dumps.h). Private to the comparator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/dump_mapping.h"

namespace npuscope::comparator {

// An entry name's parts, as msprobe's split_data_name_components reads them:
// "Functional.conv2d.0.forward" -> base "Functional.conv2d", call "0", forward, call first;
// "Module.conv1.Conv2d.backward.1" -> base "Module.conv1.Conv2d", call "1", backward;
// "Module.fc.Linear.parameters_grad.0" (older: no index) -> base "Module.fc.Linear", parameters_grad.
struct DumpName {
  enum class Pass : std::uint8_t { kForward, kBackward, kParamsGrad, kOther };
  std::string_view base, call;  // call: "" when there is none
  Pass pass = Pass::kOther;
  bool call_first = false;  // an API's "N.forward" rather than a module's "forward.N"
};
DumpName split_dump_name(std::string_view name);
std::string_view pass_name(DumpName::Pass pass);  // "forward", "backward", "parameters_grad", ""

// A value's full name split into its entry's name and its slot, as data_mapping files name values:
// "Functional.conv2d.0.forward.input.0" -> 36 (the entry "Functional.conv2d.0.forward"), "Module.fc.
// Linear.forward.0.output.0" -> after "forward.0"; 0 when `name` is no value name (an entry's, an API's).
std::size_t value_name_split(std::string_view name);

// The entry name `mapping` gives an NPU entry (Note [Dump entry matching]); `cross_frame` also reads
// MindSpore's Cell, Mint and MintFunctional as PyTorch's Module, Torch and Functional. Sets
// `renamed` when the mapping applied.
std::string mapped_entry_name(const std::string& name, const analyzer::NameMap& mapping, bool cross_frame,
                              bool& renamed);

struct EntryPair {
  std::uint32_t npu = 0, bench = 0;
  bool renamed = false;  // through --mapping
};
struct EntryPairing {
  std::vector<EntryPair> pairs;                     // in NPU dump order
  std::vector<std::uint32_t> npu_only, bench_only;  // in dump order
};
EntryPairing pair_dump_entries(const collector::MsprobeDump& npu, const collector::MsprobeDump& bench,
                               const analyzer::NameMap& mapping, bool fuzzy, bool cross_frame);

// A paired entry's values by slot: `npu_order` its NPU values in msprobe's row order (inputs,
// parameters, outputs, parameters_grad), `bench_of` each one's bench value (-1: none, or a dtype
// msprobe does not pair), `bench_only` the bench values nothing took.
struct ValuePairing {
  std::vector<std::int32_t> npu_order, bench_of, bench_only;
  // pair_values' scratch, kept to be reused entry after entry (no allocation per entry).
  std::vector<std::pair<std::string_view, std::int32_t>> by_slot;
  std::vector<char> taken;
};
// The slots --mapping pairs in one entry pair (Note [Dump mapping files]): NPU slot -> bench slot;
// `only_listed`: a slot not listed pairs nothing (api_mapping); `any_dtype`: dtypes are not checked.
struct SlotMap {
  std::vector<std::pair<std::string_view, std::string_view>> pairs;  // into the DumpMapping
  bool only_listed = false, any_dtype = false;
};
void mapped_slots(const DumpMapping& mapping, std::string_view npu_entry, std::string_view bench_entry, SlotMap& out);

void pair_values(const collector::DumpEntry& npu, const collector::DumpEntry* bench, bool cross_frame,
                 const SlotMap& slots, ValuePairing& out);

// msprobe's row order of an entry's values (reorder_index): inputs, parameters, outputs, the rest.
void row_order(const collector::DumpEntry& entry, std::vector<std::int32_t>& out);

// Whether a slot is an output (msprobe: ".output." in the row name).
inline bool output_slot(std::string_view slot) { return slot.starts_with("output"); }

}  // namespace npuscope::comparator
