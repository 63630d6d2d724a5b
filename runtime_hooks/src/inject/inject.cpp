// The injection library's entry point: npuscope_injection_init, the one exported symbol.
//
// It reads NPUSCOPE_OUTPUT (the trace to create; an existing file is never overwritten), or
// NPUSCOPE_SPOOL (the spool `npuscope run` converts into the trace: Note [Trace spool] in
// trace_spool.h), and NPUSCOPE_CONFIG (config.h), creates the trace or spool, writes what is known at start into META
// (command line, pid, effective config, start time), starts the session's drain thread and fills the emulator's
// subscriber table. Any failure is said on stderr ("npuscope: error: ...") and returns non-zero: the emulator then runs
// with profiling off.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "hook_callbacks.h"
#include "npuscope/collector/trace_spool.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "npuscope/runtime_hooks/inject_config.h"
#include "session.h"

namespace npuscope::inject {
namespace {

// The command line, shell-quoted where needed, from /proc/self/cmdline.
std::string command_line() {
  std::string raw;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) raw.append(buf, n);
    std::fclose(f);
  }
  std::string out;
  std::size_t pos = 0;
  while (pos < raw.size()) {
    std::size_t end = raw.find('\0', pos);
    if (end == std::string::npos) end = raw.size();
    const std::string arg = raw.substr(pos, end - pos);
    if (!out.empty()) out += ' ';
    if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
    pos = end + 1;
  }
  return out;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

void write_start_meta(collector::TraceWriter& w, const InjectConfig& config) {
  w.set_meta("command", command_line());
  w.set_meta("pid", std::to_string(getpid()));
  w.set_meta("config", config.to_json());
  w.set_meta("start_time", utc_now_iso8601());
}

bool is_set(const char* value) { return value != nullptr && *value != '\0'; }

// The spool when npuscope run asked for one, else the trace database itself.
std::unique_ptr<collector::TraceWriter> create_writer() {
  if (const char* spool = std::getenv("NPUSCOPE_SPOOL"); is_set(spool)) return collector::create_spool_writer(spool);
  const char* output = std::getenv("NPUSCOPE_OUTPUT");
  if (!is_set(output)) {
    throw ConfigError("NPUSCOPE_OUTPUT is not set: it names the trace database to write (npuscope run -o sets it)");
  }
  return collector::TraceWriter::create(output);
}

// Every session ever started stays reachable from here: immortal (Note [Session lifecycle]), and
// to LeakSanitizer an object in use rather than a leak once a later session replaces it.
void keep_forever(Session* session) {
  static auto* const mutex = new std::mutex();
  static auto* const sessions = new std::vector<Session*>();
  std::lock_guard lock(*mutex);
  sessions->push_back(session);
}

int init(hooks::SubscriberTable* table) {
  const char* config_text = std::getenv("NPUSCOPE_CONFIG");
  InjectConfig config = parse_config(config_text != nullptr ? config_text : "");
  std::unique_ptr<collector::TraceWriter> writer = create_writer();
  write_start_meta(*writer, config);
  writer->commit();
  // Immortal: hook calls may race with the end of the process (Note [Session lifecycle]).
  auto* session = new Session(std::move(config), std::move(writer));
  keep_forever(session);
  session->start();
  fill_subscriber_table(*table, *session);
  return 0;
}

}  // namespace
}  // namespace npuscope::inject

extern "C" __attribute__((visibility("default"))) int npuscope_injection_init(npuscope::hooks::SubscriberTable* table) {
  if (table == nullptr) return 1;
  std::string reason;
  try {
    return npuscope::inject::init(table);
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
    reason = "the injection library failed to start";
  }
  // Note [Why profiling did not start] in hook_api.h.
  std::fprintf(stderr, "npuscope: error: %s\n", reason.c_str());
  npuscope::hooks::report_not_started(reason.c_str());
  return 1;
}
