#!/usr/bin/env python3
"""scripts/manpages.py on a small header and source: the man page at the definition is rendered,
and every way a man page can miss or contradict the public API fails the run (exit 1)."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "manpages.py")

HEADER = """#pragma once
#define MATFOO "foo"
/* Sets the foo size of A */
PETSC_EXTERN PetscErrorCode MatFooSetSize(Mat A, PetscInt n);
"""

PAGE = """/*@
  MatFooSetSize - Sets the foo size.

  Logically Collective

  Input Parameters:
+ A - the matrix
- n - the size

  Level: intermediate

  Errors:
  `PETSC_ERR_ARG_OUTOFRANGE` for n < 0.

.seealso: `MATFOO`
@*/
"""

DEFINITION = """PetscErrorCode MatFooSetSize(Mat A, PetscInt n)
{
  return 0;
}
"""

TYPE_PAGE = """/*MC
  MATFOO - "foo": a type.

  Level: beginner
M*/
"""


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class ManPages(unittest.TestCase):
    def run_script(self, header, source, check=False):
        with tempfile.TemporaryDirectory() as d:
            h, c, out = os.path.join(d, "foo.h"), os.path.join(d, "foo.cpp"), os.path.join(d, "manual")
            write(h, header)
            write(c, source)
            r = subprocess.run([sys.executable, SCRIPT, "--header", h, "--out", out, c], capture_output=True, text=True)
            pages = {n: read(os.path.join(out, n)) for n in os.listdir(out)} if os.path.isdir(out) else {}
            if check and r.returncode == 0:
                r = subprocess.run([sys.executable, SCRIPT, "--check", "--header", h, "--out", out, c], capture_output=True, text=True)
            return r, pages

    def test_rendered(self):
        r, pages = self.run_script(HEADER, TYPE_PAGE + PAGE + DEFINITION, check=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(pages), ["MATFOO.md", "MatFooSetSize.md", "README.md"])
        page = pages["MatFooSetSize.md"]
        for text in ("# MatFooSetSize", "*Logically Collective*", "- `n`: the size", "## Errors", "Level: intermediate", "Location: "):
            self.assertIn(text, page)

    def assertFails(self, header, source, words):
        r, _ = self.run_script(header, source)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(words, r.stderr)

    def test_no_man_page_at_the_definition(self):
        self.assertFails(HEADER, DEFINITION, "MatFooSetSize has no man page at its definition")

    def test_man_page_in_the_header_only(self):
        self.assertFails(HEADER.replace("/* Sets the foo size of A */\n", PAGE), DEFINITION, "holds a man page")

    def test_man_page_before_a_declaration(self):
        self.assertFails(HEADER, PAGE + "PetscErrorCode MatFooSetSize(Mat A, PetscInt n);\n", "stands before no function definition")

    def test_argument_not_described(self):
        self.assertFails(HEADER, PAGE.replace("+ A - the matrix\n- n - the size", ". A - the matrix") + DEFINITION,
                         "does not describe its argument n")

    def test_argument_that_is_not_one(self):
        self.assertFails(HEADER, PAGE.replace("- n - the size", ". n - the size\n- m - no such") + DEFINITION,
                         "describes m, which is not an argument")

    def test_arguments_differ_from_the_header(self):
        self.assertFails(HEADER.replace("PetscInt n)", "PetscInt size)"), PAGE + DEFINITION, "differ from its declaration")

    def test_not_public(self):
        self.assertFails(HEADER, PAGE + DEFINITION + PAGE.replace("MatFooSetSize", "MatFooHidden") + DEFINITION.replace("MatFooSetSize", "MatFooHidden"),
                         "which the header does not declare PETSC_EXTERN")

    def test_no_level(self):
        self.assertFails(HEADER, PAGE.replace("  Level: intermediate\n", "") + DEFINITION, "has no Level")

    def test_no_collectivity(self):
        self.assertFails(HEADER, PAGE.replace("  Logically Collective\n", "") + DEFINITION, "collective")

    def test_declaration_without_comment(self):
        self.assertFails(HEADER.replace("/* Sets the foo size of A */\n", ""), PAGE + DEFINITION, "has no one-line comment")


if __name__ == "__main__":
    unittest.main()
