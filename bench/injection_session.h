// The injection library loaded into a bench process the way the emulator loads it (dlopen, then
// npuscope_injection_init), writing into a temporary directory that shutdown() removes.
#pragma once

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::bench {

class InjectionSession {
 public:
  // output_variable: NPUSCOPE_OUTPUT (SQLite in the process) or NPUSCOPE_SPOOL (what `npuscope run`
  // asks for); file_name: the trace or spool inside the temporary directory; config: NPUSCOPE_CONFIG.
  InjectionSession(const char* bench, const char* output_variable, const char* file_name, const char* config) {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "npuscope_bench_XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    std::string lib;
    if (const char* env = std::getenv("NPUSCOPE_INJECTION"); env != nullptr && *env != '\0') {
      lib = env;
    } else {
      lib = (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "runtime_hooks/src/inject" /
             "libnpuscope_inject.so")
                .string();
    }
    setenv(output_variable, (dir_ / file_name).c_str(), 1);
    setenv("NPUSCOPE_CONFIG", config, 1);
    void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "%s: cannot load %s: %s\n", bench, lib.c_str(), dlerror());
      std::exit(1);
    }
    auto init = reinterpret_cast<npuscope_injection_init_fn>(dlsym(handle, NPUSCOPE_INJECTION_INIT_SYMBOL));
    if (init == nullptr || init(&table_) != 0) {
      std::fprintf(stderr, "%s: %s did not start\n", bench, lib.c_str());
      std::exit(1);
    }
  }
  void shutdown() {
    table_.on_shutdown(table_.user);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const hooks::SubscriberTable& table() const { return table_; }

 private:
  std::filesystem::path dir_;
  hooks::SubscriberTable table_;
};

// A bench's main(): the session (and its drain thread) starts before the first measurement and is
// shut down, its trace finalized, after the last.
inline int run_benchmarks_in(InjectionSession& (*session)(), int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  session();
  benchmark::RunSpecifiedBenchmarks();
  session().shutdown();
  benchmark::Shutdown();
  return 0;
}

}  // namespace npuscope::bench
