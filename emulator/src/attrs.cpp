#include "npuscope/emulator/attrs.h"

#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

Attrs& Attrs::set(std::string name, AttrValue value) {
  for (auto& [n, v] : items_) {
    if (n == name) {
      v = std::move(value);
      return *this;
    }
  }
  items_.emplace_back(std::move(name), std::move(value));
  return *this;
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const auto& [n, v] : items_) {
    if (n == name) return &v;
  }
  return nullptr;
}

[[noreturn]] static void wrong_type(std::string_view name, const char* wanted) {
  throw InvalidArgument("attribute '" + std::string(name) + "' is not " + wanted);
}

std::int64_t Attrs::get_int(std::string_view name, std::int64_t fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* i = std::get_if<std::int64_t>(v)) return *i;
  wrong_type(name, "an integer");
}

double Attrs::get_float(std::string_view name, double fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
  wrong_type(name, "a number");
}

std::string Attrs::get_string(std::string_view name, std::string fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  wrong_type(name, "a string");
}

std::vector<std::int64_t> Attrs::get_ints(std::string_view name, std::vector<std::int64_t> fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* l = std::get_if<std::vector<std::int64_t>>(v)) return *l;
  if (const auto* i = std::get_if<std::int64_t>(v)) return {*i};
  wrong_type(name, "a list of integers");
}

std::vector<double> Attrs::get_floats(std::string_view name, std::vector<double> fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return fallback;
  if (const auto* l = std::get_if<std::vector<double>>(v)) return *l;
  if (const auto* d = std::get_if<double>(v)) return {*d};
  wrong_type(name, "a list of numbers");
}

}  // namespace npuscope::emulator
