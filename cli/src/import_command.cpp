// npuscope import SRC [-o T.db] [--force]: a real profile into a trace (Note [Importing a source] in
// npuscope/importer/import.h). Without -o the trace is the cached one every command uses.
#include <cstdio>
#include <string>

#include "command.h"
#include "import_report.h"
#include "npuscope/importer/import.h"

namespace npuscope::cli {
namespace {

constexpr const char* kUsage = "npuscope import SRC [-o T.db] [--force]";

}  // namespace

int import_command(int argc, char** argv) {
  std::string source_path, output;
  bool force = false;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("source", po::value(&source_path),
                                                 "the profile: a folder or a file another tool wrote (positional)")(
      "output,o", po::value(&output),
      "write the trace here (default: beside the source, SRC.npuscope.db, the trace every command uses)")(
      "force", po::bool_switch(&force), "replace an existing output file; re-import a cached one");
  po::positional_options_description positional;
  positional.add("source", 1);
  if (!parse_flags(argc, argv, desc, kUsage, &positional)) {
    std::printf("\nSources:\n");
#define NPUSCOPE_FORMAT_HELP(e, name, doc) std::printf("  %-30s %s\n", name, doc);
    NPUSCOPE_IMPORT_FORMATS(NPUSCOPE_FORMAT_HELP)
#undef NPUSCOPE_FORMAT_HELP
    return 0;
  }
  if (source_path.empty()) throw UsageError(std::string("no source given\nusage: ") + kUsage);
  const auto source = importer::detect(source_path);
  if (!source) {
    throw InputError(source_path +
                     ": not a profile npuscope imports (an Ascend PyTorch Profiler folder or db, an msprof "
                     "PROF_* folder or db, a trace_view.json or msprof_*.json, a Kineto .json[.gz]); "
                     "`npuscope import --help` lists them");
  }
  const std::string trace = output.empty() ? importer::cache_path_of(*source) : output;
  const importer::ImportReport report = importer::import_to_file(*source, trace, force || output.empty());
  print_import(stdout, *source, trace, report, true);
  return 0;
}

}  // namespace npuscope::cli
