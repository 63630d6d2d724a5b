// In-process tests of the injection library: load the built libnpuscope_inject.so the way the
// emulator does (dlopen + npuscope_injection_init), publish its table, run a workload, shut it
// down and read the trace back with the collector's TraceReader.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace inject_test {

namespace fs = std::filesystem;

// $NPUSCOPE_INJECTION, else the library in this build tree (tests/X_test ->
// runtime_hooks/src/inject/). NPUSCOPE_INJECTION is then unset: the emulator runtime would load the
// library a second time by itself, writing to whatever NPUSCOPE_OUTPUT says.
inline std::string library_path() {
  static const std::string path = [] {
    std::string p;
    if (const char* env = std::getenv("NPUSCOPE_INJECTION"); env != nullptr && *env != '\0') {
      p = env;
    } else {
      p = (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "runtime_hooks/src/inject" /
           "libnpuscope_inject.so")
              .string();
    }
    unsetenv("NPUSCOPE_INJECTION");
    return p;
  }();
  return path;
}

inline npuscope_injection_init_fn injection_init() {
  static const npuscope_injection_init_fn fn = []() -> npuscope_injection_init_fn {
    void* handle = dlopen(library_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return nullptr;
    return reinterpret_cast<npuscope_injection_init_fn>(dlsym(handle, NPUSCOPE_INJECTION_INIT_SYMBOL));
  }();
  return fn;
}

// A fresh directory for trace files, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "npuscope_inject_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// One profiling session, as the emulator runs it: init with NPUSCOPE_OUTPUT/NPUSCOPE_CONFIG, the
// table published and the devices announced, then stop().
class Profiled {
 public:
  Profiled(const std::string& db, const std::string& config,
           const npuscope::emulator::RuntimeOptions& options = {.spec = "tiny"}) {
    // A fresh runtime first, so that nothing of an earlier test's devices lands in this trace.
    npuscope::emulator::Runtime::configure(options);
    setenv("NPUSCOPE_OUTPUT", db.c_str(), 1);
    setenv("NPUSCOPE_CONFIG", config.c_str(), 1);
    npuscope_injection_init_fn init = injection_init();
    if (init == nullptr) {
      ADD_FAILURE() << "cannot load " << library_path() << ": " << dlerror();
      return;
    }
    rc_ = init(&table_);
    if (rc_ != 0) return;
    npuscope::hooks::subscribe(&table_);
    npuscope::emulator::Runtime::get().announce_devices();
  }
  ~Profiled() { stop(); }
  Profiled(const Profiled&) = delete;
  Profiled& operator=(const Profiled&) = delete;

  int rc() const { return rc_; }
  bool running() const { return rc_ == 0 && !stopped_; }
  const npuscope::hooks::SubscriberTable& table() const { return table_; }

  // Waits for the devices, unsubscribes and finalizes the trace (what the emulator's atexit does).
  void stop() {
    if (!running()) return;
    stopped_ = true;
    npuscope::emulator::Runtime::get().synchronize_all();
    npuscope::hooks::subscribe(nullptr);
    table_.on_shutdown(table_.user);
  }

 private:
  npuscope::hooks::SubscriberTable table_;
  int rc_ = -1;
  bool stopped_ = false;
};

inline std::unique_ptr<npuscope::collector::TraceReader> open_trace(const std::string& db) {
  return npuscope::collector::TraceReader::open(db);
}

inline std::map<std::string, std::int64_t> stats_of(const npuscope::collector::TraceReader& r) {
  std::map<std::string, std::int64_t> out;
  for (const auto& s : r.stats()) out[s.name] = s.value;
  return out;
}

}  // namespace inject_test
