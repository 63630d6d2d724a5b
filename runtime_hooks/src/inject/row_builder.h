// The drain thread's half: entries (entries.h) -> trace rows (trace_rows.h) -> the TraceWriter.
//
// Note [Pairing on the drain thread]
// An API call normally arrives as one record, its exit, which carries the call's start (we tell the
// emulator we want no enter records: one record per call instead of two; the price is that a call
// still running when the process dies is not in the trace). Enters that do arrive are paired with
// their exits as below. The hot path stores marker push and pop, step begin and end as separate
// records; pairing them costs a hash lookup, so it happens here, per host thread (the records' own
// thread_id). A thread's records come from one buffer, in order, so its stacks see enters before
// exits. A pop, or an API exit with neither an open enter nor a start of its own, is counted
// (unpaired_markers / unpaired_api) and dropped; partners still open when the trace ends are closed at their thread's
// last timestamp and counted the same way. The stacks are bounded (a thread with lost exits must not grow them, or make
// each exit search them all): past 256 open entries the oldest is closed and counted, and an exit looks 64 deep for its
// enter. Rows are batched and handed to the writer once per drain round.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "entries.h"
#include "npuscope/collector/trace_writer.h"
#include "record_buffer.h"
#include "record_rows.h"
#include "string_table.h"

namespace npuscope::inject {

struct RowCounters {
  std::int64_t records = 0;  // entries consumed
  std::int64_t unpaired_api = 0;
  std::int64_t unpaired_markers = 0;
  std::int64_t overflow_tasks = 0;
  std::int64_t saturated_tasks = 0;
  std::int64_t underflow_tasks = 0;
  std::int64_t tensors_dumped = 0;           // TENSOR rows carrying data
  std::int64_t tensor_bytes_dumped = 0;      // their uncompressed bytes
  std::int64_t tensor_bytes_compressed = 0;  // and what zstd made of them
};

class RowBuilder {
 public:
  static constexpr std::size_t kBatchRows = 4096;  // a flush per full batch, besides the one per round

  // `pool` gets back the dump copies' reserved bytes once they are written.
  RowBuilder(collector::TraceWriter& writer, ChunkPool& pool);
  ~RowBuilder();
  RowBuilder(const RowBuilder&) = delete;
  RowBuilder& operator=(const RowBuilder&) = delete;

  void add(Tag tag, const Slot* first_slot);  // one entry, dispatched by its tag
  void flush();                               // batched rows -> writer
  void finish();                              // end of the trace: close what is still open (counted), then flush
  const RowCounters& counters() const { return counters_; }
  bool wrote_since_commit() const { return wrote_; }
  void committed() { wrote_ = false; }

 private:
  struct OpenRange {
    std::uint64_t ts_ns;
    const char* name;
  };
  struct ThreadOpen {
    std::vector<hooks::ApiRecord> api;
    std::vector<OpenRange> ranges;
    bool in_step = false;
    std::uint64_t step_ts = 0;
    std::int64_t step = -1;
    std::uint64_t last_ts = 0;
  };

  template <class Record>
  void on_entry(const Entry<Record>& e) {
    on(e.r);
  }
  void on_entry(const TensorEntry& e);
  void on_entry(const CommLinkEntry& e);
  // A record that makes one row as it is (record_rows.h); the overloads below do more.
  template <class Record>
  void on(const Record& r) {
    add_row(to_row(r, strings_));
  }
  void on(const hooks::ApiRecord& r);
  void on(const hooks::TaskRecord& r);
  void on(const hooks::MemoryRecord& r);
  void on(const hooks::MarkerRecord& r);
  void on(const hooks::OverflowRecord& r);
  void on(const hooks::DeviceRecord& r);
  void on(const hooks::RankRecord& r);
  void on(const hooks::TensorRecord&) = delete;  // stored as a TensorEntry
  // Batched by row type, handed to the writer when a batch is full and once per drain round.
  template <class Row>
  void add_row(Row&& row) {
    auto& batch = std::get<std::vector<std::remove_cvref_t<Row>>>(batches_);
    batch.push_back(std::forward<Row>(row));
    if (batch.size() >= kBatchRows) flush(batch);
  }
  template <class Row>
  void flush(std::vector<Row>& batch) {
    if (batch.empty()) return;
    writer_.add(std::span<const Row>(batch));
    batch.clear();
    wrote_ = true;
  }
  void add_api_row(const hooks::ApiRecord& enter, std::uint64_t end_ns, std::uint32_t thread_id);
  void add_range_row(const OpenRange& open, std::uint64_t end_ns, std::uint32_t thread_id);
  void add_step_row(const ThreadOpen& t, std::uint64_t end_ns, std::uint32_t thread_id);
  ThreadOpen& open_for(std::uint32_t thread_id, std::uint64_t ts_ns);
  std::int64_t memory_seq(std::int32_t device_id, std::uint32_t seq);

  collector::TraceWriter& writer_;
  ChunkPool& pool_;
  StringTable strings_;
  ZSTD_CCtx* zstd_ = nullptr;
  std::unordered_map<std::uint32_t, ThreadOpen> open_;
  ThreadOpen* last_open_ = nullptr;  // open_for's last answer
  std::uint32_t last_open_thread_ = 0;
  collector::TraceRows::Each<std::tuple, std::vector> batches_;     // by row type (Note [Trace rows])
  std::vector<collector::DeviceInfoRow> devices_;                   // written so far
  std::vector<std::pair<std::int32_t, std::int64_t>> memory_seqs_;  // by device: the highest seq so far
  collector::TensorRow tensor_;                                     // reused: its buffers keep their capacity
  RowCounters counters_;
  bool wrote_ = false;
};

}  // namespace npuscope::inject
