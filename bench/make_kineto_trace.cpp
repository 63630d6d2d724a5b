// Writes a synthetic Kineto trace of a given size by repeating a real trace's events, for the
// import bench (bench/import_bench.py):
//
//   make_kineto_trace TEMPLATE(.json|.json.gz) OUT.json BYTES
//
// Note [Repeated Kineto trace]
// The template's events are written again and again, each copy shifted after the one before: its
// timestamps by the template's span (so that host ops nest and tasks keep start order as in one
// long run, rather than piling onto the same times) and its External ids, correlations and flow ids
// by the template's largest id (so that every copy's joins are its own). Everything else is the
// template's text, byte for byte: a 10 GB trace is what a long real run would write. The template
// is read once into memory (a real trace of some MB) and split into literal pieces and the numbers
// to shift; the output is streamed, so writing 10 GB takes the template's memory only.
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../collector/src/export_util.h"
#include "../importer/src/chrome_events.h"

namespace {

enum class Shift : std::uint8_t { kTime, kId };

// A literal run of the template, then a number to shift (none after the last piece).
struct Piece {
  std::size_t begin, end;  // literal [begin, end)
  bool has_number = false;
  Shift shift = Shift::kTime;
  std::int64_t value = 0;  // ns for a time, else the id
  bool quoted = false;     // written as a string ("1736408883688177.930")
};

std::string read_all(const char* path) {
  gzFile f = gzopen(path, "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "make_kineto_trace: cannot open %s\n", path);
    std::exit(1);
  }
  std::string text;
  std::vector<char> buf(1 << 20);
  int n;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) text.append(buf.data(), n);
  gzclose(f);
  return text;
}

// A number of microseconds at the start of `t` ("130.001") as ns (chrome_events.h's exact
// reading); the number's length in `used`.
bool parse_time(std::string_view t, std::int64_t& ns, std::size_t& used) {
  std::size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '-' || t[i] == '.')) ++i;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) return false;  // left as written
  const auto v = npuscope::importer::parse_us_as_ns(t.substr(0, i));
  if (!v) return false;
  ns = *v;
  used = i;
  return true;
}

// The [begin, end) of the traceEvents array's contents.
bool find_events(const std::string& t, std::size_t& begin, std::size_t& end) {
  const std::size_t key = t.find("\"traceEvents\"");
  if (key == std::string::npos) return false;
  begin = t.find('[', key);
  if (begin == std::string::npos) return false;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = begin; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      ++begin;
      end = i;
      return true;
    }
  }
  return false;
}

struct Template {
  std::vector<Piece> pieces;
  std::int64_t time_span = 0, id_span = 0;
};

// Splits the events' text at the numbers to shift.
Template split(const std::string& t, std::size_t begin, std::size_t end) {
  static constexpr std::pair<std::string_view, Shift> kKeys[] = {{"\"ts\"", Shift::kTime},
                                                                 {"\"External id\"", Shift::kId},
                                                                 {"\"external id\"", Shift::kId},
                                                                 {"\"correlation\"", Shift::kId},
                                                                 {"\"id\"", Shift::kId}};
  Template out;
  std::int64_t first = INT64_MAX, last = INT64_MIN, max_id = 0;
  std::size_t literal = begin;
  for (std::size_t i = begin; i < end; ++i) {
    if (t[i] != '"' || (i > 0 && t[i - 1] == '\\')) continue;
    for (const auto& [key, shift] : kKeys) {
      if (t.compare(i, key.size(), key) != 0) continue;
      std::size_t v = i + key.size();
      while (v < end && (t[v] == ' ' || t[v] == ':')) ++v;
      const bool quoted = v < end && t[v] == '"';
      if (quoted) ++v;
      std::int64_t value = 0;
      std::size_t used = 0;
      const std::string_view rest(t.data() + v, end - v);
      if (shift == Shift::kTime) {
        if (!parse_time(rest, value, used)) break;
        // An event's end: its ts plus the dur after it, when there is one close by.
        std::int64_t dur = 0;
        const std::size_t d = t.find("\"dur\"", v + used);
        if (d != std::string::npos && d < v + used + 16) {
          std::size_t dv = d + 5, dused = 0;
          while (dv < end && (t[dv] == ' ' || t[dv] == ':' || t[dv] == '"')) ++dv;
          parse_time(std::string_view(t.data() + dv, end - dv), dur, dused);
        }
        first = std::min(first, value);
        last = std::max(last, value + std::max<std::int64_t>(dur, 0));
      } else {
        const auto r = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        if (r.ec != std::errc() || (r.ptr < rest.data() + rest.size() && *r.ptr == '.')) break;
        used = static_cast<std::size_t>(r.ptr - rest.data());
        max_id = std::max(max_id, value);
      }
      out.pieces.push_back({literal, v, true, shift, value, quoted});
      literal = v + used;
      i = literal - 1;
      break;
    }
  }
  out.pieces.push_back({literal, end});
  out.time_span = first <= last ? last - first + 1000 : 0;  // a microsecond between copies
  out.id_span = max_id + 1;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_kineto_trace TEMPLATE(.json|.json.gz) OUT.json BYTES\n");
    return 2;
  }
  const std::string t = read_all(argv[1]);
  const auto target = static_cast<std::int64_t>(std::strtod(argv[3], nullptr));
  std::size_t begin = 0, end = 0;
  if (!find_events(t, begin, end)) {
    std::fprintf(stderr, "make_kineto_trace: %s has no traceEvents list\n", argv[1]);
    return 1;
  }
  while (end > begin && (t[end - 1] == ' ' || t[end - 1] == '\n' || t[end - 1] == '\r')) --end;
  const Template tmpl = split(t, begin, end);
  std::FILE* out = std::fopen(argv[2], "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "make_kineto_trace: cannot write %s\n", argv[2]);
    return 1;
  }
  static char io[1 << 22];
  std::setvbuf(out, io, _IOFBF, sizeof io);
  std::int64_t written = 0;
  const auto put = [&](const char* p, std::size_t n) {
    std::fwrite(p, 1, n, out);
    written += static_cast<std::int64_t>(n);
  };
  put(t.data(), begin);
  const std::int64_t tail = static_cast<std::int64_t>(t.size() - end);
  std::string number;
  for (std::int64_t copy = 0; copy == 0 || written + tail < target; ++copy) {
    if (copy > 0) put(",\n", 2);
    for (const Piece& p : tmpl.pieces) {
      put(t.data() + p.begin, p.end - p.begin);
      if (!p.has_number) continue;
      number.clear();
      if (p.shift == Shift::kTime) {
        npuscope::collector::export_util::append_us(number, p.value + copy * tmpl.time_span);
      } else {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, p.value + copy * tmpl.id_span);
        number.assign(buf, r.ptr);
      }
      put(number.data(), number.size());
    }
  }
  put(t.data() + end, t.size() - end);
  if (std::fclose(out) != 0) {
    std::fprintf(stderr, "make_kineto_trace: writing %s failed\n", argv[2]);
    return 1;
  }
  std::printf("%lld\n", static_cast<long long>(written));
  return 0;
}
