#!/usr/bin/env python3
"""scripts/check_docs.py on a repository written here: broken relative links and headings,
repository paths in code spans and fenced blocks that do not exist, examples written as
placeholders and ignored outputs left alone, and dated comments in sources flagged by line."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import check_docs  # noqa: E402


class DocsCheckOnARepository(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        subprocess.run(["git", "init", "-q", self.root], check=True)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run(["git", "add", "-f", path], cwd=self.root, check=True)

    def problems(self):
        check = check_docs.DocsCheck(self.root)
        check.check_markdown()
        check.check_comments()
        return check.problems

    def test_links_resolve_relative_to_their_file_and_headings_are_checked(self):
        self.write("docs/install.md", "# Install\n\n## Which LibTorch\n")
        self.write("README.md", "\n".join([
            "See [install](docs/install.md) and [its table](docs/install.md#which-libtorch).",
            "A [missing page](docs/gpu.md), a [bad heading](docs/install.md#gpus).",
            "The web: [benchmark](https://github.com/google/benchmark), [top](#readme).",
            "# Readme", ""]))
        self.write("docs/ci.md", "[back](../README.md), [wrong](README.md)\n")
        self.assertEqual(self.problems(), [
            "README.md:2: link to docs/gpu.md: docs/gpu.md does not exist",
            "README.md:2: link to docs/install.md#gpus: docs/install.md has no heading #gpus",
            "docs/ci.md:1: link to README.md: docs/README.md does not exist",
        ])

    def test_a_hash_without_its_space_is_no_heading(self):
        self.write("docs/a.md", "#Install\n\n## Fine\n\n```\n#comment in code\n```\n##Also\n")
        self.assertEqual(self.problems(), [
            "docs/a.md:1: not a heading: a space must follow the #",
            "docs/a.md:8: not a heading: a space must follow the #",
        ])

    def test_repository_paths_in_code_but_not_placeholders_or_outputs(self):
        self.write(".gitignore", "/build/\n/results/*\n!/results/README.md\n")
        self.write("scripts/test.sh", "true\n")
        self.write("results/README.md", "# Results\n")
        self.write("README.md", "\n".join([
            "Run `bash scripts/test.sh`, not `bash scripts/tests.sh`.",
            "Write `experiments/<name>.yaml`; outputs in `results/quickstart/20261201T0000Z/`,",
            "binaries in `build/harness`; every `scripts/*.sh`; `results/README.md`.",
            "```",
            "bash scripts/test.sh --out=scripts/missing/",
            "```",
            "`harness/cli/` names no top-level folder of this repository.", ""]))
        self.assertEqual(self.problems(), [
            "README.md:1: path scripts/tests.sh does not exist",
            "README.md:5: path scripts/missing/ does not exist",
        ])

    def test_dated_comments_in_sources_but_not_in_strings_or_docs(self):
        self.write("src/a.cpp", "\n".join([
            "// Why this is so.",
            "int x = 1;  // 12 s faster (2026-11-28)",
            "const char* stamp = \"2026-11-28\";",
            "const char* url = \"http://example.org/2026-11-28\";  // why, not when",
            "/* measured 2026-11-29 */", ""]))
        self.write("scripts/b.sh", "echo \"#2026-11-28\"\n# 2026-11-30: 4 s\nx=${#y}\n")
        self.write("src/CMakeLists.txt", "set(A 1)  # measured 2026-11-27\n")
        self.write("src/c.py", "x = \"a # 2026-11-28\"  # the model's why\ny = 1  # 2026-11-28\n")
        self.write("docs/history.md", "Measured 2026-11-28 on a 2-core VM.\n")
        self.assertEqual(sorted(p.split(": ")[0] for p in self.problems()),
                         ["scripts/b.sh:2", "src/CMakeLists.txt:1", "src/a.cpp:2", "src/a.cpp:5",
                          "src/c.py:2"])


if __name__ == "__main__":
    unittest.main()
