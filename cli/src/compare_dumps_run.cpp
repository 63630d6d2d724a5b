// Note [Comparing dump trees] (compare_dumps_run.h).
#include "compare_dumps_run.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/analyzer/msprobe_entries.h"
#include "npuscope/comparator/compare_dumps.h"
#include "npuscope/comparator/compare_report.h"
#include "npuscope/importer/import.h"
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

std::string sides(const std::vector<MsprobeDump>& dumps) {
  std::string out;
  for (const MsprobeDump& d : dumps) out += (out.empty() ? "" : "; ") + where(d);
  return out;
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
  if (f.format == "json") {
    nlohmann::json out = {{"comparisons", nlohmann::json::array()}, {"unpaired", unpaired}};
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      out["comparisons"].push_back({{"step", pairs[i].npu->step},
                                    {"rank", pairs[i].npu->rank},
                                    {"npu", pairs[i].npu->path},
                                    {"bench", pairs[i].bench->path},
                                    {"report", nlohmann::json::parse(analyzer::to_json(reports[i]))}});
    }
    const std::string text = out.dump(2) + "\n";
    if (f.output.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      write_text_file(f.output, text);
    }
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

// One side's dumps: an msprobe dump read from its files, or an npuscope trace's PyTorch dump
// (analyzer::msprobe_dumps: msprobe's names, one dump per step), whose tensors load from `trace`,
// kept open while they are compared.
std::vector<MsprobeDump> dumps_of(const std::string& path, std::unique_ptr<collector::TraceReader>& trace) {
  if (!is_dump_side(path)) {
    trace = open_trace(path, {});
    std::vector<MsprobeDump> dumps = analyzer::msprobe_dumps(*trace);
    if (dumps.empty()) {
      throw InputError(path + " is neither an msprobe dump nor a trace with a PyTorch dump: " +
                       analyzer::msprobe_dump_problem(*trace));
    }
    return dumps;
  }
  try {
    std::vector<MsprobeDump> dumps = importer::read_msprobe_dumps(path);
    if (dumps.empty()) throw InputError(path + ": no dump.json under it");
    return dumps;
  } catch (const importer::ImportError& e) {
    throw InputError(e.what());
  }
}

int compare_dump_sides(const std::string& npu_path, const std::string& bench_path, const DumpCompareFlags& f) {
  std::unique_ptr<collector::TraceReader> npu_trace, bench_trace;
  const std::vector<MsprobeDump> npu = dumps_of(npu_path, npu_trace), bench = dumps_of(bench_path, bench_trace);
  std::vector<std::string> unpaired;
  const std::vector<DumpPair> pairs = importer::pair_msprobe_dumps(npu, bench, unpaired);
  if (pairs.empty()) {
    throw InputError("no step and rank of " + npu_path + " (" + sides(npu) + ") is in " + bench_path + " (" +
                     sides(bench) + "): nothing to compare");
  }
  for (const std::string& line : unpaired) std::fprintf(stderr, "npuscope compare: %s\n", line.c_str());
  comparator::DumpCompareOptions options{f.mapping, f.fuzzy_match, f.progress};
  std::vector<comparator::DumpCompareResult> results;
  std::vector<analyzer::Report> reports;
  bool failed = false;
  for (const DumpPair& p : pairs) {
    try {
      results.push_back(comparator::compare_dumps(*p.npu, *p.bench, options));
    } catch (const comparator::CompareError& e) {
      throw InputError(e.what());
    }
    failed |= results.back().failed > 0;
    reports.push_back(comparator::compare_report(results.back(), f.format == "text" ? f.top : 0, f.format != "text"));
    for (const std::string& line : unpaired) reports.back().notes.push_back(line);
  }
  // The form follows what was named, not how many pairs were found: a tree reports as a tree even
  // when one step of it paired, so that its unpaired dumps are in the JSON and a script reading it
  // meets one shape.
  if (npu.size() == 1 && bench.size() == 1) {
    write_report(reports.front(), f.format, f.output, "the comparison of " + npu_path + " and " + bench_path);
  } else {
    write_many(pairs, reports, unpaired, f);
  }
  return f.fail_on_mismatch && failed ? 1 : 0;
}

}  // namespace npuscope::cli
