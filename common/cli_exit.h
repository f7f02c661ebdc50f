// How both executables (harness, harness-rank) turn a command line into an exit code: the
// documented codes in one place. 0 success (and --help); what a command's callback throws as
// CLI::RuntimeError(code) (1 a failed run or a regression, 130 an interruption); 2 bad input,
// a spec's or the command line's, printed as one line "error: ..." per error; 1 anything else.
// Every message reaches the terminal through terminal_safe: a value from the input may hold an
// escape sequence, a NUL or 20 MB.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {

inline int parse_and_run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100+) and its second "Run with --help" line would read as a failed
    // run to a script; a bad command line is bad input.
    std::fprintf(stderr, "error: %s (see --help)\n", terminal_safe(e.what()).c_str());
    return 2;
  } catch (const InputError& e) {
    // One line per error: a spec with several wrong values reports them all at once.
    const std::string what = e.what();
    for (size_t begin = 0; begin <= what.size();) {
      const size_t end = std::min(what.find('\n', begin), what.size());
      std::fprintf(stderr, "error: %s\n", terminal_safe(what.substr(begin, end - begin)).c_str());
      begin = end + 1;
    }
    return 2;
  } catch (const std::exception& e) {
    // One line: LibTorch's errors carry their backtrace after the first.
    const std::string what = e.what();
    std::fprintf(stderr, "error: %s\n", terminal_safe(what.substr(0, what.find('\n'))).c_str());
    return 1;
  }
  return 0;
}

}  // namespace harness
