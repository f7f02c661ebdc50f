#include "harness/history/report_paths.h"

#include <cctype>

namespace harness {

namespace {

// Lower-case letters and digits, runs of anything else one '-': names that every file system and
// URL takes as they are. Different names could share a slug ("a/b" and "a b"), so the names'
// hash follows it.
std::string slug(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c)) {
      out += char(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  unsigned hash = 2166136261u;  // FNV-1a, 32 bits
  for (const unsigned char c : text) hash = (hash ^ c) * 16777619u;
  static const char* digits = "0123456789abcdef";
  std::string suffix;
  for (int shift = 28; shift >= 16; shift -= 4) suffix += digits[(hash >> shift) & 15];
  return out.substr(0, 60) + "-" + suffix;
}

}  // namespace

std::string report_index_page() { return "index.html"; }

std::string benchmark_page(const std::string& benchmark, size_t environment) {
  return "b-" + slug(benchmark) + "-e" + std::to_string(environment) + ".html";
}

std::string chart_file(const MetricKey& key, size_t environment) {
  return "charts/" + slug(key.benchmark) + "-" + slug(key.metric) + "-e" +
         std::to_string(environment) + ".svg";
}

std::string chart_anchor(const std::string& metric) { return "m-" + slug(metric); }

}  // namespace harness
