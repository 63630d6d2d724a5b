// The rows of a clustered table a ranked writer keeps until finalize(), and their rank order
// (Note [Ranked tables] in schema.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch_vtab.h"
#include "npuscope/collector/huge_pages.h"
#include "schema.h"

namespace npuscope::collector::schema {

// The members a table's order_by names, in order (one or two 64-bit integers): the rank's key.
template <class Row>
std::vector<std::int64_t Row::*> order_fields(const Table<Row>& table) {
  std::vector<std::int64_t Row::*> out;
  std::string_view rest = table.info.order_by;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (name.starts_with(' ')) name.remove_prefix(1);
    const auto column = std::find_if(table.info.columns.begin(), table.info.columns.end(),
                                     [&](const ColumnInfo& c) { return c.name == name; });
    const auto* member = column == table.info.columns.end()
                             ? nullptr
                             : std::get_if<std::int64_t Row::*>(
                                   &table.fields[static_cast<std::size_t>(column - table.info.columns.begin())]);
    if (member == nullptr) {
      throw std::logic_error(std::string(table.info.name) + ".order_by must name 64-bit integer columns to be ranked");
    }
    out.push_back(*member);
  }
  if (out.empty() || out.size() > 2) {
    throw std::logic_error(std::string(table.info.name) + ".order_by must name one or two columns to be ranked");
  }
  return out;
}

// Note [Holding rows cheaply]
// Holding a table's rows must cost less than the ~30 % of SQLite's insert time ranking saves, in a
// process that converts once: its memory is fresh, and on a VM each page fault is expensive. A
// first version copied rows one by one into growing vectors and sorted an index of every row; on
// 100k launches it cost more than it saved. So rows are copied a span at a time into 8 MiB chunks
// aligned to and advised for 2 MiB pages (a fault per 2 MiB instead of per 4 KiB), and the order
// costs memory only for the rows out of place. Rows arrive nearly in time order (the drain takes
// them by time; 100k launches: TASK_EXEC in order, API_CALL with 2 rows out of place, MEMORY_OP 1),
// so one pass splits them into the rows in order (each at least the largest key before it) and the
// late ones, which are sorted apart and merged back in by (key, arrival): stable, ties keep the
// order they came in. Stretches of rows in order go to SQLite straight from the chunks; only many
// stretches (rows badly out of order) are inserted through an array of row pointers instead.
template <class Row>
class HeldRows {
 public:
  static constexpr bool kHoldable = std::is_trivially_copyable_v<Row>;  // copied as bytes

  explicit HeldRows(std::size_t max_bytes) : max_rows_(max_bytes / sizeof(Row)) {}

  // False, and nothing taken, when the rows would pass the bound.
  bool add(std::span<const Row> rows) {
    static_assert(kHoldable);
    if (size_ + rows.size() > max_rows_) return false;
    while (!rows.empty()) {
      if (size_ == chunks_.size() * kChunkRows) chunks_.push_back(new_chunk());
      const std::size_t at = size_ % kChunkRows, n = std::min(rows.size(), kChunkRows - at);
      std::memcpy(static_cast<void*>(chunks_.back().get() + at), rows.data(), n * sizeof(Row));
      size_ += n;
      rows = rows.subspan(n);
    }
    return true;
  }

  // insert(const Batch&) for the rows in the order they were added, a batch or more.
  template <class Insert>
  void as_added(Insert&& insert) const {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const std::size_t n = std::min(kChunkRows, size_ - c * kChunkRows);
      if (n > 0) insert(Batch{.rows = chunks_[c].get(), .size = n});
    }
  }

  // insert(const Batch&) for the rows in order_by order, ties in the order they were added.
  template <class Insert>
  void ranked(Insert&& insert) const {
    const std::vector<std::int64_t Row::*> fields = order_fields(table_for<Row>());
    const std::int64_t Row::*first = fields[0];
    const std::int64_t Row::*second = fields.size() > 1 ? fields[1] : nullptr;
    const auto key_of = [&](std::size_t i) {
      const Row& row = at(i);
      return Key{row.*first, second != nullptr ? row.*second : 0, i};
    };
    std::vector<Key> late;  // rows below the largest key before them
    Key top{};
    for (std::size_t i = 0; i < size_; ++i) {
      const Key key = key_of(i);
      if (i > 0 && key < top) {
        late.push_back(key);
      } else {
        top = key;
      }
    }
    if (late.empty()) return as_added(insert);
    std::vector<std::size_t> late_at(late.size());  // their places in arrival order, ascending
    for (std::size_t l = 0; l < late.size(); ++l) late_at[l] = late[l].index;
    std::sort(late.begin(), late.end());
    // Merged: pieces [from, to) of the rows added, each in order; a late row is a piece of one.
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    std::size_t open = 0, next_late = 0, skip = 0;  // open: the first row of the piece being built
    const auto close = [&](std::size_t end) {
      if (open < end) pieces.emplace_back(open, end);
    };
    for (std::size_t i = 0; i < size_; ++i) {
      if (skip < late_at.size() && late_at[skip] == i) {  // it goes where the merge puts it
        close(i);
        open = i + 1;
        ++skip;
        continue;
      }
      const Key key = key_of(i);
      if (next_late < late.size() && late[next_late] < key) {
        close(i);
        open = i;
        for (; next_late < late.size() && late[next_late] < key; ++next_late) {
          pieces.emplace_back(late[next_late].index, late[next_late].index + 1);
        }
      }
    }
    close(size_);
    for (; next_late < late.size(); ++next_late) pieces.emplace_back(late[next_late].index, late[next_late].index + 1);
    if (pieces.size() <= kMaxPieces) {  // straight from the chunks, a batch per piece and chunk
      for (const auto& [from, to] : pieces) {
        for (std::size_t at = from; at < to;) {
          const std::size_t n = std::min(to - at, kChunkRows - at % kChunkRows);
          insert(Batch{.rows = &this->at(at), .size = n});
          at += n;
        }
      }
      return;
    }
    std::vector<const void*> order;
    reserve_in_huge_pages(order, size_);
    for (const auto& [from, to] : pieces) {
      for (std::size_t i = from; i < to; ++i) order.push_back(&at(i));
    }
    insert(Batch{.size = order.size(), .order = order.data()});
  }

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  static constexpr std::size_t kChunkRows = kChunkBytes / sizeof(Row);

  // More pieces than this are inserted through an array of row pointers: a statement per piece
  // costs more than the array.
  static constexpr std::size_t kMaxPieces = 4096;

  struct Key {
    std::int64_t first, second;
    std::size_t index;  // arrival order: breaks ties
    bool operator<(const Key& o) const {
      if (first != o.first) return first < o.first;
      if (second != o.second) return second < o.second;
      return index < o.index;
    }
  };

  struct FreeChunk {
    void operator()(Row* p) const { ::operator delete (p, std::align_val_t{kHugePageBytes}); }
  };
  using Chunk = std::unique_ptr<Row[], FreeChunk>;

  static Chunk new_chunk() {
    void* p = ::operator new (kChunkBytes, std::align_val_t{kHugePageBytes});
    advise_huge_pages(p, kChunkBytes);
    return Chunk(static_cast<Row*>(p));
  }

  const Row& at(std::size_t i) const { return chunks_[i / kChunkRows][i % kChunkRows]; }

  std::size_t max_rows_;
  std::size_t size_ = 0;
  std::vector<Chunk> chunks_;  // of kChunkRows rows each, the last filling
};

}  // namespace npuscope::collector::schema
