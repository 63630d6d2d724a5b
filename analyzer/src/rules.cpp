// The registered rules, in report order: a new finding is its rule's file (its tables, its code and
// its `const Rule kRule...`) and one line here.
#include "rules.h"

#include <algorithm>

#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/report.h"

namespace npuscope::analyzer {

#define NPUSCOPE_RULES(X)  \
  X(kSummaryRule)          \
  X(kStepTimeRule)         \
  X(kTopOpsRule)           \
  X(kStepsRule)            \
  X(kModelRule)            \
  X(kIdleRule)             \
  X(kFallbackRule)         \
  X(kOverflowsRule)        \
  X(kUnderflowRule)        \
  X(kLossScaleRule)        \
  X(kGradientsRule)        \
  X(kOpChecksRule)         \
  X(kKernelSanitizerRule)  \
  X(kMemoryRule)           \
  X(kCommunicationRule)    \
  X(kOpStatisticsRule)     \
  X(kFusionRule)           \
  X(kCubeAlignmentRule)    \
  X(kBlockDimRule)         \
  X(kOperatorBoundRule)    \
  X(kAiCpuRule)            \
  X(kFormatConversionRule) \
  X(kSynchronizationRule)  \
  X(kSmallMemcpyRule)      \
  X(kDynamicShapesRule)    \
  X(kLongTailOpsRule)      \
  X(kKernelPipesRule)

#define NPUSCOPE_DECLARE_RULE(r) extern const Rule r;
NPUSCOPE_RULES(NPUSCOPE_DECLARE_RULE)
#undef NPUSCOPE_DECLARE_RULE

std::span<const Rule* const> registered_rules() {
#define NPUSCOPE_RULE_ADDRESS(r) &r,
  static constexpr const Rule* kRules[] = {NPUSCOPE_RULES(NPUSCOPE_RULE_ADDRESS)};
#undef NPUSCOPE_RULE_ADDRESS
  return kRules;
}

const std::vector<std::string>& all_rules() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Rule* r : registered_rules()) out.emplace_back(r->name);
    return out;
  }();
  return names;
}

std::vector<const TableSpec*> all_table_specs() {
  std::vector<const TableSpec*> out;
  for (const Rule* r : registered_rules()) {
    for (const TableSpec* t : r->tables) {
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  }
  return out;
}

Table& RuleContext::table(const TableSpec& spec) {
  for (Table& t : tables_) {
    if (t.spec == &spec) return t;
  }
  tables_.push_back({&spec, {}});  // a rule writing a table it did not declare: still reported
  return tables_.back();
}

void RuleContext::note(std::string_view text) { notes_.emplace_back(text); }

void RuleContext::leave_out(std::string_view what, const TableSpec* dropped) {
  left_out_.emplace_back(what);
  if (dropped == nullptr) return;
  dropped_.push_back(dropped);
  std::erase_if(tables_, [&](const Table& t) { return t.spec == dropped; });
}

const TensorShapes& RuleContext::shapes() {
  const TensorShapes& shapes = shapes_.get();
  if (!asked_shapes_) {
    asked_shapes_ = true;
    if (!shapes.any() && data.imported()) {
      note(
          "cube_alignment and dynamic_shapes need tensor shapes: this profile has none (profile with "
          "record_shapes=True)");
    } else if (!shapes.any()) {
      note("cube_alignment and dynamic_shapes need tensor shapes: record with `npuscope run --dump stats`");
    }
  }
  return shapes;
}

}  // namespace npuscope::analyzer
