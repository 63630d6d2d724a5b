// Shape, dtype and format lists in npuscope's form (tensor_lists.h).
#include "tensor_lists.h"

#include <algorithm>
#include <cctype>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::importer {
namespace {

bool dropped(char c) { return c == '"' || c == ' ' || c == '\r' || c == '\n' || c == '\t'; }

// Calls f(entry) for each `;`-separated entry, without quotes and line breaks; spaces dropped
// (shapes: "32, 3") or only trimmed (dtypes: "long int").
template <class F>
void for_each_entry(std::string_view text, bool keep_inner_spaces, F&& f) {
  if (std::all_of(text.begin(), text.end(), dropped)) return;
  std::string entry;
  const auto done = [&] {
    while (!entry.empty() && entry.back() == ' ') entry.pop_back();
    f(entry);
    entry.clear();
  };
  for (const char c : text) {
    if (c == ';') {
      done();
    } else if (c == ' ' ? keep_inner_spaces && !entry.empty() : !dropped(c)) {
      entry += c;
    }
  }
  done();
}

struct DTypeName {
  std::string_view name;
  DType dtype;
};
// What Ascend's and PyTorch's profilers write beside the names find_dtype knows (matched ignoring case).
constexpr DTypeName kDTypeNames[] = {
    {"dt_float", DType::kF32},   {"dt_float16", DType::kF16}, {"c10::half", DType::kF16},
    {"bf16", DType::kBF16},      {"dt_bf16", DType::kBF16},   {"c10::bfloat16", DType::kBF16},
    {"signed char", DType::kI8}, {"dt_int8", DType::kI8},     {"unsigned char", DType::kU8},
    {"dt_uint8", DType::kU8},    {"int", DType::kI32},        {"dt_int32", DType::kI32},
    {"long int", DType::kI64},   {"dt_int64", DType::kI64},   {"dt_bool", DType::kBool},
    {"dt_double", DType::kF64},
};

std::string_view dtype_name_of(std::string_view entry, std::string& lowered) {
  lowered.assign(entry);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (const auto d = find_dtype(lowered)) return dtype_name(*d);
  for (const DTypeName& n : kDTypeNames) {
    if (n.name == lowered) return dtype_name(n.dtype);
  }
  return entry;
}

}  // namespace

std::string shape_list(std::string_view text) {
  std::string out;
  for_each_entry(text, false, [&](const std::string& e) { out += e + ';'; });
  return out;
}

std::string dtype_list(std::string_view text) {
  std::string out, lowered;
  for_each_entry(text, true, [&](const std::string& e) {
    out += dtype_name_of(e, lowered);
    out += ';';
  });
  return out;
}

bool has_letters(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
}

}  // namespace npuscope::importer
