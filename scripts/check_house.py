#!/usr/bin/env python3
"""The house rules, checked (the test command runs this as the ctest `house_rules`):

1. clang-format: every tracked C++ file is formatted (.clang-format).
2. No include cycle between top-level folders (common, planner, simulator, runtime,
   baselines, rank, harness): folder A including folder B that includes A back.
3. At most 3 source files directly in harness/ (the rest sits in its sub-folders).
4. The harness binary links no LibTorch (ldd), when a build folder is given.
5. Functions a reader holds in mind: no non-test function of 60 lines or more (free functions
   and member functions defined in class bodies alike), except those listed in
   scripts/long_functions.txt, each of which may shrink but not grow, and none of 100 or more.
6. No process started, replaced or reaped by hand outside the process layer
   (common/child_process.cpp): no fork, exec* or wait* call in the sources (a test may fork to
   run a function that replaces its process).

Usage: check_house.py [BUILD_DIR]. Prints one line per violation; exit 1 if any, else 0.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_FOLDERS = ["common", "planner", "simulator", "runtime", "baselines", "rank", "harness"]
INCLUDE = re.compile(r'^#include "([^"/]+)/', re.M)
DEFINITION_SKIP = ("//", "#", "namespace", "}", "class ", "struct ", "enum ", "using ",
                   "template", "extern", "static_assert", "inline constexpr", "constexpr")


def tracked(*patterns):
    out = subprocess.check_output(["git", "ls-files", *patterns], cwd=ROOT, text=True)
    return out.split()


# clang-format's warning for a file that is not formatted: "PATH:LINE:COL: error: code should be
# clang-formatted [-Wclang-format-violations]".
UNFORMATTED = re.compile(r"^(.+?):\d+:\d+: error: code should be clang-formatted", re.M)


def check_format(files):
    # One clang-format for every file: a process per file costs ~27 ms each, most of the
    # test's time, against about a second for one.
    if not files:
        return []
    result = subprocess.run(["clang-format", "--dry-run", "--Werror", *files], cwd=ROOT,
                            capture_output=True, text=True)
    unformatted = list(dict.fromkeys(UNFORMATTED.findall(result.stderr)))
    if result.returncode != 0 and not unformatted:
        first = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[0]
        return [f"clang-format failed: {first}"]
    return [f"{path}: not clang-format clean (run clang-format -i {path})" for path in unformatted]


def folder_edges(files):
    edges = {}
    for path in files:
        top = path.split("/")[0]
        if top not in TOP_FOLDERS:
            continue
        with open(os.path.join(ROOT, path)) as f:
            for target in INCLUDE.findall(f.read()):
                if target in TOP_FOLDERS and target != top:
                    edges.setdefault(top, {}).setdefault(target, path)
    return edges


def check_cycles(edges):
    problems = []
    for a, targets in sorted(edges.items()):
        for b, via in sorted(targets.items()):
            if a < b and a in edges.get(b, {}):
                problems.append(f"include cycle: {a}/ -> {b}/ ({via}) and {b}/ -> {a}/ "
                                f"({edges[b][a]})")
    # Longer cycles: a folder reachable from itself.
    def reach(start):
        seen, stack = set(), [start]
        while stack:
            for nxt in edges.get(stack.pop(), {}):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen
    for folder in TOP_FOLDERS:
        if folder in reach(folder) and not any(folder in p for p in problems):
            problems.append(f"include cycle through {folder}/")
    return problems


def check_harness_top(files):
    direct = [p for p in files if p.startswith("harness/") and p.count("/") == 1
              and p.endswith((".cpp", ".h"))]
    return [f"harness/ holds {len(direct)} source files directly (at most 3): {direct}"] \
        if len(direct) > 3 else []


TORCH_LIBRARY = re.compile(r"(^|/)lib(torch|c10)\w*\.so")


def torch_libraries_in(ldd_output):
    """The LibTorch libraries among ldd's lines, by their names and paths only: a load address
    such as (0x00007ffc10a9e000) is random and once read as c10."""
    return [line.split()[0] for line in ldd_output.splitlines()
            if any(TORCH_LIBRARY.search(word) for word in line.split() if not word.startswith("("))]


def check_no_torch(build_dir):
    binary = os.path.join(build_dir, "harness")
    if not os.path.exists(binary):
        return [f"{binary}: not built"]
    torch = torch_libraries_in(subprocess.check_output(["ldd", binary], text=True))
    return [f"{binary} links LibTorch: {', '.join(torch)}"] if torch else []


CONTROL = re.compile(r"(if|for|while|switch|do|else|return|catch|try|case|default)\b")
CLASS_HEAD = re.compile(r"(template\s*<.*>\s*)?(class|struct|union)\s+[\w:]+[^(;]*$")


def function_lengths_in(lines):
    """(name, first line, length) of each function defined at namespace scope or in a class body
    at any depth (a member function defined where it is declared). clang-format puts a
    definition's first and closing lines at its scope's indentation: column 0 at namespace scope,
    two more for each class it sits in; function bodies are not searched (their lambdas and local
    classes belong to the function)."""
    found = []

    def head_end(i):
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")):
            j += 1
        return j

    def closing(j, indent):
        k = j + 1
        while k < len(lines) and not (lines[k].startswith(" " * indent + "}") and
                                      not lines[k][indent].isspace()):
            k += 1
        return k

    def scan(i, stop, indent):
        while i < stop:
            line = lines[i]
            text = line[indent:]
            if len(line) <= indent or line[:indent].strip() or text[0].isspace():
                i += 1
                continue
            is_class = text.startswith(("class ", "struct ", "union "))
            if not is_class and text.startswith(DEFINITION_SKIP):
                i += 1  # a template's head line among them: its definition starts on the next
                continue
            j = head_end(i)
            if j >= len(lines):
                return
            head = " ".join(x.strip() for x in lines[i:j + 1])
            opens = lines[j].rstrip().endswith("{")
            if is_class:
                if opens and CLASS_HEAD.match(head.rstrip("{ ")):
                    k = closing(j, indent)
                    scan(j + 1, k, indent + 2)
                    i = k + 1
                else:
                    i = j + 1
                continue
            if opens and not CONTROL.match(text) and "(" in text and \
                    "=" not in text.split("(")[0]:
                k = closing(j, indent)
                name = re.search(r"([\w:~]+)\s*\(", text)
                found.append((name.group(1) if name else text.strip(), i + 1, k - i + 1))
                i = k + 1
                continue
            i = j + 1

    scan(0, len(lines), 0)
    return found


def function_lengths(path):
    with open(os.path.join(ROOT, path)) as f:
        return function_lengths_in(f.read().split("\n"))


NEW_FUNCTION_LIMIT = 60
LONG_FUNCTIONS = "scripts/long_functions.txt"


def read_long_functions(text):
    """{(path, name): lines} of the list: `LINES PATH NAME` per line, # comments."""
    allowed = {}
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        length, path, name = line.split()
        allowed[(path, name)] = int(length)
    return allowed


