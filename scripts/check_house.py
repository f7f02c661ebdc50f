#!/usr/bin/env python3
"""The house rules, checked (the test command runs this as the ctest `house_rules`):

1. clang-format: every tracked C++ file is formatted (.clang-format).
2. No include cycle between top-level folders (common, planner, simulator, runtime,
   baselines, rank, harness): folder A including folder B that includes A back.
3. At most 3 source files directly in harness/ (the rest sits in its sub-folders).
4. The harness binary links no LibTorch (ldd), when a build folder is given.
5. No non-test function of 100 lines or more.

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


def check_format(files):
    problems = []
    for path in files:
        result = subprocess.run(["clang-format", "--dry-run", "--Werror", path], cwd=ROOT,
                                capture_output=True, text=True)
        if result.returncode != 0:
            problems.append(f"{path}: not clang-format clean (run clang-format -i {path})")
    return problems


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


def check_no_torch(build_dir):
    binary = os.path.join(build_dir, "harness")
    if not os.path.exists(binary):
        return [f"{binary}: not built"]
    libraries = subprocess.check_output(["ldd", binary], text=True)
    torch = [line.split()[0] for line in libraries.splitlines() if "torch" in line or "c10" in line]
    return [f"{binary} links LibTorch: {', '.join(torch)}"] if torch else []


def function_lengths(path):
    """(name line, length) of each function defined at namespace scope (clang-format puts
    their first and closing lines at column 0)."""
    with open(os.path.join(ROOT, path)) as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and not line.startswith(DEFINITION_SKIP) \
                and "(" in line and "=" not in line.split("(")[0]:
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                name = re.search(r"([\w:~]+)\s*\(", line)
                found.append((name.group(1) if name else line.strip(), i + 1, k - i + 1))
                i = k
            else:
                i = j
        i += 1
    return found


def check_function_lengths(files):
    problems = []
    for path in files:
        if path.startswith(("tests/", "bench/")):
            continue
        for name, line, length in function_lengths(path):
            if length >= 100:
                problems.append(f"{path}:{line}: {name} is {length} lines (at most 99)")
    return problems


def main():
    sources = tracked("*.cpp", "*.h")
    problems = check_format(sources)
    problems += check_cycles(folder_edges(sources))
    problems += check_harness_top(sources)
    if len(sys.argv) > 1:
        problems += check_no_torch(sys.argv[1])
    problems += check_function_lengths(sources)
    for p in problems:
        print(p)
    print(f"house rules: {len(problems)} problem(s) in {len(sources)} files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
