// The injection library's entry point and its hook callbacks (the hot path).
//
// npuscope_injection_init (the one exported symbol) reads NPUSCOPE_OUTPUT and NPUSCOPE_CONFIG,
// creates the trace, writes what is known at start into META and fills the emulator's subscriber
// table. Each callback then checks the session state, finds this thread's buffer and stores one
// entry (Note [Record buffers]); the work of turning entries into rows waits for the drain thread.
// Callbacks never throw, never block, and only read the data they are given.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "config.h"
#include "entries.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "session.h"

namespace npuscope::inject {
namespace {

using hooks::ApiRecord;
using hooks::DeviceRecord;
using hooks::MarkerRecord;
using hooks::MemcpyRecord;
using hooks::MemoryRecord;
using hooks::OverflowRecord;
using hooks::TaskRecord;
using hooks::TensorRecord;

// The producer's common prologue: null when this record is not to be stored (counted).
inline ThreadState* producer(Session& s) noexcept {
  if (!s.recording()) [[unlikely]] {
    s.count_late_drop();
    return nullptr;
  }
  return s.thread();
}

void on_api(void* user, const ApiRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  ThreadState* t = producer(s);
  if (t == nullptr) [[unlikely]] return;
  t->thread_id = r.thread_id;  // launches inside this call are attributed to this thread
  t->queue.push(ApiEntry{Tag::kApi, r});
}

void on_task_end(Session& s, ThreadState& t, const TaskRecord& r) noexcept {
  LaunchTable::Info info;
  if (!s.launches().get(r.task_id, &info)) [[unlikely]] s.count_launch_info_lost();
  if (s.config().dump != DumpMode::kNone) t.capture.on_task_end(s.capture(), r, t.queue);
  t.queue.push(TaskEndEntry{Tag::kTaskEnd, info.thread_id, r});
}

void on_task(void* user, const TaskRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  ThreadState* t = producer(s);
  if (t == nullptr) [[unlikely]] return;
  switch (r.phase) {
    case hooks::TaskPhase::kQueued:  // on the launching thread: see Note [Launch table]
      s.launches().put(r.task_id, {t->thread_id, s.launch_step(*t), r.name});
      return;
    case hooks::TaskPhase::kBegin: return;  // kEnd repeats everything kBegin says
    case hooks::TaskPhase::kEnd: return on_task_end(s, *t, r);
  }
}

void on_memory(void* user, const MemoryRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  if (ThreadState* t = producer(s)) [[likely]] t->queue.push(MemoryEntry{Tag::kMemory, r});
}

void on_memcpy(void* user, const MemcpyRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  if (ThreadState* t = producer(s)) [[likely]] t->queue.push(MemcpyEntry{Tag::kMemcpy, r});
}

void on_marker(void* user, const MarkerRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  ThreadState* t = producer(s);
  if (t == nullptr) [[unlikely]] return;
  if (r.kind == hooks::MarkerKind::kStepBegin) {
    t->step = r.step;
    s.set_global_step(r.step);
  } else if (r.kind == hooks::MarkerKind::kStepEnd) {
    t->step = -1;
    s.set_global_step(-1);
  }
  t->queue.push(MarkerEntry{Tag::kMarker, r});
}

void on_tensor(void* user, const TensorRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  if (ThreadState* t = producer(s)) [[likely]] t->capture.on_tensor(s.capture(), r);
}

void on_overflow(void* user, const OverflowRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  if (ThreadState* t = producer(s)) [[likely]] t->queue.push(OverflowEntry{Tag::kOverflow, r});
}

void on_device(void* user, const DeviceRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  if (ThreadState* t = producer(s)) [[likely]] t->queue.push(DeviceEntry{Tag::kDevice, r});
}

void on_shutdown(void* user) noexcept { static_cast<Session*>(user)->shutdown(); }

// ---- META ---------------------------------------------------------------------------------------

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

int init(hooks::SubscriberTable* table) {
  const char* output = std::getenv("NPUSCOPE_OUTPUT");
  if (output == nullptr || *output == '\0') {
    throw ConfigError("NPUSCOPE_OUTPUT is not set: it names the trace database to write (npuscope run -o sets it)");
  }
  const char* config_text = std::getenv("NPUSCOPE_CONFIG");
  InjectConfig config = parse_config(config_text != nullptr ? config_text : "");
  std::unique_ptr<collector::TraceWriter> writer = collector::TraceWriter::create(output);
  write_start_meta(*writer, config);
  writer->commit();
  // Immortal: hook calls may race with the end of the process (Note [Session lifecycle]).
  auto* session = new Session(std::move(config), std::move(writer));
  session->start();
  *table = hooks::SubscriberTable{};
  table->user = session;
  table->wants_tensors = session->config().dump != DumpMode::kNone;
  table->on_api = on_api;
  table->on_task = on_task;
  table->on_memory = on_memory;
  table->on_memcpy = on_memcpy;
  table->on_marker = on_marker;
  table->on_tensor = on_tensor;
  table->on_overflow = on_overflow;
  table->on_device = on_device;
  table->on_shutdown = on_shutdown;
  return 0;
}

}  // namespace
}  // namespace npuscope::inject

extern "C" __attribute__((visibility("default"))) int npuscope_injection_init(npuscope::hooks::SubscriberTable* table) {
  if (table == nullptr) return 1;
  try {
    return npuscope::inject::init(table);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npuscope: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "npuscope: error: the injection library failed to start\n");
  }
  return 1;
}
