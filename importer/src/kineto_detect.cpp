// Recognising a Kineto trace from its name and first bytes, and finding its time base
// (Note [Kineto import] in kineto_import.h).
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

#include "chrome_events.h"
#include "kineto_import.h"

namespace npuscope::importer {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kHeadBytes = 256 * 1024;
constexpr std::size_t kTailBytes = 64 * 1024;

bool ends_with(std::string_view s, std::string_view tail) { return s.ends_with(tail); }

// The first `n` bytes of the file, inflated when it is gzip ("" if it cannot be read).
std::string head_of(const std::string& path, std::size_t n) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  out.resize(n);
  const int got = gzread(f, out.data(), static_cast<unsigned>(n));
  gzclose(f);
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

// The last `n` bytes: a seek for a plain file, an inflate to the end for a .gz (no index to seek by).
std::string tail_of(const std::string& path, std::size_t n) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  if (gzdirect(f) != 0) {
    gzclose(f);
    FILE* p = std::fopen(path.c_str(), "rb");
    if (p == nullptr) return out;
    std::fseek(p, 0, SEEK_END);
    const long size = std::ftell(p);
    const long from = std::max<long>(0, size - static_cast<long>(n));
    std::fseek(p, from, SEEK_SET);
    out.resize(static_cast<std::size_t>(size - from));
    out.resize(std::fread(out.data(), 1, out.size(), p));
    std::fclose(p);
    return out;
  }
  gzbuffer(f, 1 << 20);
  std::string chunk(std::size_t{4} << 20, '\0');
  for (;;) {
    const int got = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got <= 0) break;
    const std::string_view c(chunk.data(), static_cast<std::size_t>(got));
    if (c.size() >= n) {
      out.assign(c.substr(c.size() - n));
    } else {
      out.append(c);
      if (out.size() > n) out.erase(0, out.size() - n);
    }
  }
  gzclose(f);
  return out;
}

// The integer after `"key"` and its colon in `text`, if the key is there.
std::optional<std::int64_t> number_after(std::string_view text, std::string_view quoted_key, std::size_t at) {
  std::size_t i = at + quoted_key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
    ++i;
  std::size_t j = i;
  while (j < text.size() && ((text[j] >= '0' && text[j] <= '9') || text[j] == '-')) ++j;
  return parse_int(text.substr(i, j - i));
}

constexpr std::string_view kBaseKey = "\"baseTimeNanoseconds\"";
constexpr std::string_view kEventsKey = "\"traceEvents\"";

char first_char(std::string_view head) {
  std::size_t i = 0;
  if (head.starts_with("\xEF\xBB\xBF")) i = 3;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\t' || head[i] == '\r')) ++i;
  return i < head.size() ? head[i] : '\0';
}

}  // namespace

std::optional<Source> detect_kineto(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const std::string name = path.filename().string();
  if (!ends_with(name, ".json") && !ends_with(name, ".json.gz")) return std::nullopt;
  const bool named = ends_with(name, ".pt.trace.json") || ends_with(name, ".pt.trace.json.gz");
  const std::string head = head_of(path.string(), kHeadBytes);
  const char first = first_char(head);
  bool kineto = named && (first == '{' || first == '[');
  if (!kineto && first == '{' && head.find(kEventsKey) != std::string::npos) {
    // Kineto's own top-level members, or its categories in the first events.
    static constexpr std::string_view kMarks[] = {
        "\"schemaVersion\"", "\"deviceProperties\"", "\"distributedInfo\"", kBaseKey,       "\"cpu_op\"",
        "\"cuda_runtime\"",  "\"python_function\"",  "\"user_annotation\"", "\"Operator\"", "\"gpu_memcpy\"",
        "\"ac2g\""};
    kineto = std::any_of(std::begin(kMarks), std::end(kMarks),
                         [&](std::string_view m) { return head.find(m) != std::string::npos; });
  }
  if (!kineto) return std::nullopt;
  return Source{Format::kKineto, path.string(), {path.string()}};
}

std::optional<std::int64_t> kineto_base_time(const std::string& path) {
  const std::string head = head_of(path, kHeadBytes);
  const std::size_t events = head.find(kEventsKey);
  const std::size_t base = head.find(kBaseKey);
  if (head.size() < kHeadBytes) {  // the whole file
    return base == std::string::npos ? std::nullopt : number_after(head, kBaseKey, base);
  }
  if (base != std::string::npos && base < events) return number_after(head, kBaseKey, base);
  // After the events (where Kineto writes it): the last top-level members.
  const std::string tail = tail_of(path, kTailBytes);
  const std::size_t at = tail.rfind(kBaseKey);
  if (at == std::string::npos) return std::nullopt;
  return number_after(tail, kBaseKey, at);
}

}  // namespace npuscope::importer
