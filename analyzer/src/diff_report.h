// The diff's tables, filled from the two sides and their matching.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "diff_side.h"
#include "npuscope/analyzer/report.h"

namespace npuscope::analyzer {

struct DiffInputs {
  const DiffSide& base;
  const DiffSide& next;
  const OpPairing& pairing;  // BASE the reference, NEW the subject
  const KeySpace& keys;      // the sides' names, types, shapes and API names are its keys
  // NEW name key -> the BASE name(s) --op-name-map renamed to it.
  const std::unordered_map<std::int32_t, std::string>& renamed_from;
  // One run emulated, the other a real profile (Note [Diff emulated vs real]): the model-error table.
  bool emulated_vs_real = false;
};

// Tables in this order: runs, overall, memory, matching, (model error), ops, op types, kernels, APIs; and the
// notes (settings that differ, traces cut short, pairs found by type only).
Report diff_report(const DiffInputs& in);

}  // namespace npuscope::analyzer
