#!/usr/bin/env python3
"""scripts/check_house.py's function lengths, on sources written here: free functions and
member functions defined in class bodies at any depth are measured from their first line to
their closing brace; lambdas, local classes and one-line bodies are not functions of their own.
Its format check on files written here, in one clang-format run: each file that is not clean is
named once."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import check_house  # noqa: E402


def body(n, indent):
    return [" " * indent + f"x += {i};" for i in range(n)]


class FunctionLengths(unittest.TestCase):
    def lengths(self, lines):
        return [(name, line, length) for name, line, length in check_house.function_lengths_in(lines)]

    def test_free_function_at_namespace_scope(self):
        lines = ["namespace a {", "", "// why", "int f(int x) {", *body(3, 2), "  return x;", "}",
                 "", "}  // namespace a"]
        self.assertEqual(self.lengths(lines), [("f", 4, 6)])

    def test_member_functions_in_nested_classes(self):
        lines = ["namespace {", "class Outer : public Base {", " public:",
                 "  int g() const {", *body(2, 4), "    return 0;", "  }",
                 "  int one() const { return 1; }",
                 "  struct Inner {", "    template <typename T>", "    void h(T t,",
                 "           int u) {", *body(4, 6), "    }", "  };",
                 " private:", "  int x_ = 0;", "};", "}  // namespace"]
        self.assertEqual(self.lengths(lines), [("g", 4, 5), ("h", 12, 7)])

    def test_lambdas_and_local_classes_belong_to_their_function(self):
        lines = ["void run() {", "  struct Raw {", "    int a;", "  };",
                 "  auto key = [](int v) {", "    return v;", "  };",
                 "  std::sort(v.begin(), v.end(), [](int a, int b) {", "    return a < b;", "  });",
                 "  if (ready()) {", "    go();", "  }", "}"]
        self.assertEqual(self.lengths(lines), [("run", 1, 14)])

    def test_a_long_member_function_is_reported_at_its_line(self):
        lines = ["namespace b {", "class Builder {", " public:", "  Dag build() const {",
                 *body(106, 4), "  }", "};", "}  // namespace b"]
        self.assertEqual(self.lengths(lines), [("build", 4, 108)])

    def test_new_functions_stop_at_60_lines_and_listed_ones_may_not_grow(self):
        allowed = check_house.read_long_functions("# a comment\n80 a.cpp long_one\n")
        self.assertEqual(allowed, {("a.cpp", "long_one"): 80})
        problems = lambda name, length: check_house.length_problems(
            "a.cpp", name, 7, length, allowed)
        self.assertEqual(problems("fresh", 59), [])
        self.assertEqual(problems("fresh", 60), ["a.cpp:7: fresh is 60 lines (at most 59; split it)"])
        self.assertEqual(problems("long_one", 75), [])
        self.assertEqual(problems("long_one", 81), [
            "a.cpp:7: long_one is 81 lines, more than the 80 scripts/long_functions.txt allows "
            "(split it; a listed function may shrink, not grow)"])
        self.assertEqual(problems("long_one", 100), ["a.cpp:7: long_one is 100 lines (at most 99)"])

    def test_forward_declarations_and_enums_are_not_bodies(self):
        lines = ["class Fwd;", "enum class Kind {", "  kA,", "  kB,", "};",
                 "struct Plain {", "  int a;", "  int f() {", "    return a;", "  }", "};"]
        self.assertEqual(self.lengths(lines), [("f", 8, 3)])


class NoLibTorch(unittest.TestCase):
    def test_libtorch_is_found_by_name_or_path_never_in_a_load_address(self):
        ldd = ("\tlinux-vdso.so.1 (0x00007ffc10a9e000)\n"
               "\tlibyaml-cpp.so.0.7 => /lib/x86_64-linux-gnu/libyaml-cpp.so.0.7 (0x00007f1c10732000)\n"
               "\tlibtorch_cpu.so => /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13 (0x00007f1a71000000)\n"
               "\tlibc10.so => /opt/torch/lib/libc10.so (0x00007f1a71652000)\n"
               "\t/lib64/ld-linux-x86-64.so.2 (0x00007f1a7c10e000)\n")
        self.assertEqual(check_house.torch_libraries_in(ldd), ["libtorch_cpu.so", "libc10.so"])
        self.assertEqual(check_house.torch_libraries_in(ldd.split("\tlibtorch")[0]), [])


@unittest.skipUnless(shutil.which("clang-format"), "no clang-format")
class Format(unittest.TestCase):
    def test_each_unformatted_file_is_named_once_and_clean_ones_not_at_all(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(os.path.join(root, ".clang-format"), folder)
            files = {"clean.cpp": "int x = 1;\n", "spaced.cpp": "int  x;\nint  y;\n",
                     "braces.h": "void f() { return; }\n\n\n\nint  z;\n"}
            for name, text in files.items():
                with open(os.path.join(folder, name), "w") as f:
                    f.write(text)
            paths = [os.path.join(folder, name) for name in sorted(files)]
            problems = check_house.check_format(paths)
            self.assertEqual(problems, [f"{p}: not clang-format clean (run clang-format -i {p})"
                                        for p in paths if not p.endswith("clean.cpp")])
            self.assertEqual(check_house.check_format(paths[1:2]), [])  # clean.cpp alone
            self.assertEqual(check_house.check_format([]), [])

    def test_a_file_clang_format_cannot_read_is_a_problem(self):
        problems = check_house.check_format(["/nonexistent/missing.cpp"])
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("clang-format failed: "), problems)


class ProcessCalls(unittest.TestCase):
    def test_calls_that_start_replace_or_reap_a_process_are_found_by_line(self):
        lines = ["const pid_t pid = ::fork();", "if (pid == 0) execvp(argv[0], argv);",
                 "// waitpid(pid) in a comment is none", "while (waitpid (pid, &s, 0) < 0) {",
                 "child.wait();  // the layer's own", "obj.fork(); std::execution::par;",
                 "posix_spawnp(&pid, name, nullptr, nullptr, argv, envp);"]
        self.assertEqual(check_house.process_calls_in(lines),
                         [(1, "fork"), (2, "execvp"), (4, "waitpid"), (7, "posix_spawnp")])


if __name__ == "__main__":
    unittest.main()
