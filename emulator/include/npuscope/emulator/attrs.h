// Op attributes: a small ordered name -> value list (ops have a handful, so a vector beats a map).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace npuscope::emulator {

using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) : items_(init) {}

  Attrs& set(std::string name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }

  // Typed getters return `fallback` when the attribute is absent and throw InvalidArgument when it
  // has another type. Integers are accepted where a float is asked.
  std::int64_t get_int(std::string_view name, std::int64_t fallback) const;
  double get_float(std::string_view name, double fallback) const;
  std::string get_string(std::string_view name, std::string fallback) const;
  std::vector<std::int64_t> get_ints(std::string_view name, std::vector<std::int64_t> fallback = {}) const;
  std::vector<double> get_floats(std::string_view name, std::vector<double> fallback = {}) const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

 private:
  const AttrValue* find(std::string_view name) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace npuscope::emulator