def length_problems(path, name, line, length, allowed):
    where = f"{path}:{line}: {name} is {length} lines"
    if length >= 100:
        return [f"{where} (at most 99)"]
    listed = allowed.get((path, name))
    if listed is None and length >= NEW_FUNCTION_LIMIT:
        return [f"{where} (at most {NEW_FUNCTION_LIMIT - 1}; split it)"]
    if listed is not None and length > listed:
        return [f"{where}, more than the {listed} {LONG_FUNCTIONS} allows (split it; a listed "
                "function may shrink, not grow)"]
    return []


def check_function_lengths(files, allowed):
    problems = []
    still_long = set()
    for path in files:
        if path.startswith(("tests/", "bench/")):
            continue
        for name, line, length in function_lengths(path):
            problems += length_problems(path, name, line, length, allowed)
            if length >= NEW_FUNCTION_LIMIT:
                still_long.add((path, name))
    # An entry whose function went below the limit (or away) leaves the list, so that it cannot
    # grow back.
    for path, name in sorted(set(allowed) - still_long):
        problems.append(f"{LONG_FUNCTIONS}: {path} {name} is no longer {NEW_FUNCTION_LIMIT} lines "
                        "or more: remove its line")
    return problems


PROCESS_CALL = re.compile(r"(?<![\w.>])(?:::)?(fork|vfork|execv|execvp|execve|execvpe|execl|"
                          r"execlp|execle|waitpid|waitid|wait3|wait4|posix_spawnp?)\s*\(")
PROCESS_LAYER = "common/child_process.cpp"


def process_calls_in(lines):
    """(line number, call) of each fork, exec* or wait* call in C++ lines, comments aside."""
    found = []
    for number, line in enumerate(lines, 1):
        found += [(number, call) for call in PROCESS_CALL.findall(line.split("//")[0])]
    return found


def check_process_calls(files):
    problems = []
    for path in files:
        if path == PROCESS_LAYER or path.startswith("tests/"):
            continue
        with open(os.path.join(ROOT, path)) as f:
            for number, call in process_calls_in(f.read().splitlines()):
                problems.append(f"{path}:{number}: {call}() outside the process layer "
                                f"({PROCESS_LAYER})")
    return problems


def main():
    sources = tracked("*.cpp", "*.h")
    problems = check_format(sources)
    problems += check_cycles(folder_edges(sources))
    problems += check_harness_top(sources)
    if len(sys.argv) > 1:
        problems += check_no_torch(sys.argv[1])
    with open(os.path.join(ROOT, LONG_FUNCTIONS)) as f:
        allowed = read_long_functions(f.read())
    problems += check_function_lengths(sources, allowed)
    problems += check_process_calls(sources)
    for p in problems:
        print(p)
    print(f"house rules: {len(problems)} problem(s) in {len(sources)} files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
