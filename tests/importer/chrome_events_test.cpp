// The Chrome-trace event stream every JSON importer reads through (Note [Streaming Chrome events]).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../importer/src/chrome_events.h"
#include "npuscope/importer/import.h"
#include "test_files.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;

// A list or object argument is its JSON text, with the spaces as written or without (Note
// [Streaming Chrome events]).
std::string without_spaces(std::string s) {
  std::erase(s, ' ');
  return s;
}

class ChromeEventsTest : public ::testing::Test, protected test::TestFiles {
 protected:
  struct Seen {
    std::string ph, name, cat, pid, tid, id;
    std::optional<std::int64_t> ts, dur;
    std::vector<std::pair<std::string, std::string>> args;
  };
  std::vector<Seen> read(const std::string& path, ChromeStreamResult* result = nullptr,
                         std::vector<std::pair<std::string, std::string>>* top = nullptr) {
    std::vector<Seen> out;
    ChromeHandlers h;
    h.event = [&](const ChromeEvent& e) {
      Seen s{std::string(e.ph),
             std::string(e.name),
             std::string(e.cat),
             std::string(e.pid),
             std::string(e.tid),
             std::string(e.id),
             e.ts_ns,
             e.dur_ns,
             {}};
      for (const ChromeArg& a : e.args) s.args.emplace_back(a.key, a.value);
      out.push_back(std::move(s));
    };
    h.top_level = [&](std::string_view k, std::string_view v) {
      if (top) top->emplace_back(k, v);
    };
    const ChromeStreamResult r = stream_chrome_events(path, h);
    if (result) *result = r;
    return out;
  }
};

TEST_F(ChromeEventsTest, ABareArrayWithStringTimesAndHugeFlowIdsIsReadExactly) {
  // torch_npu's trace_view.json: ts as a string with ns digits, flow ids past 2^53.
  const auto events = read(write("trace_view.json", R"([
    {"name": "aclnnAdd", "pid": 1, "tid": "Stream 7", "ts": "1736408883688177.930", "dur": 12.5, "ph": "X",
     "args": {"connection_id": 7, "Input Dims": [[1, 2], [3]], "shapes": "a\"b"}},
    {"ph": "s", "id": 18446744073709551615, "name": "HostToDevice", "ts": 1.0001, "cat": "HostToDevice"}
  ])"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, "aclnnAdd");
  EXPECT_EQ(events[0].tid, "Stream 7");
  EXPECT_EQ(events[0].ts, 1736408883688177930);
  EXPECT_EQ(events[0].dur, 12500);
  ASSERT_EQ(events[0].args.size(), 3u);
  EXPECT_EQ(events[0].args[0], (std::pair<std::string, std::string>{"connection_id", "7"}));
  EXPECT_EQ(without_spaces(events[0].args[1].second), "[[1,2],[3]]");  // a list argument: its JSON text
  EXPECT_EQ(events[0].args[2].second, "a\"b");
  EXPECT_EQ(events[1].id, "18446744073709551615");
  EXPECT_EQ(events[1].ts, 1000);  // 1.0001 us: the nanosecond rounds half away from zero
}

TEST_F(ChromeEventsTest, AKinetoObjectGivesItsMetadataAndItsEventsThroughGzip) {
  std::vector<std::pair<std::string, std::string>> top;
  ChromeStreamResult r;
  const auto events =
      read(write_gz("t.json.gz", R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100"}],
    "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2}],
    "displayTimeUnit": "ns"})"),
           &r, &top);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].ts, 5000);
  EXPECT_FALSE(r.truncated);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0], (std::pair<std::string, std::string>{"schemaVersion", "1"}));
  EXPECT_EQ(top[1].second, R"([{"id":0,"name":"H100"}])");
  EXPECT_EQ(top[2].second, "ns");
}

TEST_F(ChromeEventsTest, AFileCutShortYieldsItsWholeEventsAndSaysSo) {
  const std::string whole = R"([{"ph": "X", "name": "a", "ts": 1}, {"ph": "X", "name": "b", "ts": 2}, {"ph": "X", "na)";
  ChromeStreamResult r;
  const auto events = read(write("cut.json", whole), &r);
  EXPECT_TRUE(r.truncated);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].name, "b");
  // A gzip cut short, too.
  std::string gz_text = "[";
  for (int i = 0; i < 20000; ++i) gz_text += R"({"ph": "X", "name": "op", "ts": )" + std::to_string(i) + "},";
  gz_text += "{}]";
  const std::string gz = write_gz("cut.json.gz", gz_text);
  fs::resize_file(gz, fs::file_size(gz) / 2);
  ChromeStreamResult rg;
  const auto part = read(gz, &rg);
  EXPECT_TRUE(rg.truncated);
  EXPECT_GT(part.size(), 100u);
  EXPECT_LT(part.size(), 20000u);
}

