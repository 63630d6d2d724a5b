// What the importer tests write their sources into: a temporary directory of their own, removed at
// the end, and plain or gzip files in it.
#pragma once

#include <stdlib.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace npuscope::importer::test {

class TestFiles {
 public:
  TestFiles(const TestFiles&) = delete;
  TestFiles& operator=(const TestFiles&) = delete;

 protected:
  TestFiles() = default;
  ~TestFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // `text` in a file `name` of the directory; its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // `text` gzip-compressed.
  std::string write_gz(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return p;
  }

  std::filesystem::path dir_ = [] {
    std::string t = (std::filesystem::temp_directory_path() / "npuscope_import_test_XXXXXX").string();
    return std::filesystem::path(mkdtemp(t.data()));
  }();
};

}  // namespace npuscope::importer::test
