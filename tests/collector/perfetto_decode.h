// Reads a .pftrace back as Perfetto's trace processor does (Note [Perfetto trace layout] in
// npuscope/collector/export_perfetto.h): decoded with libprotobuf and
// collector/proto/perfetto_trace.proto, interned names resolved in file order, each track's slices
// rebuilt from their BEGIN/END events sorted by (time, file order) with a stack, what Perfetto would
// not accept listed in `problems`. For the tests of `export --perfetto` (collector, cli).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "perfetto_trace.pb.h"

namespace npuscope::collector::testing::perfetto {

namespace pb = ::perfetto::protos;

struct Track {
  std::uint64_t uuid = 0, parent = 0;
  std::string name;               // the track's, or the thread's or process's name
  std::int64_t pid = 0, tid = 0;  // a process or thread track's
  bool counter = false;
  std::int64_t unit = 0;
};

struct Slice {
  std::string name, category;
  std::int64_t ts = 0, dur = -1;
  int depth = 0;
  std::uint64_t track = 0;
  std::map<std::string, std::string> args;  // integers as text, doubles as format_double() writes them
  std::vector<std::uint64_t> flows;
};

// A double argument or counter value as Slice::args holds it: exact ("%.17g").
inline std::string format_double(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// A field of a message as it is on the wire.
struct WireField {
  std::uint32_t number = 0;
  int type = 0;
  std::string bytes;  // a length-delimited field's payload
};

inline bool read_varint(const std::string& s, std::size_t& at, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && at < s.size(); shift += 7) {
    const auto byte = static_cast<std::uint8_t>(s[at++]);
    v |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// The top-level fields of `message` (empty with a failure if it is not well-formed).
inline std::vector<WireField> wire_fields(const std::string& message) {
  std::vector<WireField> out;
  for (std::size_t at = 0; at < message.size();) {
    std::uint64_t key = 0, v = 0;
    if (!read_varint(message, at, key)) break;
    WireField f{static_cast<std::uint32_t>(key >> 3), static_cast<int>(key & 7), ""};
    if (f.type == 0) {
      if (!read_varint(message, at, v)) break;
    } else if (f.type == 1) {
      at += 8;
    } else if (f.type == 2) {
      if (!read_varint(message, at, v) || v > message.size() - at) break;
      f.bytes = message.substr(at, v);
      at += v;
    } else if (f.type == 5) {
      at += 4;
    } else {
      ADD_FAILURE() << "wire type " << f.type;
      return {};
    }
    out.push_back(std::move(f));
  }
  return out;
}

// A .pftrace read back as the trace processor would.
struct Decoded {
  pb::Trace trace;
  std::map<std::uint64_t, Track> tracks;
  std::vector<Slice> slices;
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, double>>> counters;  // uuid -> (ts, value)
  std::vector<std::string> problems;

  const Track& track(std::uint64_t uuid) const {
    static const Track kNone;
    const auto it = tracks.find(uuid);
    return it == tracks.end() ? kNone : it->second;
  }
  // The track's name and its ancestors' ("npu:0/stream 1").
  std::string path(std::uint64_t uuid) const {
    const Track& t = track(uuid);
    return t.parent != 0 ? path(t.parent) + "/" + t.name : t.name;
  }
  std::vector<const Slice*> with_category(const std::string& category) const {
    std::vector<const Slice*> out;
    for (const Slice& s : slices)
      if (s.category == category) out.push_back(&s);
    return out;
  }
  const Slice* find(const std::string& category, const std::string& arg, const std::string& value) const {
    for (const Slice& s : slices) {
      const auto it = s.args.find(arg);
      if (s.category == category && it != s.args.end() && it->second == value) return &s;
    }
    return nullptr;
  }
};

inline Decoded decode(const std::string& path) {
  Decoded d;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  EXPECT_TRUE(d.trace.ParseFromString(bytes)) << path << " is not a Perfetto Trace";
  // The wire rules a protobuf library does not check: one payload per packet, repeated scalars unpacked.
  for (const WireField& packet : wire_fields(bytes)) {
    EXPECT_EQ(packet.number, 1u);
    for (const WireField& f : wire_fields(packet.bytes)) {
      if (f.number != 11) continue;  // track_event
      for (const WireField& e : wire_fields(f.bytes)) {
        if (e.number == 3 || e.number == 47 || e.number == 48) {
          EXPECT_NE(e.type, 2) << "packed field " << e.number;
        }
        if (e.number == 47 || e.number == 48) {
          EXPECT_EQ(e.type, 1) << "flow ids are fixed64";
        }
      }
    }
  }
  std::map<std::uint64_t, std::string> names, categories, annotation_names, string_values;
  struct Event {
    std::int64_t ts;
    std::size_t order;
    const pb::TrackEvent* e;
  };
  std::map<std::uint64_t, std::vector<Event>> events;  // per track
  bool cleared = false;
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.trace.packet_size()); ++i) {
    const pb::TracePacket& p = d.trace.packet(static_cast<int>(i));
    if ((p.sequence_flags() & 1) != 0) cleared = true;
    if (p.has_interned_data()) {
      if (!cleared) d.problems.push_back("interned data before the state was cleared");
      for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
      for (const auto& c : p.interned_data().event_categories()) categories[c.iid()] = c.name();
      for (const auto& a : p.interned_data().debug_annotation_names()) annotation_names[a.iid()] = a.name();
      for (const auto& v : p.interned_data().debug_annotation_string_values()) string_values[v.iid()] = v.str();
    }
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& t = p.track_descriptor();
      Track track{.uuid = t.uuid(), .parent = t.parent_uuid(), .name = t.name()};
      if (t.has_process()) {
        track.pid = t.process().pid();
        track.name = t.process().process_name();
      }
      if (t.has_thread()) {
        track.pid = t.thread().pid();
        track.tid = t.thread().tid();
        track.name = t.thread().thread_name();
        // A thread belongs to its process by pid.
        for (const auto& [uuid, other] : d.tracks)
          if (other.tid == 0 && other.pid == track.pid && other.uuid != 0) track.parent = uuid;
      }
      if (t.has_counter()) {
        track.counter = true;
        track.unit = t.counter().unit();
      }
      if (d.tracks.contains(t.uuid())) d.problems.push_back("track " + std::to_string(t.uuid()) + " described twice");
      d.tracks[t.uuid()] = track;
    }
    if (!p.has_track_event()) continue;
    if (p.trusted_packet_sequence_id() == 0) d.problems.push_back("an event without its sequence");
    const pb::TrackEvent& e = p.track_event();
    if (!d.tracks.contains(e.track_uuid())) d.problems.push_back("an event before its track");
    if (e.has_name_iid() && !names.contains(e.name_iid())) d.problems.push_back("a name used before it was interned");
    for (const auto& a : e.debug_annotations()) {
      if (!annotation_names.contains(a.name_iid()))
        d.problems.push_back("an argument name used before it was interned");
      if (a.has_string_value_iid() && !string_values.contains(a.string_value_iid()))
        d.problems.push_back("an argument value used before it was interned");
    }
    events[e.track_uuid()].push_back({static_cast<std::int64_t>(p.timestamp()), i, &e});
  }
  // Each track as the trace processor builds it: events by (ts, file order), a stack of open slices.
  for (auto& [uuid, list] : events) {
    std::stable_sort(list.begin(), list.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
    std::vector<std::size_t> open;
    for (const Event& ev : list) {
      const pb::TrackEvent& e = *ev.e;
      if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
        d.counters[uuid].emplace_back(
            ev.ts, e.has_double_counter_value() ? e.double_counter_value() : static_cast<double>(e.counter_value()));
        continue;
      }
      if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
        if (e.has_name_iid() || e.category_iids_size() > 0) d.problems.push_back("an END with a name or category");
        if (open.empty()) {
          d.problems.push_back("an END with no open slice");
          continue;
        }
        d.slices[open.back()].dur = ev.ts - d.slices[open.back()].ts;
        open.pop_back();
        continue;
      }
      Slice s{.name = names[e.name_iid()], .ts = ev.ts, .depth = static_cast<int>(open.size()), .track = uuid};
      for (const auto iid : e.category_iids()) s.category += categories[iid];
      for (const auto& a : e.debug_annotations()) {
        const std::string& key = annotation_names[a.name_iid()];
        s.args[key] = a.has_string_value()       ? a.string_value()
                      : a.has_string_value_iid() ? string_values[a.string_value_iid()]
                      : a.has_double_value()     ? format_double(a.double_value())
                                                 : std::to_string(a.int_value());
      }
      s.flows.assign(e.flow_ids().begin(), e.flow_ids().end());
      if (e.type() == pb::TrackEvent::TYPE_INSTANT) {
        s.dur = 0;
        d.slices.push_back(s);
      } else {
        d.slices.push_back(s);
        open.push_back(d.slices.size() - 1);
      }
    }
    if (!open.empty()) d.problems.push_back("a slice never ended");
  }
  return d;
}

}  // namespace npuscope::collector::testing::perfetto
