// The injection library's start-up: NPUSCOPE_OUTPUT and NPUSCOPE_CONFIG. A bad setting must say
// what is wrong ("npuscope: error: ...") and refuse to start (profiling off), never guess.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "inject_test_util.h"

using namespace npuscope;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::TempDir;

namespace {

class InjectConfig : public ::testing::Test {
 protected:
  // Starts (and at once stops) a session with `config`; returns init's result and its stderr.
  std::pair<int, std::string> start(const std::string& config, const std::string& db) {
    testing::internal::CaptureStderr();
    int rc;
    {
      Profiled p(db, config);
      rc = p.rc();
    }
    return {rc, testing::internal::GetCapturedStderr()};
  }
  void expect_refused(const std::string& config, const std::string& says) {
    SCOPED_TRACE(config);
    const auto [rc, err] = start(config, db_);
    EXPECT_NE(rc, 0);
    EXPECT_NE(err.find("npuscope: error: "), std::string::npos) << err;
    EXPECT_NE(err.find(says), std::string::npos) << err;
  }
  TempDir dir_;
  std::string db_ = dir_.file("config.db");
};

}  // namespace

TEST_F(InjectConfig, BadSettingsAreRefusedWithTheReason) {
  expect_refused("{", "not valid JSON");
  expect_refused("[1]", "must be a JSON object");
  expect_refused(R"({"dumps": "stats"})", "unknown key \"dumps\"");
  expect_refused(R"({"dump": "all"})", "\"dump\" must be one of");
  expect_refused(R"({"dump": 1})", "\"dump\" must be one of");
  expect_refused(R"({"ops": "MatMul"})", "\"ops\" must be a list");
  expect_refused(R"({"ops": [""]})", "non-empty glob");
  expect_refused(R"({"steps": "3-1"})", "is empty");
  expect_refused(R"({"steps": "a-b"})", "\"steps\" must be");
  expect_refused(R"({"steps": 3})", "\"steps\" must be a string");
  expect_refused(R"({"max_dump_bytes": -1})", "\"max_dump_bytes\" must be a non-negative integer");
  expect_refused(R"({"overflow_only": "yes"})", "\"overflow_only\" must be true or false");
  expect_refused(R"({"buffer_bytes": 1000})", "\"buffer_bytes\" must be at least 65536");
}

TEST_F(InjectConfig, TheOutputMustBeNamedAndNew) {
  {
    std::ofstream existing(db_);
    existing << "not a trace";
  }
  const auto [rc, err] = start("{}", db_);
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("npuscope: error: "), std::string::npos) << err;
  std::ifstream kept(db_);
  std::string content;
  std::getline(kept, content);
  EXPECT_EQ(content, "not a trace") << "an existing file is never overwritten";

  unsetenv("NPUSCOPE_OUTPUT");
  testing::internal::CaptureStderr();
  hooks::SubscriberTable table;
  EXPECT_NE(inject_test::injection_init()(&table), 0);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("NPUSCOPE_OUTPUT is not set"), std::string::npos);
}

TEST_F(InjectConfig, AnEmptyConfigMeansDefaultsAndIsRecordedInMeta) {
  const auto [rc, err] = start("", db_);
  ASSERT_EQ(rc, 0) << err;
  auto trace = open_trace(db_);
  EXPECT_TRUE(trace->complete());
  const auto config = nlohmann::json::parse(trace->meta("config").value_or("null"));
  EXPECT_EQ(config.at("dump"), "none");
  EXPECT_EQ(config.at("max_dump_bytes"), 0);
  EXPECT_EQ(config.at("overflow_only"), false);
  EXPECT_FALSE(config.contains("steps"));
}

TEST_F(InjectConfig, TheEffectiveSettingsAreRecorded) {
  const auto [rc, err] = start(R"({"dump": "tensor", "ops": ["a*"], "steps": "4", "max_dump_bytes": 1000})", db_);
  ASSERT_EQ(rc, 0) << err;
  const auto config = nlohmann::json::parse(open_trace(db_)->meta("config").value_or("null"));
  EXPECT_EQ(config.at("dump"), "tensor");
  EXPECT_EQ(config.at("ops"), nlohmann::json::array({"a*"}));
  EXPECT_EQ(config.at("steps"), "4-4");
  EXPECT_EQ(config.at("max_dump_bytes"), 1000);
}
