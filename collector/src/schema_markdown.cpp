// Renders docs/schema.md from the descriptors (schema.cpp) and the value docs (schema_doc.cpp).
#include <sstream>

#include "schema.h"
#include "schema_doc.h"

#include "npuscope/collector/trace_stats.h"

namespace npuscope::collector::schema {
namespace {

void write_intro(std::ostream& out) {
  out << "# Trace database schema\n\n"
      << "<!-- Generated from collector/src/schema.cpp and schema_doc.cpp by npuscope_schema_doc: do not edit.\n"
      << "     Regenerate with: " << kRegenerateCommand << " -->\n\n"
      << "`npuscope run -o trace.db -- CMD` writes an SQLite database, schema version " << kSchemaVersion
      << ". Query it with `sqlite3 trace.db`, or read it from C++ through `npuscope::collector::TraceReader` "
         "(collector/include/npuscope/collector/trace_reader.h), which every npuscope tool uses.\n\n"
      << "Conventions (those of msprof's database and Nsight Systems' SQLite export):\n\n"
      << "- Times are integer nanoseconds (`*_ns`) on the session's one virtual clock, 0 at session start. "
         "Device task times are modelled by the cost model; host times are the host threads' clocks minus the "
         "time they spent emulating.\n"
      << "- Sizes are in bytes, rates per second.\n"
      << "- Every string is stored once in STRING_IDS; a `*_id` column naming a string holds its id "
         "(0: no string). Join `STRING_IDS s ON s.id = t.name_id`.\n"
      << "- Host API calls (API) are joined to the device work they launched (TASK, MEMCPY) by `connection_id`.\n"
      << "- Enumerated columns hold the integers listed under [Enumerations](#enumerations).\n"
      << "- The trace is committed at least every 500 ms while the workload runs, marked `incomplete`. A clean "
         "exit builds the indexes and marks it `complete`; a killed workload leaves a valid, incomplete trace "
         "holding everything up to its last commit.\n\n";
  out << "Tables:";
  for (const TableInfo* table : all_tables()) out << " [" << table->name << "](#" << table->name << "),";
  out.seekp(-1, std::ios_base::cur);
  out << ".\n\n";
}

void write_table(std::ostream& out, const TableInfo& table) {
  out << "## <a id=\"" << table.name << "\"></a>" << table.name << "\n\n" << table.doc << "\n\n";
  out << "| column | type | description |\n|---|---|---|\n";
  for (const ColumnInfo& c : table.columns) {
    out << "| `" << c.name << "` | " << sql_type_name(c.type) << (c.name == table.primary_key ? " PRIMARY KEY" : "")
        << " | " << c.doc << " |\n";
  }
  out << "\n";
  if (!table.indexes.empty()) {
    out << "Indexes (built when the trace is finalized):";
    for (std::size_t i = 0; i < table.indexes.size(); ++i) {
      out << (i ? ", `" : " `") << table.name << "(";
      for (std::size_t j = 0; j < table.indexes[i].columns.size(); ++j) {
        out << (j ? ", " : "") << table.indexes[i].columns[j];
      }
      out << ")`";
    }
    out << ".\n\n";
  }
  if (!table.order_by.empty()) out << "The reader returns the rows in order of `" << table.order_by << "`.\n\n";
}

void write_meta_keys(std::ostream& out) {
  out << "## META keys\n\n| key | meaning |\n|---|---|\n";
  for (const MetaKeyInfo& k : meta_keys()) out << "| `" << k.key << "` | " << k.doc << " |\n";
  out << "\n### <a id=\"stats\"></a>Stats\n\n"
      << "The counters kept under `stat.<name>` (Note [Trace stats] in "
         "collector/include/npuscope/collector/trace_stats.h). "
      << "`npuscope run` and `npuscope analyze` report every `data_loss` counter that is not zero.\n\n"
      << "| name | severity | meaning |\n|---|---|---|\n";
  for (const StatInfo& s : kStats)
    out << "| `" << s.name << "` | " << severity_name(s.severity) << " | " << s.doc << " |\n";
  out << "\n";
}

void write_enums(std::ostream& out) {
  out << "## <a id=\"enumerations\"></a>Enumerations\n\n";
  for (const EnumInfo& e : enums()) {
    out << "### " << e.name << "\n\nUsed by " << e.columns << ".\n\n| value | name | meaning |\n|---:|---|---|\n";
    for (const EnumValue& v : e.values) out << "| " << v.value << " | `" << v.name << "` | " << v.doc << " |\n";
    out << "\n";
  }
}

void write_examples(std::ostream& out) {
  out << "## Example queries\n\nPaste into `sqlite3 trace.db` (`.mode box` makes the output readable).\n\n";
  for (const ExampleQuery& q : example_queries()) out << "### " << q.title << "\n\n```sql\n" << q.sql << "\n```\n\n";
}

}  // namespace

std::string markdown() {
  std::ostringstream out;
  write_intro(out);
  for (const TableInfo* table : all_tables()) {
    write_table(out, *table);
    if (table->name == "META") write_meta_keys(out);
  }
  write_enums(out);
  write_examples(out);
  std::string text = out.str();
  text.pop_back();  // one newline at the end of the file
  return text;
}

}  // namespace npuscope::collector::schema
