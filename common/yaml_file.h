// Reading a YAML file a person wrote (specs, topologies, the spec.yaml a results folder keeps):
// parsed, then bounded and checked before anything else walks it. yaml-cpp resolves an alias
// to the very node it names, so `sweep: &a {x: *a}` is a map that contains itself: a walk of
// it never ends. Every check here walks with a bound.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

namespace harness {

// The parsed file, checked by check_yaml_document. InputError "FILE: cannot open file",
// "FILE: larger than 64 MiB", "FILE:LINE:COLUMN: YAML syntax error: why", or a check's error.
YAML::Node read_yaml_file(const std::filesystem::path& path);

// The same for text that is not in a file (a --set value); `name` starts its errors.
YAML::Node parse_yaml_text(const std::string& text, const std::string& name);

// Refuses, at the first place found ("NAME:LINE:COLUMN: ..."): an alias that refers to a map
// or list containing it, nesting deeper than kMaxYamlDepth, more than kMaxYamlNodes values
// counted through aliases, and a key said twice in one map (yaml-cpp would keep the first
// silently).
void check_yaml_document(const YAML::Node& root, const std::string& name);

}  // namespace harness
