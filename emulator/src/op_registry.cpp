#include "npuscope/emulator/op_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/markers.h"

namespace npuscope::emulator {

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

OpRegistry::Entry& OpRegistry::entry(std::string_view type) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), type,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  if (it == entries_.end() || it->first != type) it = entries_.insert(it, {std::string(type), Entry{}});
  return it->second;
}

static std::string where(const char* file, int line) {
  return std::string(file ? file : "?") + ":" + std::to_string(line);
}

void OpRegistry::register_op(const OpSchema& schema) {
  Entry& e = entry(schema.type);
  if (e.schema.type != nullptr) {
    throw OpRegistrationError(std::string("op '") + schema.type + "' declared twice: at " +
                              where(e.schema.file, e.schema.line) + " and at " + where(schema.file, schema.line));
  }
  if (schema.infer == nullptr || schema.cost == nullptr) {
    throw OpRegistrationError(std::string("op '") + schema.type + "' at " + where(schema.file, schema.line) +
                              " needs infer and cost functions");
  }
  e.schema = schema;
  e.schema.api_name = intern(std::string("aclnn") + schema.type);
  e.schema.device = e.device;
}

void OpRegistry::register_device_rules(std::string_view type, const OpDeviceRules* rules) {
  Entry& e = entry(type);
  if (e.device != nullptr)
    throw OpRegistrationError("device rules for op '" + std::string(type) + "' registered twice");
  e.device = rules;
  e.schema.device = rules;
}

void OpRegistry::register_kernel(std::string_view type, Backend backend, const KernelEntry& kernel) {
  Entry& e = entry(type);
  KernelEntry& slot = e.kernels[static_cast<int>(backend)];
  if (slot.fn != nullptr) {
    throw OpRegistrationError("kernel for op '" + std::string(type) + "' on " +
                              (backend == Backend::kNpu ? "npu" : "cpu") + " registered twice: at " +
                              where(slot.file, slot.line) + " and at " + where(kernel.file, kernel.line));
  }
  slot = kernel;
}

const OpSchema* OpRegistry::find_schema(std::string_view type) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), type,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  if (it == entries_.end() || it->first != type || it->second.schema.type == nullptr) return nullptr;
  return &it->second.schema;
}

const OpSchema& OpRegistry::schema(std::string_view type) const {
  if (const OpSchema* s = find_schema(type)) return *s;
  throw InvalidArgument("unknown op '" + std::string(type) + "'");
}

const KernelEntry* OpRegistry::kernel(std::string_view type, Backend backend) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), type,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  if (it == entries_.end() || it->first != type) return nullptr;
  const KernelEntry& k = it->second.kernels[static_cast<int>(backend)];
  return k.fn != nullptr ? &k : nullptr;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [type, e] : entries_) {
    if (e.schema.type != nullptr) out.push_back(type);
  }
  return out;
}

namespace detail {

// Registration runs during static initialisation, where an exception would abort without a word:
// print what is wrong and stop.
template <class F>
static bool register_or_die(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope: internal error: %s\n", e.what());
    std::abort();
  }
  return true;
}

bool register_op(OpSchema schema, const char* file, int line) {
  schema.file = file;
  schema.line = line;
  return register_or_die([&] { OpRegistry::instance().register_op(schema); });
}

bool register_kernel(const char* type, Backend backend, KernelFn fn, SupportsFn supports, const char* file, int line) {
  return register_or_die([&] {
    OpRegistry::instance().register_kernel(type, backend, KernelEntry{fn, supports, file, line});
  });
}

bool register_kernels(const char* type, KernelFn npu, KernelFn cpu, const char* file, int line) {
  return register_kernel(type, Backend::kNpu, npu, nullptr, file, line) &&
         register_kernel(type, Backend::kCpu, cpu, nullptr, file, line);
}

bool register_device_rules(const char* type, const OpDeviceRules* rules) {
  return register_or_die([&] { OpRegistry::instance().register_device_rules(type, rules); });
}

}  // namespace detail
}  // namespace npuscope::emulator
