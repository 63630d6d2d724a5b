#include "output_file.h"

#include <filesystem>

#include "npuscope/collector/trace_error.h"

namespace npuscope::collector {
namespace fs = std::filesystem;

namespace {
constexpr const char* kSideFileSuffixes[] = {"", "-wal", "-shm", "-journal"};
}  // namespace

void prepare_output_file(const std::string& path, bool overwrite) {
  std::error_code ec;
  const fs::path parent = fs::absolute(path, ec).parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw TraceError("cannot create " + path + ": directory " + parent.string() + " does not exist");
  }
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  if (fs::is_directory(path, ec)) throw TraceError("cannot create " + path + ": it is a directory");
  if (!overwrite) {
    throw TraceError(path + " already exists: remove it, choose another output file, or overwrite it");
  }
  for (const char* suffix : kSideFileSuffixes) {
    fs::remove(path + suffix, ec);
    if (ec) throw TraceError("cannot overwrite " + path + suffix + ": " + ec.message());
  }
}

void remove_output_file(const std::string& path) noexcept {
  std::error_code ec;
  for (const char* suffix : kSideFileSuffixes) fs::remove(path + suffix, ec);
}

}  // namespace npuscope::collector
