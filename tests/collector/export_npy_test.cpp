// .npy export of dumped tensors: file names, index.csv, the .npy header and bytes (checked by hand
// and by loading the files with the emulator's own NumPy reader), bf16 -> f32, and the errors.
#include "npuscope/collector/export_npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "collector/export_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/npy.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
namespace emu = npuscope::emulator;

namespace {

class NpyExportTest : public ExportTest {
 protected:
  NpyExportResult export_sample() {
    write_sample_trace(path("t.db"));
    const auto reader = TraceReader::open(path("t.db"));
    return export_npy(*reader, path("npy"));
  }
  std::string npy(const std::string& name) const { return read_text((dir_ / "npy" / name).string()); }

  // Writes a trace holding one task (`name`) and `tensors`, and exports it.
  NpyExportResult export_tensors(const std::string& name, const std::vector<TensorRow>& tensors) {
    {
      auto w = TraceWriter::create(path("one.db"), {.overwrite = true});
      TaskRow t = sample_task(7, 0, 0, 0, 10, 20, 1);
      t.name_id = w->intern(name);
      w->add(t);
      for (const TensorRow& row : tensors) w->add(row);
      w->finalize();
    }
    const auto reader = TraceReader::open(path("one.db"));
    return export_npy(*reader, path("one"));
  }
};

std::size_t header_len(const std::string& file) {
  return static_cast<std::uint8_t>(file[8]) | static_cast<std::size_t>(static_cast<std::uint8_t>(file[9])) << 8;
}

// The header dict of a .npy file, after checking the magic, version and 64-byte alignment.
std::string npy_dict(const std::string& file) {
  EXPECT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len = header_len(file);
  EXPECT_EQ((10 + len) % 64, 0u);
  EXPECT_EQ(file[10 + len - 1], '\n');
  std::string dict = file.substr(10, len);
  return dict.substr(0, dict.find_last_not_of(" \n") + 1);
}

std::string npy_data(const std::string& file) {
  const std::size_t len = header_len(file);
  return file.substr(10 + len);
}

template <class T>
std::string raw(const std::vector<T>& v) {
  const auto b = bytes_of(v);
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

TEST_F(NpyExportTest, WritesOneFilePerDumpedTensorAndAnIndex) {
  const NpyExportResult r = export_sample();
  EXPECT_EQ(r.files, 7);
  EXPECT_EQ(r.without_data, 3);
  EXPECT_EQ(r.bad_data, 0);
  EXPECT_EQ(r.index_path, path("npy/index.csv"));
  // Tensor order: task, role, index. Task 4 (the golden run of the same op and call) collides with
  // task 2's output name and gets ".t4".
  EXPECT_EQ(npy("index.csv"),
            "file,task_id,device_id,op_name,op_type,call_index,role,index,dtype,shape,status\n"
            "layer0_attn_MatMul.0.input.0.npy,2,0,layer0/attn/MatMul,MatMul,0,input,0,f16,\"2,3\",ok\n"
            "layer0_attn_MatMul.0.input.1.npy,2,0,layer0/attn/MatMul,MatMul,0,input,1,f16,\"3,2\",ok\n"
            "layer0_attn_MatMul.0.output.0.npy,2,0,layer0/attn/MatMul,MatMul,0,output,0,f32,\"2,2\",ok\n"
            "layer0_add__x_.0.input.0.npy,3,0,\"layer0/add,\"\"x\"\"\",Add,0,input,0,bf16,4,ok\n"
            ",3,0,\"layer0/add,\"\"x\"\"\",Add,0,output,0,bf16,4,no data\n"
            ",4,-1,layer0/attn/MatMul,MatMul,0,input,0,f32,\"2,3\",no data\n"
            ",4,-1,layer0/attn/MatMul,MatMul,0,input,1,f32,\"3,2\",no data\n"
            "layer0_attn_MatMul.0.output.0.t4.npy,4,-1,layer0/attn/MatMul,MatMul,0,output,0,f32,\"2,2\",ok\n"
            "layer0_attn_MatMul.1.input.0.npy,5,0,layer0/attn/MatMul,MatMul,1,input,0,i64,3,ok\n"
            "layer0_attn_MatMul.1.output.0.npy,5,0,layer0/attn/MatMul,MatMul,1,output,0,bool,,ok\n");
  std::int64_t bytes = 0, files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path("npy"))) {
    if (e.path().extension() != ".npy") continue;
    bytes += static_cast<std::int64_t>(e.file_size());
    ++files;
  }
  EXPECT_EQ(files, 7);
  EXPECT_EQ(r.bytes, bytes);
}

