// The trace spool (Note [Trace spool]): every table survives spool -> replay -> database; a spool cut
// short (a killed writer) replays into an incomplete trace holding every whole frame; a replay that
// follows a live writer sees everything; bad files get clear errors.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "../../collector/src/spool_format.h"
#include "npuscope/collector/trace_spool.h"
#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace std::chrono_literals;

namespace {

class TraceSpoolTest : public TraceTest {
 protected:
  std::string spool() const { return path("trace.spool"); }

  SpoolReplay replay(const std::function<bool()>& more = {}) {
    auto out = TraceWriter::create(path(), {.overwrite = true});
    return replay_spool(spool(), *out, more);
  }

  std::vector<char> spool_bytes() const {
    std::ifstream in(spool(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_spool_bytes(const std::vector<char>& bytes) const {
    std::ofstream(spool(), std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

TEST_F(TraceSpoolTest, EveryTableRoundTripsThroughTheSpool) {
  Sample s;
  {
    auto writer = create_spool_writer(spool());
    s = write_all(*writer, 5000);
    writer->set_meta("command", "python train.py");
    writer->set_stat("dropped_records", 9);
    EXPECT_EQ(writer->rows_written(), 2 + 5000 + 2 + 3 + 2 + 2 + 3);
    writer->finalize();
  }
  const SpoolReplay r = replay();
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.rows, 2 + 5000 + 2 + 3 + 2 + 2 + 3);
  EXPECT_EQ(r.torn_bytes, 0);

  const auto reader = TraceReader::open(path());
  EXPECT_TRUE(reader->complete());
  EXPECT_EQ(reader->meta("command"), "python train.py");
  EXPECT_TRUE(reader->meta("finalized_at").has_value());
  ASSERT_EQ(reader->stats().size(), 1u);
  EXPECT_EQ(reader->stats()[0].value, 9);
  expect_sample_read_back(s, *reader);
  EXPECT_EQ(reader->string(reader->rows<TaskRow>()[0].name_id), "layer0/Add");
  EXPECT_EQ(reader->count("STRING_IDS"), 7);
}

// A frame bigger than the replay's 4 MiB reads, between ordinary ones: the buffer grows and keeps
// the frames around it whole.
TEST_F(TraceSpoolTest, AFrameBiggerThanAReadReplaysWhole) {
  std::string big(std::size_t{9} << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>('a' + i % 26);
  Sample s;
  {
    auto writer = create_spool_writer(spool());
    writer->set_meta("before", "small");
    writer->commit();
    writer->set_meta("big", big);
    writer->commit();
    s = write_all(*writer, 5000);
    writer->finalize();
  }
  EXPECT_TRUE(replay().complete);
  const auto reader = TraceReader::open(path());
  EXPECT_EQ(reader->meta("before"), "small");
  EXPECT_EQ(reader->meta("big"), big);
  expect_sample_read_back(s, *reader);
}

// Note [Mapping a finished spool]: the consumed part of a mapped spool is dropped every 64 MiB; the
// frames after it still read whole.
TEST_F(TraceSpoolTest, ASpoolOfManyMegabytesReplaysWholeWhenMapped) {
  std::vector<std::string> values;
  for (char c : {'a', 'b', 'c'}) values.emplace_back(std::size_t{30} << 20, c);
  values[2][12345] = '!';
  Sample s;
  {
    auto writer = create_spool_writer(spool());
    for (std::size_t i = 0; i < values.size(); ++i) {
      writer->set_meta("value" + std::to_string(i), values[i]);
      writer->commit();
    }
    s = write_all(*writer, 5000);
    writer->finalize();
  }
  EXPECT_TRUE(replay().complete);
  const auto reader = TraceReader::open(path());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(reader->meta("value" + std::to_string(i)), values[i]);
  expect_sample_read_back(s, *reader);
}

TEST_F(TraceSpoolTest, SpoolCutShortReplaysEveryWholeFrameIntoAnIncompleteTrace) {
  {
    auto writer = create_spool_writer(spool());
    const StringId op = writer->intern("op");
    std::vector<TaskRow> rows;
    for (int i = 0; i < 100; ++i) rows.push_back(make_task(i, op, op));
    writer->add(rows);                       // one frame of 100
    writer->add(std::span(rows).first(50));  // a second frame of 50
    writer->finalize();
  }
  std::vector<char> bytes = spool_bytes();
  const std::size_t end_frame = 8;              // the end frame: a header without payload
  bytes.resize(bytes.size() - end_frame - 10);  // the kill tore the last task frame
  write_spool_bytes(bytes);

  const SpoolReplay r = replay();
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.rows, 100);
  EXPECT_GT(r.torn_bytes, 0);
  const auto reader = TraceReader::open(path());
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->count("TASK"), 100);
  EXPECT_TRUE(reader->meta("finalized_at").has_value());  // indexes built all the same
  ASSERT_EQ(reader->stats().size(), 1u);
  EXPECT_EQ(reader->stats()[0].name, "spool_torn_bytes");
  EXPECT_EQ(reader->stats()[0].value, r.torn_bytes);
}

TEST_F(TraceSpoolTest, WriterDroppedWithoutFinalizeLeavesAnIncompleteSpool) {
  {
    auto writer = create_spool_writer(spool());
    const StringId op = writer->intern("op");
    writer->add(std::vector<TaskRow>{make_task(0, op, op), make_task(1, op, op)});
  }  // no finalize: a process that never reached its shutdown
  const SpoolReplay r = replay();
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.torn_bytes, 0);
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), 2);
}

TEST_F(TraceSpoolTest, CommitHandsTheRowsToTheKernel) {
  auto writer = create_spool_writer(spool(), {.commit_interval = 1h});
  const StringId op = writer->intern("op");
  writer->add(std::vector<TaskRow>{make_task(0, op, op)});
  const std::size_t before = spool_bytes().size();
  writer->commit();
  EXPECT_GT(spool_bytes().size(), before);  // what a SIGKILL now would leave
}

TEST_F(TraceSpoolTest, ReplayFollowsALiveWriter) {
  constexpr int kFrames = 200, kRows = 64;
  std::atomic<bool> writing{true};
  std::thread producer([&] {
    auto writer = create_spool_writer(spool(), {.commit_interval = 0ms});  // every add reaches the file
    const StringId op = writer->intern("op");
    std::vector<TaskRow> rows(kRows);
    for (int f = 0; f < kFrames; ++f) {
      for (int i = 0; i < kRows; ++i) rows[static_cast<std::size_t>(i)] = make_task(f * kRows + i, op, op);
      writer->add(rows);
      if (f % 50 == 0) std::this_thread::sleep_for(2ms);
    }
    writer->finalize();
    writing = false;
  });
  while (!std::filesystem::exists(spool())) std::this_thread::sleep_for(1ms);
  const SpoolReplay r = replay([&] { return writing.load(); });
  producer.join();
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.rows, kFrames * kRows);
  EXPECT_EQ(TraceReader::open(path())->count("TASK"), kFrames * kRows);
}

TEST_F(TraceSpoolTest, BadSpoolsGetClearErrors) {
  write_spool_bytes({'S', 'Q', 'L', 'i', 't', 'e'});
  expect_trace_error([&] { replay(); }, "is not an npuscope spool");
  {
    auto writer = create_spool_writer(spool(), {.overwrite = true});
    writer->add(std::vector<TaskRow>{make_task(0, 0, 0)});
    writer->finalize();
  }
  // The header (16 bytes), the layout frame (8 + one size of 4 per row stored as its struct: spool::Layout), then
  // the task frame.
  constexpr std::size_t kLayoutFrame = 16, kTaskFrame = kLayoutFrame + 8 + sizeof(spool::Layout);
  const std::vector<char> good = spool_bytes();
  std::vector<char> bytes = good;
  bytes[kTaskFrame] = 77;  // the frame's kind
  write_spool_bytes(bytes);
  expect_trace_error([&] { replay(); }, "is corrupt at byte " + std::to_string(kTaskFrame) + ": unknown frame kind 77");
  bytes = good;
  bytes[kTaskFrame + 8] = 9;  // a row count larger than the frame: refused before anything is allocated
  write_spool_bytes(bytes);
  expect_trace_error([&] { replay(); }, "a frame claims 9 rows in");
  bytes = good;
  bytes[kTaskFrame + 8] = 0;  // fewer rows than the frame holds: bytes left over
  write_spool_bytes(bytes);
  expect_trace_error([&] { replay(); }, "do not match its size");
  bytes = good;
  bytes[kLayoutFrame + 8] += 8;  // TaskRow's size in another build
  write_spool_bytes(bytes);
  expect_trace_error([&] { replay(); }, "written by another build");
  expect_trace_error([&] { replay_spool(path("missing.spool"), *TraceWriter::create(path(), {.overwrite = true})); },
                     "cannot open the spool");
}

TEST_F(TraceSpoolTest, RefusesToOverwriteAnExistingSpool) {
  create_spool_writer(spool())->finalize();
  expect_trace_error([&] { create_spool_writer(spool()); }, "already exists");
  create_spool_writer(spool(), {.overwrite = true})->finalize();
}

}  // namespace
