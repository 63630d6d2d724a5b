// Recovering a killed run's trace from its spool: Note [Recovering a killed run] in
// trace_recovery.h, with the locks of Note [Spool ownership] in trace_spool.h.
#include "npuscope/collector/trace_recovery.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "output_file.h"
#include "spool_lock.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSpoolSuffix = ".spool";

// The spool, open with the locks this recovery took: closing drops them.
class OpenSpool {
 public:
  explicit OpenSpool(int fd) : fd_(fd) {}
  ~OpenSpool() { ::close(fd_); }
  OpenSpool(const OpenSpool&) = delete;
  OpenSpool& operator=(const OpenSpool&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool opens_as_trace(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  try {
    TraceReader::open(path, {.verify = false});
    return true;
  } catch (const TraceError&) {
    return false;
  }
}

std::string cannot_recover(const TraceRecovery& r) {
  return "cannot recover " + r.trace + " from " + r.spool + " (left by a run that was killed): ";
}

// Files a killed converter or a killed recovery left beside the trace. Ours to remove: whoever made
// them is dead (the caller holds the recovery lock and the owner lock).
void remove_leftovers(const std::string& trace) {
  remove_output_file(trace + ".part");
  const fs::path p(trace);
  const std::string prefix = p.filename().string() + ".recover-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(p.parent_path().empty() ? "." : p.parent_path(), ec)) {
    if (entry.path().filename().string().starts_with(prefix)) remove_output_file(entry.path().string());
  }
}

// Step 6 of the Note: replay into a temporary file, rename it over the trace, remove the spool.
void convert(TraceRecovery& r) {
  const fs::path dir = fs::absolute(r.trace).parent_path();
  if (::access(dir.c_str(), W_OK) != 0) {
    throw TraceError(cannot_recover(r) + "cannot write in " + dir.string() + ": " + std::strerror(errno) +
                     "; make it writable, or copy " + r.spool + " into a directory you can write and open the copy");
  }
  remove_leftovers(r.trace);
  const std::string temp = r.trace + ".recover-" + std::to_string(::getpid());
  try {
    auto writer = TraceWriter::create(temp, {.overwrite = true, .durable = false, .ranked = true});
    r.replay = replay_spool(r.spool, *writer);
    writer.reset();
  } catch (const TraceError& e) {
    remove_output_file(temp);
    throw TraceError(cannot_recover(r) + e.what() + " (the spool is kept)");
  }
  if (::rename(temp.c_str(), r.trace.c_str()) != 0) {
    const int err = errno;
    remove_output_file(temp);
    throw TraceError(cannot_recover(r) + "cannot replace " + r.trace + ": " + std::strerror(err) +
                     " (the spool is kept)");
  }
  ::unlink(r.spool.c_str());  // if this fails, the next recovery finds the trace whole (step 4)
  r.recovered = true;
}

}  // namespace

TraceRecovery recover_trace(const std::string& path) {
  TraceRecovery r;
  const bool names_spool = path.ends_with(kSpoolSuffix) && path.size() > kSpoolSuffix.size();
  r.trace = names_spool ? path.substr(0, path.size() - kSpoolSuffix.size()) : path;
  r.spool = r.trace + std::string(kSpoolSuffix);
  const int fd = ::open(r.spool.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || opens_as_trace(r.trace)) return r;  // 1: no spool, or one already converted
    throw TraceError(cannot_recover(r) + r.spool + ": " + std::strerror(err) +
                     (err == EACCES || err == EPERM || err == EROFS
                          ? "; recovering needs to write it: open the trace as its owner, or copy the spool (cp " +
                                r.spool + " COPY.db.spool) and open the copy"
                          : ""));
  }
  const OpenSpool spool(fd);
  spool::lock(fd, spool::LockByte::kRecovery, spool::LockMode::kExclusive, true, r.spool);  // 2
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_nlink == 0) return r;  // another recovery made the trace
  if (!spool::lock(fd, spool::LockByte::kOwner, spool::LockMode::kExclusive, false, r.spool)) {  // 3
    if (opens_as_trace(r.trace)) return r;
    throw TraceError(r.trace + " is not ready: " + r.spool +
                     " is still being written by a running `npuscope run` or its program; open the trace once "
                     "the run has finished");
  }
  if (opens_as_trace(r.trace)) return r;  // 4
  if (st.st_size == 0) {                  // 5
    throw TraceError("there is no trace to recover: " + r.spool +
                     " is empty (the run that made it was killed before its program recorded anything); remove it");
  }
  convert(r);  // 6
  return r;
}

std::string describe(const TraceRecovery& r) {
  std::string s = "recovered " + r.trace + " from " + r.spool + " left by a run that was killed";
  const std::string rows = std::to_string(r.replay.rows) + " rows";
  s += r.replay.complete ? " while converting it: " + rows + ", the program had finished recording"
                         : ": " + rows + ", the trace is marked incomplete";
  if (r.replay.torn_bytes > 0) {
    s += " (the last " + std::to_string(r.replay.torn_bytes) + " bytes, a write cut short by the kill, are lost)";
  }
  return s;
}

}  // namespace npuscope::collector
