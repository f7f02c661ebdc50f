#include "harness/spec/yaml_paths.h"

#include "common/text_util.h"

namespace harness {

// Splits "a.b.c" into the keys to walk; the sweep and quick maps take a dotted path as one key.
std::vector<std::string> path_keys(const std::string& dotted) {
  for (const char* map_of_paths : {"sweep.", "quick."}) {
    const std::string prefix = map_of_paths;
    if (dotted.rfind(prefix, 0) == 0 && dotted.size() > prefix.size()) {
      return {prefix.substr(0, prefix.size() - 1), dotted.substr(prefix.size())};
    }
  }
  return split(dotted, '.');
}

// Sets root[k1][k2]... = value, creating maps on the way. Shares `value`'s node, so its
// location in the file is kept for error messages.
void set_path(YAML::Node root, const std::vector<std::string>& keys, const YAML::Node& value) {
  YAML::Node current;
  current.reset(root);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = current[keys[i]];
    if (!next.IsMap()) {
      current[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(current[keys[i]]);
    }
    current.reset(next);
  }
  current[keys.back()] = value;
}

YAML::Node get_path(const YAML::Node& root, const std::vector<std::string>& keys) {
  YAML::Node current;
  current.reset(root);
  for (const auto& key : keys) {
    if (!current.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& constant = current;
    YAML::Node next = constant[key];
    if (!next) return next;
    current.reset(next);
  }
  return current;
}

std::string scalar_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace harness
