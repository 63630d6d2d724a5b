// docs/schema.md, generated from the table descriptors (Note [One table, declared once] in
// schema.h) plus what the columns' values mean: enumerations, META keys and example queries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::collector::schema {

struct EnumValue {
  std::int64_t value;
  std::string name;
  std::string_view doc;
};

struct EnumInfo {
  std::string_view name;     // e.g. "task_type"
  std::string_view columns;  // where it is used, e.g. "TASK.task_type"
  std::vector<EnumValue> values;
};
const std::vector<EnumInfo>& enums();

struct MetaKeyInfo {
  std::string_view key;
  std::string_view doc;
};
const std::vector<MetaKeyInfo>& meta_keys();

// Queries a user can paste into `sqlite3 trace.db` (schema_doc_test runs each on a trace).
struct ExampleQuery {
  std::string_view title;
  std::string_view sql;
};
const std::vector<ExampleQuery>& example_queries();

// The whole of docs/schema.md.
std::string markdown();

// How to regenerate docs/schema.md, for messages.
inline constexpr std::string_view kRegenerateCommand =
    "cmake --build build --target npuscope_schema_doc && build/collector/npuscope_schema_doc docs/schema.md";

}  // namespace npuscope::collector::schema
