// What the harnesses share: the fuzzer's bytes as a file (the loaders under test take paths, as
// users give them). Note [Harness rule]: a harness lets through only the typed errors its library
// documents; anything else that escapes (std::bad_alloc, std::out_of_range, a crash, a sanitizer
// report) is a finding, so libFuzzer stops on it and the input becomes a regression case.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace npuscope::fuzz {

// A file holding `data` (and any scratch paths handed out beside it), removed at scope exit. In
// /dev/shm where there is one: a fuzzer writes one per input, thousands a second.
class InputFile {
 public:
  InputFile(const std::string& name, const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    path_ = (dir / ("npuscope-fuzz-" + std::to_string(getpid()) + "-" + name)).string();
    std::ofstream(path_, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ~InputFile() {
    remove_with_suffixes(path_);
    for (const auto& p : scratch_) remove_with_suffixes(p);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }

  // A path beside the input for an output the code under test writes.
  std::string scratch(const std::string& suffix) {
    scratch_.push_back(path_ + suffix);
    return scratch_.back();
  }

 private:
  // SQLite leaves -journal/-wal/-shm files beside a database; the trace writer a .part.
  static void remove_with_suffixes(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-journal", "-wal", "-shm", ".part"}) std::filesystem::remove_all(path + suffix, ec);
  }

  std::string path_;
  std::vector<std::string> scratch_;
};

}  // namespace npuscope::fuzz
