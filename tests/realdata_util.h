// Where the real profiles of shared/realdata are (../shared/realdata beside the source tree, as CI
// lays it out), for tests that read them; such a test skips with a message when they are absent.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace npuscope::testing {

inline std::filesystem::path realdata_dir() {
#ifdef NPUSCOPE_REALDATA_DIR
  return NPUSCOPE_REALDATA_DIR;
#else
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "shared" / "realdata";
#endif
}

}  // namespace npuscope::testing

// The path of `rel` under shared/realdata, or GTEST_SKIP() from the calling test when it is absent.
#define NPUSCOPE_REALDATA_OR_SKIP(var, rel)                                                                      \
  const std::string var = (::npuscope::testing::realdata_dir() / (rel)).string();                                \
  if (!std::filesystem::exists(var)) {                                                                           \
    GTEST_SKIP() << "shared/realdata is absent (" << var << "): the real-profile tests need ../shared/realdata"; \
  }
