#!/usr/bin/env python3
"""The docs' promises, checked (the test command runs this as the ctest `docs_links`):

1. Every relative link in every tracked Markdown file, `[text](target)`, names a file or folder
   that exists (relative to the Markdown file; a `#fragment` is dropped, a link to a heading of
   a Markdown file must name a heading it has).
2. Every repository path in a code span or a fenced code block exists: a word whose first
   component is a tracked top-level folder (`scripts/test.sh`, `harness/cli/`) and that
   .gitignore does not ignore (`results/<stamp>/` is output, not a repository path). A path
   meant as an example is written so that it cannot be taken for one: with `<...>`, `*` or
   `...` in it (`experiments/<name>.yaml`).
3. No source, script, build or spec comment carries a date (a dated measurement belongs in the
   docs that own it, where it is replaced when re-measured; its history is in git).
4. Every line of Markdown prose that starts with `#` is a heading: `#Install` (no space, as a
   formatter for another language leaves it) renders as text, and links to it break.

Usage: check_docs.py [ROOT]. Prints one line per problem, FILE:LINE: what; exit 1 if any, else 0.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
FENCE = re.compile(r"^\s*(```|~~~)")
PATH_WORD = re.compile(r"^[A-Za-z0-9_.+\-/]+$")
PLACEHOLDER = ("<", ">", "*", "...", "$", "{", "%")
NOT_A_HEADING = re.compile(r"^#{1,6}[^#\s]")
DATE = re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b")
SOURCE_SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake", ".yaml", ".yml")
# Comment markers by file kind: C-family files comment with // and /* */, the rest with #.
C_FAMILY = (".cpp", ".h", ".cu", ".cuh")


def git_lines(root, *args, stdin=None):
    result = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True,
                            text=True)
    return result.stdout.splitlines()


def heading_anchor(title):
    # GitHub's rule: lower case, punctuation but hyphens and underscores dropped, spaces to "-".
    title = re.sub(r"`", "", title.strip().lower())
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


def anchors_of(path):
    anchors, in_fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and line.startswith("#"):
                anchors.add(heading_anchor(line.lstrip("#")))
    return anchors


class DocsCheck:
    def __init__(self, root):
        self.root = root
        self.tracked = set(git_lines(root, "ls-files"))
        self.top_folders = {p.split("/")[0] for p in self.tracked if "/" in p}
        self.problems = []
        self.anchor_cache = {}

    def exists(self, rel):
        return os.path.exists(os.path.join(self.root, rel))

    def problem(self, where, line, what):
        self.problems.append(f"{where}:{line}: {what}")

    def check_link(self, md, line, target):
        if re.match(r"^[a-z][a-z0-9+.\-]*:", target) or target.startswith("//"):
            return  # a URL (http:, mailto:, file:)
        path, _, fragment = target.partition("#")
        base = os.path.dirname(md)
        rel = os.path.normpath(os.path.join(base, path)) if path else md
        if not self.exists(rel):
            self.problem(md, line, f"link to {target}: {rel} does not exist")
            return
        if fragment and rel.endswith(".md") and os.path.isfile(os.path.join(self.root, rel)):
            anchors = self.anchor_cache.setdefault(rel, anchors_of(os.path.join(self.root, rel)))
            if fragment.lower() not in anchors:
                self.problem(md, line, f"link to {target}: {rel} has no heading #{fragment}")

    def path_candidates(self, text):
        for word in re.split(r"[\s=,;()\"'\[\]]+", text):
            word = word.rstrip(".:")
            if not word or any(mark in word for mark in PLACEHOLDER):
                continue
            if "/" not in word or not PATH_WORD.match(word) or word.startswith("/"):
                continue
            if word.split("/")[0] in self.top_folders:
                yield word

    def markdown_files(self):
        return sorted(p for p in self.tracked if p.endswith(".md") and self.exists(p))

    def check_markdown(self):
        paths = []  # (md, line, path)
        for md in self.markdown_files():
            in_fence = False
            with open(os.path.join(self.root, md), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if FENCE.match(line):
                        in_fence = not in_fence
                        continue
                    if in_fence:
                        paths += [(md, number, p) for p in self.path_candidates(line)]
                        continue
                    if NOT_A_HEADING.match(line):
                        self.problem(md, number, "not a heading: a space must follow the #")
                    prose = CODE_SPAN.sub(" ", line)
                    for target in LINK.findall(prose) + IMAGE.findall(prose):
                        self.check_link(md, number, target)
                    for _, span in CODE_SPAN.findall(line):
                        paths += [(md, number, p) for p in self.path_candidates(span)]
        self.check_paths(paths)

    def check_paths(self, paths):
        # Ignored paths (outputs such as results/<stamp>/) are not repository paths: one
        # git check-ignore for all of them.
        # A folder's pattern ("/build/") matches only a word that ends in "/": ask both forms.
        words = sorted({w for _, _, p in paths for w in (p, p.rstrip("/") + "/")})
        ignored = set(git_lines(self.root, "check-ignore", "--no-index", "--stdin",
                                stdin="\n".join(words) + "\n"))
        for md, line, path in paths:
            if path in ignored or path.rstrip("/") + "/" in ignored:
                continue
            beside = os.path.normpath(os.path.join(os.path.dirname(md), path))
            if not self.exists(path) and not self.exists(beside):
                self.problem(md, line, f"path {path} does not exist")

    def check_comments(self):
        for path in sorted(self.tracked):
            name = os.path.basename(path)
            if not (path.endswith(SOURCE_SUFFIXES) or name == "CMakeLists.txt"):
                continue
            if path.startswith("tests/data/") or not self.exists(path):
                continue
            c_family = path.endswith(C_FAMILY)
            with open(os.path.join(self.root, path), encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    comment = comment_text(line, c_family)
                    if comment and DATE.search(comment):
                        self.problem(path, number, "a dated comment (a measurement belongs "
                                     "in the docs, its history in git)")


def comment_text(line, c_family):
    """The comment part of a line: from the first comment marker outside a string literal (and,
    for "#", at the line's start or after a blank: "a#b" and "${#x}" are no comments)."""
    stripped = line.lstrip()
    if c_family and stripped.startswith(("*", "/*")):
        return stripped
    quote, escaped = None, False
    for at, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "\"'" and not (char == "'" and at > 0 and line[at - 1].isalnum()):
            quote = char  # an apostrophe inside a word ("LibTorch's") opens no string
        elif c_family and line.startswith("//", at):
            return line[at:]
        elif not c_family and char == "#" and (at == 0 or line[at - 1].isspace()):
            return line[at:]
    return ""


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    check = DocsCheck(root)
    check.check_markdown()
    check.check_comments()
    for line in check.problems:
        print(line)
    return 1 if check.problems else 0


if __name__ == "__main__":
    sys.exit(main())
