#!/usr/bin/env python3
"""check_api_coverage.py: fails when tests/fuzz/fuzz_api.c does not call every public function of
include/attnviz.h, so that the whole-API fuzz target stays whole as the header grows. Run by
`make test-fuzz` (standard library only):

    python3 tests/fuzz/check_api_coverage.py [HEADER] [HARNESS]

A public function is a declaration in the header outside comments (a line that starts with a return type
and names av_something followed by "("); a call is that name followed by "(" in the harness outside
comments and string literals."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
header = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "include", "attnviz.h")
harness = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "fuzz", "fuzz_api.c")


def code_only(text):
    """The C text without comments and string or character literals (kept as blanks)."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: " " if m.group(0).startswith("/") else '""', text, flags=re.S)


decl = re.compile(r"^(?!typedef|#|\s)[A-Za-z_][\w \t]*?[\s*](av_\w+)\s*\(", re.M)
public = sorted(set(decl.findall(code_only(open(header, encoding="utf-8").read()))))
if len(public) < 10:
    sys.exit("check_api_coverage: found only %d functions in %s: the declaration pattern is broken" % (len(public), header))
calls = set(re.findall(r"\b(av_\w+)\s*\(", code_only(open(harness, encoding="utf-8").read())))
missing = [f for f in public if f not in calls]
if missing:
    print("check_api_coverage: %s does not call %d of the %d public functions of %s:" % (
        os.path.relpath(harness), len(missing), len(public), os.path.relpath(header)))
    for f in missing:
        print("  " + f)
    sys.exit(1)
print("check_api_coverage: %s calls all %d public functions of %s" % (
    os.path.relpath(harness), len(public), os.path.relpath(header)))
