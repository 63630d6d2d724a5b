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

// The integer members a table's order_by names, in order: the rank's key.
template <class Row>
std::vector<Field<Row>> order_fields(const Table<Row>& table) {
  std::vector<Field<Row>> out;
  std::string_view rest = table.info.order_by;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (name.starts_with(' ')) name.remove_prefix(1);
    const auto column = std::find_if(table.info.columns.begin(), table.info.columns.end(),
                                     [&](const ColumnInfo& c) { return c.name == name; });
    const auto i = static_cast<std::size_t>(column - table.info.columns.begin());
    if (column == table.info.columns.end() || table.fields[i].index() > 1) {
      throw std::logic_error(std::string(table.info.name) + ".order_by must name integer columns to be ranked");
    }
    out.push_back(table.fields[i]);
  }
  if (out.empty() || out.size() > 2) {
    throw std::logic_error(std::string(table.info.name) + ".order_by must name one or two columns to be ranked");
  }
  return out;
}

// Note [Holding rows cheaply]
// Holding a table's rows must cost less than the ~30 % of SQLite's insert time ranking saves. A
// first version copied them row by row into growing vectors and sorted an index of every row: on
// 100k launches it cost more than it saved, most of it page faults on the fresh memory. So rows
// are copied a span at a time into 8 MiB chunks aligned to and advised for 2 MiB pages (a fault per
// 2 MiB instead of per 4 KiB); rows arrive nearly in order (the drain takes them by time), so the
// order is found as ascending runs: one run, the usual case, is inserted straight from the chunks,
// and a few runs are merged (a natural merge sort: linear for nearly sorted rows, stable, so ties
// keep the order they came in).
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
    const std::vector<Field<Row>> fields = order_fields(table_for<Row>());
    const auto key_of = [&](const Row& row) {
      return Key{value(fields[0], row), fields.size() > 1 ? value(fields[1], row) : 0, &row};
    };
    std::vector<std::size_t> runs;  // where each ascending run starts
    Key previous{};
    for (std::size_t i = 0; i < size_; ++i) {
      const Key key = key_of(at(i));
      if (i == 0 || key < previous) runs.push_back(i);
      previous = key;
    }
    if (runs.size() <= 1) return as_added(insert);
    std::vector<Key> keys;
    reserve_in_huge_pages(keys, size_);
    for (std::size_t i = 0; i < size_; ++i) keys.push_back(key_of(at(i)));
    runs.push_back(size_);
    while (runs.size() > 2) {  // merge neighbouring runs until one is left
      std::vector<std::size_t> merged;
      for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
        merged.push_back(runs[r]);
        if (r + 2 < runs.size()) {  // else the last run, odd one out, waits for the next round
          std::inplace_merge(keys.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                             keys.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                             keys.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]));
        }
      }
      merged.push_back(size_);
      runs = std::move(merged);
    }
    std::vector<const void*> order;
    reserve_in_huge_pages(order, size_);
    for (const Key& key : keys) order.push_back(key.row);
    insert(Batch{.size = size_, .order = order.data()});
  }

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  static constexpr std::size_t kChunkRows = kChunkBytes / sizeof(Row);

  struct Key {
    std::int64_t first, second;
    const Row* row;
    bool operator<(const Key& o) const { return first != o.first ? first < o.first : second < o.second; }
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

  static std::int64_t value(const Field<Row>& field, const Row& row) {
    if (const auto* m = std::get_if<std::int64_t Row::*>(&field)) return row.*(*m);
    return row.*(*std::get_if<std::int32_t Row::*>(&field));
  }

  const Row& at(std::size_t i) const { return chunks_[i / kChunkRows][i % kChunkRows]; }

  std::size_t max_rows_;
  std::size_t size_ = 0;
  std::vector<Chunk> chunks_;  // of kChunkRows rows each, the last filling
};

}  // namespace npuscope::collector::schema
