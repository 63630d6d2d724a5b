// Hand-built msprobe dumps for the dump comparison's tests: tensors, scalar arguments, entries,
// dumps, and the compare_result cells and rows they give.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "npuscope/analyzer/format.h"
#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/compare_dumps.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::comparator::dump_test {

using collector::DumpEntry;
using collector::DumpValue;
using collector::MsprobeDump;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline DumpValue tensor(std::string slot, double max, double min, double mean, double norm,
                        std::vector<std::int64_t> shape = {2, 2}, std::string dtype = "torch.float32") {
  DumpValue v;
  v.slot = std::move(slot);
  v.is_tensor = true;
  v.type = "torch.Tensor";
  v.dtype = std::move(dtype);
  if (const auto d = find_dtype(v.dtype.substr(v.dtype.find('.') + 1))) v.dtype_id = static_cast<std::int32_t>(*d);
  v.shape = std::move(shape);
  v.has_stats = true;
  v.max = max, v.min = min, v.mean = mean, v.norm = norm;
  v.requires_grad = 0;
  return v;
}

inline DumpValue same(std::string slot) { return tensor(std::move(slot), 1, -1, 0, 2); }

inline DumpValue scalar(std::string slot, std::string json, std::string type = "int") {
  DumpValue v;
  v.slot = std::move(slot);
  v.type = std::move(type);
  v.value = std::move(json);
  return v;
}

inline DumpEntry entry(std::string name, std::vector<DumpValue> values, std::string parent = "",
                       std::int32_t stack = -1) {
  DumpEntry e;
  e.name = std::move(name);
  e.values = std::move(values);
  e.parent = std::move(parent);
  e.stack = stack;
  return e;
}

inline MsprobeDump dump(std::string path, std::vector<DumpEntry> entries, std::string task = "statistics") {
  MsprobeDump d;
  d.path = std::move(path);
  d.task = std::move(task);
  d.level = "mix";
  d.framework = "pytorch";
  d.entries = std::move(entries);
  return d;
}

// The compare_result cell of a row under msprobe's column name.
inline std::string cell(const analyzer::Report& r, std::size_t row, std::string_view column) {
  const analyzer::Table* t = r.find("compare_result");
  const analyzer::Value* v = t != nullptr && row < t->rows.size() ? t->cell(row, column) : nullptr;
  return v != nullptr && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "<none>";
}

inline const DumpRow& row_named(const DumpCompareResult& r, const std::string& entry, const std::string& slot) {
  for (const DumpRow& row : r.rows) {
    if (r.npu->entries[static_cast<std::size_t>(row.npu_entry)].name == entry && row.npu->slot == slot) return row;
  }
  throw std::runtime_error("no row " + entry + "." + slot);
}

}  // namespace npuscope::comparator::dump_test
