// The format_conversion rule (Note [Format conversions] in analyzer/src/format_conversion.cpp):
// TransData time by formats and the op served, removable time (weights every step, one tensor
// converted twice), the advice to allow internal formats; on a built conv backward and on the shared
// 910B profile (rank 0: 57 TransData kernels, 1423 us).
#include <gtest/gtest.h>

#include <algorithm>

#include "../realdata_util.h"
#include "collector/export_test_util.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/importer/import.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;

namespace {

struct K {
  std::string op_type;
  double us;
  std::string in_shapes, in_formats, out_shapes, out_formats;
};

class FormatConversion : public collector::testing::ExportTest {
 protected:
  // One conv backward as the real profile runs it (conv 4 of AlexNet, in us), back to back:
  //   w NCHW->FRACTAL_Z 50, dy NCHW->5HD 20, Conv2DBackpropInput 100, dx 5HD->NCHW 30,
  //   x NCHW->5HD 25, dy NCHW->5HD again 15, MemSet 10, Conv2DBackpropFilter 90, dw FRACTAL_Z->NCHW 40.
  std::string conv_backward() {
    const std::string db = path("conv_bwd.db");
    RealTrace t(db, "ascend_pytorch_profiler_text", "Ascend910B");
    const std::vector<K> ks = {
        {"TransData", 50, "256,384,3,3", "NCHW", "432,16,16,8", "FRACTAL_Z"},
        {"TransData", 20, "32,256,13,13", "NCHW", "32,32,13,13,8", "NC1HWC0"},
        {"Conv2DBackpropInput", 100, "4;432,16,16,8;32,32,13,13,8", "NCHW;FRACTAL_Z;NC1HWC0", "32,48,13,13,8",
         "NC1HWC0"},
        {"TransData", 30, "32,48,13,13,8", "NC1HWC0", "32,384,13,13", "NCHW"},
        {"TransData", 25, "32,384,13,13", "NCHW", "32,48,13,13,8", "NC1HWC0"},
        {"TransData", 15, "32,256,13,13", "NCHW", "32,32,13,13,8", "NC1HWC0"},
        {"MemSet", 10, "", "", "", ""},
        {"Conv2DBackpropFilter", 90, "32,48,13,13,8;4;32,32,13,13,8", "NC1HWC0;NCHW;NC1HWC0", "432,16,16,8",
         "FRACTAL_Z"},
        {"TransData", 40, "432,16,16,8", "FRACTAL_Z", "256,384,3,3", "NCHW"},
    };
    double at = 0;
    for (const K& k : ks) {
      t.task({.type = TaskType::kAiVectorCore,
              .name = k.op_type + "_" + std::to_string(static_cast<int>(at)),
              .op_type = k.op_type,
              .start_us = at,
              .end_us = at + k.us,
              .stream = 2,
              .input_shapes = k.in_shapes,
              .input_formats = k.in_formats,
              .output_shapes = k.out_shapes,
              .output_formats = k.out_formats});
      at += k.us + 1;
    }
    t.finalize();
    return db;
  }
};

const Table* table(const Report& r, std::string_view name) {
  for (const Table& t : r.tables) {
    if (t.spec->name == name) return &t;
  }
  return nullptr;
}

// A cell of the row of (src, dst, op) in format_conversions.
std::int64_t cell_ns(const Table& t, const std::string& src, const std::string& dst, const std::string& op,
                     std::string_view column) {
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (std::get<std::string>(*t.cell(i, "src_format")) == src &&
        std::get<std::string>(*t.cell(i, "dst_format")) == dst && std::get<std::string>(*t.cell(i, "op_type")) == op)
      return std::get<std::int64_t>(*t.cell(i, column));
  }
  ADD_FAILURE() << "no row " << src << "->" << dst << " " << op;
  return -1;
}

std::string advice_text(const Report& r) {
  const Table* a = table(r, "advice");
  if (a == nullptr) return "";
  for (std::size_t i = 0; i < a->rows.size(); ++i) {
    if (std::get<std::string>(*a->cell(i, "rule")) == "format_conversion")
      return std::get<std::string>(*a->cell(i, "detail")) + " | " + std::get<std::string>(*a->cell(i, "action"));
  }
  return "";
}

}  // namespace

