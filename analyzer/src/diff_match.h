// Pairs the ops of two runs (Note [Diff op matching] in npuscope/analyzer/diff.h).
#pragma once

#include <cstdint>
#include <vector>

#include "diff_side.h"
#include "npuscope/analyzer/diff.h"

namespace npuscope::analyzer {

struct OpMatch {
  std::uint32_t base = 0, next = 0;  // indexes into the two sides' ops
  DiffMatch how = DiffMatch::kName;
};

struct Matching {
  std::vector<OpMatch> pairs;          // in NEW's execution order
  std::vector<std::uint32_t> added;    // NEW ops with no BASE op, in execution order
  std::vector<std::uint32_t> removed;  // BASE ops with no NEW op, in execution order
};

// The ops' name, type and shapes must be keys shared by both sides (ids_to_keys in diff.cpp).
Matching match_diff_ops(const std::vector<DiffOp>& base, const std::vector<DiffOp>& next);

}  // namespace npuscope::analyzer
