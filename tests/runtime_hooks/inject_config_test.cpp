// The injection library's start-up: NPUSCOPE_OUTPUT and NPUSCOPE_CONFIG. A bad setting must say
// what is wrong ("npuscope: error: ...") and refuse to start (profiling off), never guess.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "inject_test_util.h"
#include "npuscope/runtime_hooks/inject_config.h"

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
  expect_refused(R"({"steps": "0-99999999999999999999"})", "\"steps\" must be");
  expect_refused(R"({"max_dump_bytes": "100"})", "\"max_dump_bytes\" must be a non-negative integer");
  expect_refused(R"({"max_dump_bytes": 1.5})", "\"max_dump_bytes\" must be a non-negative integer");
  expect_refused(R"({"overflow_only": true, "dump": "stats"})", "\"overflow_only\" needs \"dump\" tensor");
}

// One parser per setting (inject_config.h), whichever way the value comes: NPUSCOPE_CONFIG's JSON
// and `npuscope run`'s flags accept and refuse the same values, in the same words but the name.
TEST(InjectConfigParsers, FlagsAndJsonAgreeValueByValue) {
  using inject::Spelling;
  const auto via_json = [](const std::string& steps) -> std::string {
    try {
      inject::parse_config(R"({"steps": ")" + steps + "\"}");
      return "";
    } catch (const inject::ConfigError& e) {
      const std::string what = e.what(), name = "NPUSCOPE_CONFIG: \"steps\" ";
      EXPECT_EQ(what.rfind(name, 0), 0u) << what;
      return what.substr(name.size());
    }
  };
  const auto via_flag = [](const std::string& steps) -> std::string {
    try {
      inject::parse_steps(steps, Spelling::kFlag);
      return "";
    } catch (const inject::ConfigError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--steps ", 0), 0u) << what;
      return what.substr(8);
    }
  };
  for (const std::string v : {"3", "2-5", "0", "0-0", "5-2", "-1", "A", "", "1-", "-", "3-a", "0-99999999999999999999",
                              "9223372036854775807", "9223372036854775808", " 3", "3 "}) {
    EXPECT_EQ(via_json(v), via_flag(v)) << "'" << v << "'";
  }
  EXPECT_EQ(via_flag("3"), "");
  EXPECT_NE(via_flag("5-2").find("is empty"), std::string::npos);
  EXPECT_NE(via_flag("0-99999999999999999999"), "");
  const inject::StepRange one = inject::parse_steps("3", Spelling::kFlag),
                          range = inject::parse_steps("2-5", Spelling::kFlag);
  EXPECT_EQ(one.first, 3);
  EXPECT_EQ(one.last, 3);
  EXPECT_EQ(range.first, 2);
  EXPECT_EQ(range.last, 5);

  EXPECT_EQ(inject::parse_bytes("4096", inject::Setting::kMaxDumpBytes, Spelling::kFlag), 4096u);
  for (const char* bad : {"-5", "", "1e3", "12k", "18446744073709551616"}) {
    EXPECT_THROW(inject::parse_bytes(bad, inject::Setting::kMaxDumpBytes, Spelling::kFlag), inject::ConfigError) << bad;
  }
  try {
    inject::parse_bytes("-5", inject::Setting::kMaxDumpBytes, Spelling::kFlag);
  } catch (const inject::ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--max-dump-bytes must be a non-negative integer (bytes) up to 1125899906842624, got \"-5\"");
  }
  // Issue 15: 2^64-5 (what "-5" wraps to as an unsigned) and anything past the documented maximum are
  // refused, by the flag and by NPUSCOPE_CONFIG alike; the maxima themselves are accepted.
  for (const char* past : {"18446744073709551611", "1125899906842625"}) {
    EXPECT_THROW(inject::parse_bytes(past, inject::Setting::kMaxDumpBytes, Spelling::kFlag), inject::ConfigError)
        << past;
    EXPECT_THROW(inject::parse_config(std::string(R"({"max_dump_bytes": )") + past + "}"), inject::ConfigError) << past;
  }
  EXPECT_EQ(inject::parse_bytes("1125899906842624", inject::Setting::kMaxDumpBytes, Spelling::kFlag),
            inject::kMaxDumpBytesLimit);
  EXPECT_THROW(inject::parse_config(R"({"buffer_bytes": 1099511627777})"), inject::ConfigError);
  EXPECT_EQ(inject::parse_config(R"({"buffer_bytes": 1099511627776})").buffer_bytes, inject::kMaxBufferBytes);
  EXPECT_EQ(inject::parse_dump("tensor", Spelling::kFlag), inject::DumpMode::kTensor);
  EXPECT_EQ(inject::parse_dump("md5", Spelling::kFlag), inject::DumpMode::kMd5);
  EXPECT_EQ(inject::parse_config(R"({"dump": "md5"})").dump, inject::DumpMode::kMd5);
  EXPECT_EQ(inject::parse_config(inject::parse_config(R"({"dump": "md5"})").to_json()).dump, inject::DumpMode::kMd5);
  EXPECT_THROW(inject::parse_dump("all", Spelling::kFlag), inject::ConfigError);
  inject::InjectConfig overflow_only;
  overflow_only.overflow_only = true;
  try {
    inject::validate(overflow_only, Spelling::kFlag);
    ADD_FAILURE() << "--overflow-only without --dump tensor was accepted";
  } catch (const inject::ConfigError& e) {
    EXPECT_STREQ(e.what(), "--overflow-only needs --dump tensor");
  }
}

// What `npuscope run` hands the library (to_json) reads back as the same settings.
TEST(InjectConfigParsers, ToJsonReadsBack) {
  inject::InjectConfig c;
  c.dump = inject::DumpMode::kTensor;
  c.ops = {"layer0/*", "*MatMul"};
  c.has_steps = true;
  c.step_first = c.step_last = 3;
  c.max_dump_bytes = 12345;
  c.overflow_only = true;
  c.buffer_bytes = 1 << 20;
  const inject::InjectConfig back = inject::parse_config(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_EQ(back.ops, c.ops);
  EXPECT_TRUE(back.selects("layer0/Add", 3));
  EXPECT_FALSE(back.selects("layer0/Add", 4));
  EXPECT_FALSE(back.selects("layer1/Add", 3));
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
