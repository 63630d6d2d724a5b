#include "import_report.h"

#include <algorithm>

namespace npuscope::cli {

void print_import(std::FILE* out, const importer::Source& source, const std::string& trace,
                  const importer::ImportReport& r, bool every_unmapped) {
  std::fprintf(out, "npuscope: imported %s (%s) to %s: %lld tasks, %lld host ops, %lld API calls, %lld rows%s\n",
               source.path.c_str(), std::string(importer::format_name(source.format)).c_str(), trace.c_str(),
               static_cast<long long>(r.tasks), static_cast<long long>(r.host_ops), static_cast<long long>(r.api_calls),
               static_cast<long long>(r.rows),
               r.incomplete ? "; the source was cut short: the trace is marked incomplete" : "");
  for (const std::string& note : r.notes) std::fprintf(out, "  note: %s\n", note.c_str());
  if (r.unmapped.empty()) return;
  std::int64_t total = 0;
  for (const auto& u : r.unmapped) total += u.count;
  std::fprintf(out, "  not mapped (counted in the trace's UNMAPPED table): %lld items of %zu kinds\n",
               static_cast<long long>(total), r.unmapped.size());
  if (!every_unmapped) return;
  auto sorted = r.unmapped;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  for (const auto& u : sorted) {
    std::fprintf(out, "    %10lld  %s  (%s)\n", static_cast<long long>(u.count), u.what.c_str(), u.source.c_str());
  }
}

}  // namespace npuscope::cli
