#include "runtime/protocol/result_frames.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/text_pattern.h"

namespace runtime {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr size_t kLineLength = 76;

int alphabet_index(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool is_plain_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

std::string hex64(unsigned long long value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", value);
  return text;
}

}  // namespace

bool is_result_file_name(const std::string& name) {
  static const harness::TextPattern pattern(
      R"((rank[0-9]+\.csv|(trace|pipeline|memory)_rank[0-9]+\.json|buckets\.json))");
  return pattern.matches(name);
}

std::vector<std::string> list_result_files(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && is_result_file_name(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string base64_encode(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    unsigned value = 0;
    for (size_t k = 0; k < 3; ++k) {
      value = (value << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(value >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

std::string base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("base64: length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    unsigned value = 0;
    int padding = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int index = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
      } else if (padding > 0 || (index = alphabet_index(c)) < 0) {
        throw std::invalid_argument("base64: unexpected character");
      }
      value = (value << 6) | static_cast<unsigned>(index);
    }
    for (int k = 0; k < 3 - padding; ++k) out += static_cast<char>((value >> (16 - 8 * k)) & 255);
  }
  return out;
}

unsigned long long fnv1a64(const std::string& bytes) {
  unsigned long long hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string frame_file(const std::string& name, const std::string& content) {
  if (!is_plain_name(name)) throw std::invalid_argument("cannot frame file name '" + name + "'");
  std::string out = "@harness-file " + name + " " + std::to_string(content.size()) + " " +
                    hex64(fnv1a64(content)) + "\n";
  const std::string encoded = base64_encode(content);
  for (size_t i = 0; i < encoded.size(); i += kLineLength) {
    out += encoded.substr(i, kLineLength) + "\n";
  }
  out += "@harness-end " + name + "\n";
  return out;
}

DecodedFrames decode_frames(const std::string& text) {
  DecodedFrames decoded;
  std::istringstream lines(text);
  std::string line;
  bool inside = false;
  std::string name, checksum, body;
  size_t bytes = 0;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("@harness-file ", 0) == 0) {
      if (inside) decoded.errors.push_back("frame of '" + name + "' has no end");
      std::istringstream header(line.substr(14));
      inside = static_cast<bool>(header >> name >> bytes >> checksum) && is_plain_name(name);
      if (!inside) decoded.errors.push_back("malformed frame header: '" + line + "'");
      body.clear();
      continue;
    }
    if (!inside) continue;
    if (line == "@harness-end " + name) {
      inside = false;
      try {
        std::string content = base64_decode(body);
        if (content.size() != bytes || hex64(fnv1a64(content)) != checksum) {
          decoded.errors.push_back("frame of '" + name + "' is damaged (size or checksum differ)");
        } else {
          decoded.files[name] = std::move(content);
        }
      } catch (const std::invalid_argument& e) {
        decoded.errors.push_back("frame of '" + name + "' is damaged (" + e.what() + ")");
      }
      continue;
    }
    body += line;
  }
  if (inside) decoded.errors.push_back("frame of '" + name + "' has no end");
  return decoded;
}

}  // namespace runtime