TEST_F(NpyExportTest, HeadersAndBytesAreExact) {
  export_sample();
  const std::string f16 = npy("layer0_attn_MatMul.0.input.0.npy");
  EXPECT_EQ(npy_dict(f16), "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(npy_data(f16), raw(kTask2In0F16));  // f16 stays f16, bit for bit
  const std::string f32 = npy("layer0_attn_MatMul.0.output.0.t4.npy");
  EXPECT_EQ(npy_dict(f32), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }");
  EXPECT_EQ(npy_data(f32), raw(kTask4Out0));
  const std::string i64 = npy("layer0_attn_MatMul.1.input.0.npy");
  EXPECT_EQ(npy_dict(i64), "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(npy_data(i64), raw(kTask5In0));
  const std::string scalar = npy("layer0_attn_MatMul.1.output.0.npy");
  EXPECT_EQ(npy_dict(scalar), "{'descr': '|b1', 'fortran_order': False, 'shape': (), }");
  EXPECT_EQ(npy_data(scalar), std::string("\x01", 1));
}

TEST_F(NpyExportTest, Bf16IsWrittenAsExactF32) {
  export_sample();
  const std::string file = npy("layer0_add__x_.0.input.0.npy");
  EXPECT_EQ(npy_dict(file), "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
  EXPECT_EQ(npy_data(file), raw(std::vector<float>{1.0f, -2.5f, 3.140625f, 0.0f}));
}

TEST_F(NpyExportTest, FilesLoadWithANumpyReader) {
  export_sample();
  const auto load = [&](const std::string& name) { return emu::load_npy(path("npy/" + name)); };
  const emu::Tensor a = load("layer0_attn_MatMul.0.input.0.npy");
  EXPECT_EQ(a.dtype(), emu::DType::kF16);
  EXPECT_EQ(a.shape(), (emu::Shape{2, 3}));
  EXPECT_EQ(a.to_doubles(), (std::vector<double>{1, 2, 0.5, -1, 3, 0}));
  EXPECT_EQ(load("layer0_add__x_.0.input.0.npy").to_doubles(), (std::vector<double>{1, -2.5, 3.140625, 0}));
  EXPECT_EQ(load("layer0_attn_MatMul.0.output.0.npy").to_doubles(), (std::vector<double>{3.5, 3.5, 2, 2}));
  const emu::Tensor ids = load("layer0_attn_MatMul.1.input.0.npy");
  EXPECT_EQ(ids.dtype(), emu::DType::kI64);
  EXPECT_EQ(ids.to_doubles(), (std::vector<double>{-7, 0, 1e12}));
  const emu::Tensor flag = load("layer0_attn_MatMul.1.output.0.npy");
  EXPECT_EQ(flag.dtype(), emu::DType::kBool);
  EXPECT_TRUE(flag.shape().empty());
  EXPECT_EQ(flag.to_doubles(), (std::vector<double>{1}));
}

TEST_F(NpyExportTest, StatsOnlyTraceIsAClearError) {
  write_sample_trace(path("stats.db"), /*stats_only=*/true);
  const auto reader = TraceReader::open(path("stats.db"));
  try {
    export_npy(*reader, path("out"));
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("stats.db"), std::string::npos) << what;
    EXPECT_NE(what.find("10 tensors have statistics only"), std::string::npos) << what;
    EXPECT_NE(what.find("npuscope run --dump tensor"), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(path("out")));

  try {
    export_tensors("op", {});
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensors were recorded"), std::string::npos) << e.what();
  }
}

TEST_F(NpyExportTest, BadDataIsCountedNotFatal) {
  const std::vector<float> four = {1, 2, 3, 4};
  const std::vector<TensorRow> tensors = {
      sample_tensor(7, 0, 1, 42, "4", 4, bytes_of(four), false),  // a dtype of a newer build
      // A rank-9 tensor of 4 elements: the recorder keeps 8 dims (hooks::kMaxDims), numel is whole.
      sample_tensor(7, 0, 2, 0, "1,1,1,1,1,1,1,2", 4, bytes_of(four), false),
      sample_tensor(7, 1, 0, 0, "2,2", 4, bytes_of(four), false),  // fine
  };
  const NpyExportResult r = export_tensors("../etc/passwd", tensors);
  EXPECT_EQ(r.files, 1);
  EXPECT_EQ(r.bad_data, 2);
  const std::string index = read_text(path("one/index.csv"));
  EXPECT_NE(index.find(",dtype42,4,bad data: unknown dtype 42\n"), std::string::npos) << index;
  EXPECT_NE(index.find("bad data: the trace keeps only the first 8 dims of this tensor's shape"), std::string::npos)
      << index;
  // The name cannot leave the directory: '/' became '_' and the leading '.' too.
  EXPECT_NE(index.find("\n_._etc_passwd.0.output.0.npy,7,0,../etc/passwd,"), std::string::npos) << index;
  EXPECT_TRUE(std::filesystem::exists(path("one/_._etc_passwd.0.output.0.npy")));
}

// Rows whose sizes do not add up are the reader's TraceErrors (Note [Checked tensor rows]), found
// in the first pass, before the directory is made or anything is allocated for the data.
TEST_F(NpyExportTest, DamagedRowsAreTraceErrors) {
  const std::vector<float> four = {1, 2, 3, 4};
  for (const auto& [row, problem] : std::vector<std::pair<TensorRow, std::string>>{
           {sample_tensor(7, 0, 0, 0, "2,3", 6, bytes_of(four), false),
            "data_bytes 16 is not numel 6 x 4 bytes of f32"},
           {sample_tensor(7, 0, 2, 0, "2,x", 4, bytes_of(four), false), "shape '2,x' is not comma-separated dims"},
       }) {
    std::filesystem::remove_all(path("one"));
    try {
      export_tensors("op", {row});
      ADD_FAILURE() << "no TraceError for " << problem;
    } catch (const TraceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path("one.db") + ": bad TENSOR row (task 7, op 'op', input "), std::string::npos) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
    EXPECT_FALSE(std::filesystem::exists(path("one")));
  }
}

// A header longer than format 1.0's 16-bit length is written as 2.0 (it was cut to 16 bits: an
// unreadable file with status ok).
TEST_F(NpyExportTest, HugeRanksAreWrittenAsVersion2) {
  std::string shape = "1";
  for (int i = 1; i < 30'000; ++i) shape += ",1";
  const std::vector<float> one = {2.5f};
  const NpyExportResult r = export_tensors("wide", {sample_tensor(7, 1, 0, 0, shape, 1, bytes_of(one), false)});
  ASSERT_EQ(r.files, 1);
  const std::string file = read_text(path("one/wide.0.output.0.npy"));
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x02\x00", 8));
  const emu::Tensor t = emu::load_npy(path("one/wide.0.output.0.npy"));
  EXPECT_EQ(t.shape(), emu::Shape(30'000, 1));
  EXPECT_EQ(t.to_doubles(), std::vector<double>{2.5});
}

TEST_F(NpyExportTest, UnnamedTasksAreNamedByTaskId) {
  const std::vector<std::uint8_t> one = {1};
  const NpyExportResult r = export_tensors("", {sample_tensor(7, 1, 0, 3, "1", 1, one, false)});
  EXPECT_EQ(r.files, 1);
  EXPECT_TRUE(std::filesystem::exists(path("one/task7.0.output.0.npy")));
}

TEST(NpyDtypes, NamesMatchTheEmulatorsNumbering) {
  for (int i = 0; i < emu::kNumDTypes; ++i) {
    EXPECT_EQ(tensor_dtype_name(i), emu::dtype_name(static_cast<emu::DType>(i))) << i;
  }
  EXPECT_EQ(tensor_dtype_name(emu::kNumDTypes), "dtype" + std::to_string(emu::kNumDTypes));
  EXPECT_EQ(tensor_dtype_name(-1), "dtype-1");
}