TEST_F(FormatConversion, GroupsByFormatsAndTheOpServedAndCountsRemovableTime) {
  const auto reader = collector::TraceReader::open(conv_backward());
  const Report r = analyze(*reader, {.top = 10, .rules = {"format_conversion"}});
  const Table* t = table(r, "format_conversions");
  ASSERT_NE(t, nullptr);
  // The weight in (before the input gradient) and the weight gradient out: removable.
  EXPECT_EQ(cell_ns(*t, "NCHW", "FRACTAL_Z", "Conv2DBackpropInput", "total_ns"), 50'000);
  EXPECT_EQ(cell_ns(*t, "NCHW", "FRACTAL_Z", "Conv2DBackpropInput", "removable_ns"), 50'000);
  EXPECT_EQ(cell_ns(*t, "FRACTAL_Z", "NCHW", "Conv2DBackpropFilter", "removable_ns"), 40'000);
  // dy before the input gradient: needed; x and dy again before the filter gradient: dy repeats.
  EXPECT_EQ(cell_ns(*t, "NCHW", "NC1HWC0", "Conv2DBackpropInput", "removable_ns"), 0);
  EXPECT_EQ(cell_ns(*t, "NCHW", "NC1HWC0", "Conv2DBackpropFilter", "total_ns"), 40'000);
  EXPECT_EQ(cell_ns(*t, "NCHW", "NC1HWC0", "Conv2DBackpropFilter", "removable_ns"), 15'000);
  EXPECT_EQ(cell_ns(*t, "NCHW", "NC1HWC0", "Conv2DBackpropFilter", "repeats"), 1);
  EXPECT_EQ(cell_ns(*t, "NC1HWC0", "NCHW", "Conv2DBackpropInput", "total_ns"), 30'000);
  const std::string text = advice_text(r);
  EXPECT_NE(text.find("removable 105"), std::string::npos) << text;
  EXPECT_NE(text.find("allow_internal_format = True"), std::string::npos) << text;
  EXPECT_NE(text.find("npu_format_cast"), std::string::npos) << text;
}

TEST_F(FormatConversion, FewConversionsAreNoFinding) {
  const std::string db = path("few.db");
  {
    RealTrace t(db, "ascend_pytorch_profiler_text", "Ascend910B");
    for (int i = 0; i < 4; ++i)
      t.task({.type = TaskType::kAiVectorCore,
              .name = "trans",
              .op_type = "TransData",
              .start_us = 10.0 * i,
              .end_us = 10.0 * i + 5,
              .input_formats = "NCHW",
              .output_formats = "NC1HWC0"});
    t.finalize();
  }
  const Report r = analyze(*collector::TraceReader::open(db), {.rules = {"format_conversion"}});
  const Table* t = table(r, "format_conversions");
  EXPECT_TRUE(t == nullptr || t->rows.empty());
  EXPECT_EQ(advice_text(r), "");
}

// The shared 910B profile, level1 rank 0 (step 50): 57 TransData kernels, 1423.2 us; the weights'
// FRACTAL_Z conversions both ways 438 us (plan39.md section 2).
TEST_F(FormatConversion, TheRealProfilesConversions) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  const auto source = importer::detect(src);
  ASSERT_TRUE(source.has_value());
  const std::string db = path("rank0.db");
  importer::import_to_file(*source, db, true);
  const Report r = analyze(*collector::TraceReader::open(db), {.top = 10, .rules = {"format_conversion"}});
  const Table* t = table(r, "format_conversions");
  ASSERT_NE(t, nullptr);
  std::int64_t count = 0, ns = 0, removable = 0, fz = 0;
  for (std::size_t i = 0; i < t->rows.size(); ++i) {
    count += std::get<std::int64_t>(*t->cell(i, "count"));
    ns += std::get<std::int64_t>(*t->cell(i, "total_ns"));
    removable += std::get<std::int64_t>(*t->cell(i, "removable_ns"));
    const std::string src_f = std::get<std::string>(*t->cell(i, "src_format"));
    const std::string dst_f = std::get<std::string>(*t->cell(i, "dst_format"));
    if (src_f == "FRACTAL_Z" || dst_f == "FRACTAL_Z") fz += std::get<std::int64_t>(*t->cell(i, "total_ns"));
  }
  EXPECT_EQ(count, 57);
  EXPECT_NEAR(ns / 1e3, 1423.2, 0.5);
  EXPECT_NEAR(fz / 1e3, 438.3, 0.5);
  EXPECT_GT(removable, fz);  // and the repeated dy conversions
  EXPECT_LT(removable, ns);
  EXPECT_EQ(cell_ns(*t, "NCHW", "FRACTAL_Z", "Conv2D", "count"), 5);
  const std::string text = advice_text(r);
  EXPECT_NE(text.find("allow_internal_format = True"), std::string::npos) << text;
  std::printf("%s\n", text.c_str());
}
