// Placeholders in an external system's command, environment and file paths: "{rank}",
// "{point.ddp.bucket_mb}". "{{" and "}}" stand for literal braces. Parsing is separate from
// rendering so that a spec is checked for unknown placeholders before anything runs.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness {

// A template that cannot be parsed or names a placeholder without a value.
class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The placeholder names in `text`, in order ("rank", "point.model.batch_size").
// Throws TemplateError for an unterminated or empty placeholder or a stray brace.
std::vector<std::string> template_placeholders(const std::string& text);

// `text` with every placeholder replaced by its value; throws TemplateError for a
// placeholder that `values` does not define.
std::string render_template(const std::string& text,
                            const std::map<std::string, std::string>& values);

}  // namespace harness
