// Helpers for tests of spec loading: the error a spec text produces, with the temporary folder
// stripped so tests compare against "spec.yaml:line:column: ...".
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/input_error.h"
#include "harness/spec/spec.h"
#include "tests/test_util.h"

namespace harness_test {

// Loads `text` as spec.yaml and returns the InputError message, one line per error (fails the
// test if none).
inline std::string spec_load_error(const std::string& text, const harness::LoadOptions& options) {
  TempDir dir;
  const auto path = dir.write("spec.yaml", text);
  try {
    harness::load_experiment(path.string(), options);
  } catch (const harness::InputError& e) {
    std::string message = e.what();
    const std::string prefix = dir.path().string() + "/";
    for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at)) {
      message.erase(at, prefix.size());
    }
    return message;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

// `text` with the first `from` replaced by `to` (fails the test when `from` is absent).
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace harness_test
