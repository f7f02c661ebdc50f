#include "common/yaml_file.h"

#include <algorithm>
#include <map>
#include <vector>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/limits.h"

namespace harness {
namespace {

// One depth-first walk: the maps and lists on the path from the root (an alias loop is a
// child that is one of them), and the values visited so far.
class BoundedWalk {
 public:
  explicit BoundedWalk(const std::string& name) : name_(name) {}

  // `where`: the place that names `node` (a map's key; for a list item, the item itself).
  void visit(const YAML::Node& node, const YAML::Mark& where) {
    if (++visited_ > kMaxYamlNodes) {
      fail(where, "more than " + std::to_string(kMaxYamlNodes) +
                      " values, counting each use of an alias (aliases of aliases?)");
    }
    if (!node.IsMap() && !node.IsSequence()) return;
    for (const YAML::Node& ancestor : path_) {
      if (ancestor.is(node)) {
        fail(where, "an alias refers to a map or list that contains it (an alias loop)");
      }
    }
    if (static_cast<int>(path_.size()) >= kMaxYamlDepth) {
      fail(where, "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    }
    path_.push_back(node);
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) visit(item, item.Mark());
    } else {
      std::map<std::string, int> first_line;
      for (const auto& entry : node) {
        const YAML::Mark key_mark = entry.first.Mark();
        if (entry.first.IsScalar()) {
          const auto [at, fresh] = first_line.emplace(entry.first.Scalar(), key_mark.line);
          if (!fresh) {
            fail(key_mark, "duplicate key '" + entry.first.Scalar() + "' (first at line " +
                               std::to_string(at->second + 1) + ")");
          }
        } else {
          visit(entry.first, key_mark);
        }
        visit(entry.second, key_mark);
      }
    }
    path_.pop_back();
  }

 private:
  [[noreturn]] void fail(const YAML::Mark& where, const std::string& what) const {
    // Nodes made by a program rather than read from text carry no mark.
    if (where.line < 0) throw InputError(name_ + ": " + what);
    throw InputError(format_location(name_, where.line, where.column) + ": " + what);
  }

  const std::string& name_;
  std::vector<YAML::Node> path_;
  long long visited_ = 0;
};

}  // namespace

void check_yaml_document(const YAML::Node& root, const std::string& name) {
  BoundedWalk(name).visit(root, root.Mark());
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& name) {
  // YAML allows no NUL (nor most control characters); yaml-cpp keeps a NUL inside a value,
  // which would cut names and paths short where C strings carry them.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const int line = static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
    const int column =
        static_cast<int>(nul - (line_start == std::string::npos ? 0 : line_start + 1));
    throw InputError(format_location(name, line, column) +
                     ": a NUL byte (not a text file, or a value with a NUL in it)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(format_location(name, e.mark.line, e.mark.column) +
                     ": YAML syntax error: " + e.msg);
  }
  check_yaml_document(root, name);
  return root;
}

YAML::Node read_yaml_file(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_input_file(path);
  if (!text) throw InputError(path.string() + ": cannot open file");
  return parse_yaml_text(*text, path.string());
}

}  // namespace harness
