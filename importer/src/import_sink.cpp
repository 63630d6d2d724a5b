#include "import_sink.h"

namespace npuscope::importer {

ImportSink::ImportSink(collector::TraceWriter& out, const Source& source) : out_(out) {
  report_.format = source.format;
}

void ImportSink::unmapped(std::string_view file, std::string_view what, std::int64_t count) {
  const auto it = unmapped_.find(std::pair<std::string_view, std::string_view>(file, what));
  if (it != unmapped_.end()) {
    it->second += count;
  } else {
    unmapped_.emplace(std::pair<std::string, std::string>(file, what), count);
  }
}

ImportReport ImportSink::finish() {
  std::apply([this](auto&... batch) { (flush(batch), ...); }, batches_);
  std::vector<collector::UnmappedRow> rows;
  for (const auto& [key, count] : unmapped_) {
    rows.push_back({.source_id = id(key.first), .what_id = id(key.second), .count = count});
    report_.unmapped.push_back({key.first, key.second, count});
  }
  out_.add(rows);
  return report_;
}

}  // namespace npuscope::importer
