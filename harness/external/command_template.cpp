#include "harness/external/command_template.h"

#include <cctype>

namespace harness {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// Walks `text` once; calls on_literal for plain text and on_placeholder for each name.
template <typename Literal, typename Placeholder>
void scan(const std::string& text, Literal on_literal, Placeholder on_placeholder) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        on_literal('}');
        ++i;
        continue;
      }
      throw TemplateError("stray '}' at character " + std::to_string(i + 1) +
                          " (write '}}' for a literal brace)");
    }
    if (c != '{') {
      on_literal(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      on_literal('{');
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && is_name_char(text[end])) ++end;
    if (end >= text.size() || text[end] != '}' || end == i + 1) {
      // Quote what follows the brace so a typo is easy to find in a long command.
      throw TemplateError("'{' at character " + std::to_string(i + 1) +
                          " does not start a placeholder like {rank} (got '" +
                          text.substr(i, std::min<size_t>(20, text.size() - i)) +
                          "'; write '{{' for a literal brace)");
    }
    on_placeholder(text.substr(i + 1, end - i - 1));
    i = end;
  }
}

}  // namespace

std::vector<std::string> template_placeholders(const std::string& text) {
  std::vector<std::string> names;
  scan(
      text, [](char) {}, [&](const std::string& name) { names.push_back(name); });
  return names;
}

std::string render_template(const std::string& text,
                            const std::map<std::string, std::string>& values) {
  std::string out;
  scan(
      text, [&](char c) { out.push_back(c); },
      [&](const std::string& name) {
        auto it = values.find(name);
        if (it == values.end()) throw TemplateError("unknown placeholder '{" + name + "}'");
        out += it->second;
      });
  return out;
}

}  // namespace harness
