// Note [Comparing dump trees] (compare_dumps_run.h).
#include "compare_dumps_run.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <utility>

#include "command.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/collector/json_string.h"
#include "npuscope/comparator/compare_dumps.h"
#include "npuscope/comparator/compare_report.h"
#include "npuscope/comparator/dump_sides.h"
#include "npuscope/importer/msprobe_dump_reader.h"
#include "open_trace.h"
#include "report_output.h"

namespace npuscope::cli {
namespace {

using collector::MsprobeDump;

using DumpPair = importer::MsprobeDumpPair;
constexpr auto where = importer::dump_place;

// A pair's CSV folder: step{S}_rank{R}, the dump's own folder name where msprobe knew no rank
// (step0_proc2016).
std::string folder_of(const MsprobeDump& d) {
  const std::string step = d.step < 0 ? "step" : "step" + std::to_string(d.step);
  if (d.rank >= 0) return step + "_rank" + std::to_string(d.rank);
  return step + "_" + std::filesystem::path(d.path).filename().string();
}

void write_many(const std::vector<DumpPair>& pairs, const std::vector<analyzer::Report>& reports,
                const std::vector<std::string>& unpaired, const DumpCompareFlags& f) {
  if (f.format == "csv") {
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string dir = (std::filesystem::path(f.output) / folder_of(*pairs[i].npu)).string();
      write_report(reports[i], "csv", dir, "the comparison of " + pairs[i].npu->path + " and " + pairs[i].bench->path);
    }
    return;
  }
  if (f.format == "json") {  // written as it goes: a report's compare_result is streamed
    write_json_output(f.output, [&](std::ostream& out) {
      const auto quoted = [](std::string_view s) {
        std::string q;
        collector::append_json_string(q, s);
        return q;
      };
      out << "{\n  \"comparisons\": [";
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        out << (i ? "," : "") << "\n    {\n      \"step\": " << pairs[i].npu->step
            << ",\n      \"rank\": " << pairs[i].npu->rank << ",\n      \"npu\": " << quoted(pairs[i].npu->path)
            << ",\n      \"bench\": " << quoted(pairs[i].bench->path) << ",\n      \"report\": ";
        analyzer::write_json(reports[i], out, 6);
        out << "\n    }";
      }
      out << (pairs.empty() ? "]" : "\n  ]") << ",\n  \"unpaired\": [";
      for (std::size_t i = 0; i < unpaired.size(); ++i) out << (i ? "," : "") << "\n    " << quoted(unpaired[i]);
      out << (unpaired.empty() ? "]" : "\n  ]") << "\n}";
    });
    return;
  }
  std::ostringstream text;
  const analyzer::TextStyle style = f.output.empty() ? stdout_text_style() : analyzer::TextStyle{};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    text << (i ? "\n" : "") << "== " << where(*pairs[i].npu) << ": " << pairs[i].npu->path << " against "
         << pairs[i].bench->path << " ==\n";
    analyzer::write_text(reports[i], text, style);
  }
  if (f.output.empty()) {
    std::cout << text.str();
  } else {
    write_text_file(f.output, text.str());
  }
}

}  // namespace

bool is_dump_side(const std::string& path) { return importer::is_msprobe_dump(path); }

int compare_dump_sides(const std::string& npu_path, const std::string& bench_path, const DumpCompareFlags& f) {
  comparator::DumpSides sides;  // a trace side's tensors load from its trace, kept open in it
  try {
    sides =
        comparator::read_dump_sides(npu_path, bench_path, [](const std::string& path) { return open_trace(path, {}); });
  } catch (const comparator::CompareError& e) {
    throw InputError(e.what());
  }
  const std::vector<DumpPair>& pairs = sides.pairs;
  const std::vector<std::string>& unpaired = sides.unpaired;
  for (const std::string& line : unpaired) std::fprintf(stderr, "npuscope compare: %s\n", line.c_str());
  comparator::DumpCompareOptions options{f.mapping, f.fuzzy_match, f.progress};
  std::vector<comparator::DumpCompareResult> results;
  results.reserve(pairs.size());  // the reports' streamed compare_result points into them
  std::vector<analyzer::Report> reports;
  bool failed = false;
  for (const DumpPair& p : pairs) {
    try {
      results.push_back(comparator::compare_dumps(*p.npu, *p.bench, options));
    } catch (const comparator::CompareError& e) {
      throw InputError(e.what());
    }
    failed |= results.back().failed > 0;
    reports.push_back(comparator::compare_report(results.back(), f.format == "text" ? f.top : 0, false));
    if (f.format != "text") comparator::stream_compare_result(reports.back(), results.back());
    for (const std::string& line : unpaired) reports.back().notes.push_back(line);
  }
  // The form follows what was named, not how many pairs were found: a tree reports as a tree even
  // when one step of it paired, so that its unpaired dumps are in the JSON and a script reading it
  // meets one shape.
  if (sides.npu.dumps.size() == 1 && sides.bench.dumps.size() == 1) {
    write_report(reports.front(), f.format, f.output, "the comparison of " + npu_path + " and " + bench_path);
  } else {
    write_many(pairs, reports, unpaired, f);
  }
  return f.fail_on_mismatch && failed ? 1 : 0;
}

}  // namespace npuscope::cli
