// A RankSummary as bytes, to carry it between the processes of a scale-out (Note [Cluster analysis
// as map and merge] in cluster.h): "NPSRANK" and a version byte, then little-endian fixed-width
// fields, each vector and string after its length. Version 2 (1 had no meta_problem). One list of
// the fields, summary_fields(), serves both directions, so that they cannot disagree.

#include "npuscope/analyzer/cluster.h"

namespace npuscope::analyzer {
namespace {

constexpr std::string_view kMagic = "NPSRANK";
constexpr std::uint8_t kVersion = 4;  // 3: LinkTotal.communicator; 4: link_ops, op_links

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void i64(std::int64_t v) { put(static_cast<std::uint64_t>(v), 8); }
  void i32(std::int32_t v) { put(static_cast<std::uint32_t>(v), 4); }
  void str(const std::string& s) {
    i64(static_cast<std::int64_t>(s.size()));
    out_.append(s);
  }
  template <class T, class Each>
  void list(const std::vector<T>& v, std::size_t, Each&& each) {
    i64(static_cast<std::int64_t>(v.size()));
    for (const T& e : v) each(e);
  }
  std::string& out() { return out_; }

 private:
  void put(std::uint64_t u, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)[0]); }
  void i64(std::int64_t& v) { v = static_cast<std::int64_t>(get(8)); }
  void i32(std::int32_t& v) { v = static_cast<std::int32_t>(static_cast<std::uint32_t>(get(4))); }
  void str(std::string& s) { s = std::string(take(length(1))); }
  // A vector's length is checked against what is left (each element at least `min_bytes`), so that
  // a damaged length never asks for a huge allocation.
  template <class T, class Each>
  void list(std::vector<T>& v, std::size_t min_bytes, Each&& each) {
    v.resize(length(min_bytes));
    for (T& e : v) each(e);
  }
  bool done() const { return at_ == in_.size(); }
  [[noreturn]] static void fail(const std::string& why) {
    throw SummaryFormatError("not a rank summary of this npuscope version: " + why);
  }

 private:
  std::size_t length(std::size_t min_bytes) {
    std::int64_t n = 0;
    i64(n);
    if (n < 0 || static_cast<std::uint64_t>(n) > (in_.size() - at_) / min_bytes) fail("a length past the end");
    return static_cast<std::size_t>(n);
  }
  std::uint64_t get(int bytes) {
    const std::string_view b = take(static_cast<std::size_t>(bytes));
    std::uint64_t u = 0;
    for (int i = 0; i < bytes; ++i) u |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b[i])) << (8 * i);
    return u;
  }
  std::string_view take(std::size_t n) {
    if (in_.size() - at_ < n) fail("cut short");
    const std::string_view b = in_.substr(at_, n);
    at_ += n;
    return b;
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

// Every field in the byte form's order: `io` a Writer (of a const summary) or a Reader.
template <class Io, class Summary>
void summary_fields(Io& io, Summary& s) {
  for (auto* text : {&s.path, &s.error}) io.str(*text);
  for (auto* v : {&s.rank, &s.world_size, &s.node}) io.i32(*v);
  for (auto* text : {&s.hostname, &s.meta_problem}) io.str(*text);
  io.list(s.steps, 7 * 8, [&](auto& t) {
    for (auto* v :
         {&t.step, &t.start_ns, &t.end_ns, &t.computing_ns, &t.communication_ns, &t.overlapped_ns, &t.free_ns})
      io.i64(*v);
  });
  io.list(s.communicators, 16, [&](auto& c) {
    io.str(c.name);
    io.list(c.members, 4, [&](auto& m) { io.i32(m); });
  });
  io.list(s.collectives, 4 * 4 + 4 * 8, [&](auto& c) {
    for (auto* v : {&c.communicator, &c.sequence, &c.kind, &c.peer}) io.i32(*v);
    for (auto* v : {&c.bytes, &c.arrival_ns, &c.start_ns, &c.end_ns}) io.i64(*v);
  });
  io.list(s.links, 4 * 4 + 3 * 8, [&](auto& l) {
    for (auto* v : {&l.communicator, &l.src, &l.dst, &l.transport}) io.i32(*v);
    for (auto* v : {&l.bytes, &l.time_ns, &l.transfers}) io.i64(*v);
  });
  io.list(s.link_ops, 8 + 4 + 8, [&](auto& o) {
    io.str(o.name);
    io.i32(o.communicator);
    io.i64(o.start_ns);
  });
  io.list(s.op_links, 3 * 4 + 2 * 8, [&](auto& l) {
    for (auto* v : {&l.op, &l.dst, &l.transport}) io.i32(*v);
    for (auto* v : {&l.bytes, &l.time_ns}) io.i64(*v);
  });
}

}  // namespace

std::string serialize(const RankSummary& s) {
  Writer w;
  w.out().append(kMagic);
  w.u8(kVersion);
  summary_fields(w, s);
  return std::move(w.out());
}

RankSummary deserialize(std::string_view bytes) {
  if (!bytes.starts_with(kMagic)) Reader::fail("no NPSRANK header");
  Reader r(bytes.substr(kMagic.size()));
  if (const std::uint8_t v = r.u8(); v != kVersion) {
    Reader::fail("version " + std::to_string(v) + ", this build reads version " + std::to_string(kVersion));
  }
  RankSummary s;
  summary_fields(r, s);
  if (!r.done()) Reader::fail("bytes after the end");
  for (const CollectiveRecord& c : s.collectives) {
    if (c.communicator < 0 || static_cast<std::size_t>(c.communicator) >= s.communicators.size()) {
      Reader::fail("a collective of communicator " + std::to_string(c.communicator) + " of " +
                   std::to_string(s.communicators.size()));
    }
  }
  for (const LinkOp& o : s.link_ops) {
    if (o.communicator < -1 || o.communicator >= static_cast<std::int64_t>(s.communicators.size())) {
      Reader::fail("an op of communicator " + std::to_string(o.communicator) + " of " +
                   std::to_string(s.communicators.size()));
    }
  }
  for (const OpLink& l : s.op_links) {
    if (l.op < 0 || static_cast<std::size_t>(l.op) >= s.link_ops.size()) {
      Reader::fail("a link of op " + std::to_string(l.op) + " of " + std::to_string(s.link_ops.size()));
    }
  }
  return s;
}

}  // namespace npuscope::analyzer