// Events written as a profiler may write them, over many of the reader's windows: names with
// escapes and runs of backslashes before a quote (where a window may end inside a string), raw
// UTF-8, an event bigger than a window, and what only the careful path takes (a NaN, a byte that
// is no UTF-8) in the middle. Read the same pretty and compact, and cut anywhere: a prefix.
TEST_F(ChromeEventsTest, EventsOverManyWindowsAreReadExactlyAndCutAnywhereGiveAPrefix) {
  struct Written {
    std::string name_json, name, arg;
  };
  std::vector<Written> written;
  const std::string names[][2] = {{R"(a\"b)", "a\"b"},
                                  {R"(c\\)", "c\\"},
                                  {R"(d\\\"e)", "d\\\"e"},
                                  {R"(\u00e9t\u00e9)", "\xC3\xA9t\xC3\xA9"},
                                  {"\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9"},
                                  {"aten::add_", "aten::add_"},
                                  {R"(x\/y\n)", "x/y\n"}};
  for (int i = 0; i < 40000; ++i) {
    const auto& n = names[i % 7];
    written.push_back({n[0], n[1], "[[" + std::to_string(i) + ", 3], []]"});
  }
  const std::string huge(3 << 20, 'h');  // bigger than a window
  written[20000] = {huge, huge, "[]"};
  const auto trace = [&](bool pretty) {
    const std::string sep = pretty ? "\n  " : "";
    std::string t = "{\"schemaVersion\": 1," + sep + "\"traceEvents\": [" + sep;
    for (std::size_t i = 0; i < written.size(); ++i) {
      if (i) t += "," + sep;
      t += "{\"ph\": \"X\", \"name\": \"" + written[i].name_json + "\", \"ts\": \"" + std::to_string(i) +
           ".001\", \"args\": {\"Input Dims\": " + written[i].arg + (i == 30000 ? ", \"occupancy\": NaN" : "") +
           (i == 30001 ? ", \"bad\": \"\xFF\"" : "") + "}}";
    }
    return t + "]," + sep + "\"traceName\": \"t\"}";
  };
  for (const bool pretty : {true, false}) {
    SCOPED_TRACE(pretty ? "pretty" : "compact");
    const std::string text = trace(pretty);
    ChromeStreamResult r;
    std::vector<std::pair<std::string, std::string>> top;
    const auto events = read(write("many.json", text), &r, &top);
    ASSERT_EQ(events.size(), written.size());
    EXPECT_FALSE(r.truncated);
    EXPECT_EQ(r.bytes, static_cast<std::int64_t>(text.size()));
    for (std::size_t i = 0; i < written.size(); ++i) {
      ASSERT_EQ(events[i].name, written[i].name) << i;
      ASSERT_EQ(events[i].ts, static_cast<std::int64_t>(i) * 1000 + 1) << i;
      ASSERT_FALSE(events[i].args.empty()) << i;
      ASSERT_EQ(without_spaces(events[i].args[0].second), without_spaces(written[i].arg)) << i;
    }
    EXPECT_EQ(events[30000].args.at(1).second, "NaN");
    EXPECT_EQ(events[30001].args.at(1).second, "\xFF");
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[1], (std::pair<std::string, std::string>{"traceName", "t"}));
    for (const std::size_t cut : {text.size() / 3 + 1, text.size() / 2 + 7, text.size() - 30, text.size() - 5}) {
      const auto part = read(write("cut.json", text.substr(0, cut)), &r);
      EXPECT_TRUE(r.truncated) << cut;
      ASSERT_GT(part.size(), 0u);
      ASSERT_LE(part.size(), written.size());
      EXPECT_EQ(part.back().name, written[part.size() - 1].name) << cut;
      EXPECT_EQ(part.back().ts, static_cast<std::int64_t>(part.size() - 1) * 1000 + 1) << cut;
    }
  }
}

TEST_F(ChromeEventsTest, WhatIsNotAChromeTraceIsAnErrorNamingTheFileAndByte) {
  const std::string p = write("bad.json", R"([{"ph": "X"}, 17])");
  try {
    read(p);
    FAIL() << "no error";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("byte"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read(write("garbage.json", "{\"traceEvents\": [ {\"ph\": x}]}")), ImportError);
  EXPECT_THROW(read((dir_ / "missing.json").string()), ImportError);
}

TEST(ParseUsAsNs, ExactDecimalsAndItsLimits) {
  EXPECT_EQ(parse_us_as_ns("1736408883688177.930"), 1736408883688177930);
  EXPECT_EQ(parse_us_as_ns("12"), 12000);
  EXPECT_EQ(parse_us_as_ns("0.0015"), 2);
  EXPECT_EQ(parse_us_as_ns("-3.5"), -3500);
  EXPECT_EQ(parse_us_as_ns("1e3"), 1000000);
  EXPECT_FALSE(parse_us_as_ns("abc"));
  EXPECT_FALSE(parse_us_as_ns(""));
  EXPECT_FALSE(parse_us_as_ns("99999999999999999999"));
}

}  // namespace
}  // namespace npuscope::importer
