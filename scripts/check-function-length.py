#!/usr/bin/env python3
"""Lists the functions of the project's own sources longer than the limit (150 lines).

A long function is where a new engineer gets lost; the limit keeps each step of the compiler
and the runtime readable on one screen or two. Counted: C and C++ function bodies (free
functions, member functions defined in or out of their class, static helpers) in lib/,
tools/, include/ and runtime/src and runtime/include, from the line of the opening brace to
the closing one. Comments and string literals are ignored when matching braces; a lambda or
a local block counts as part of its function. Test inputs and benchmarks are not counted.

The script prints each function over the limit (path:line, name, length) and exits 1 if there
is one, so that `make check` (test/House/function-length.test) fails until it is split.

usage: check-function-length.py [SOURCE_ROOT] [--limit N]
"""
import os
import re
import sys

from length_limit import arguments

DIRS = ("lib", "tools", "include", "runtime/src", "runtime/include")
SUFFIXES = (".c", ".cpp", ".h", ".inc")
LIMIT = 150

CONTAINER = re.compile(
    r"(\bnamespace\b[^{]*|\bextern\s+\"C\"\s*|\b(class|struct|union|enum)\b[^(){};]*)$")
FUNCTION_TAIL = re.compile(
    r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?$")


def strip(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
                out.append(re.sub(r"[^\n]", " ", text[i:j]))
                i = j
            else:
                out.append(c)
                i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            # A preprocessor line (with its continuations): no braces of the code there.
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path, limit):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    found = []
    stack = []  # per open brace: ("container" | "function" | "block", line, name)
    last = 0  # where the statement before the current brace starts
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = " ".join(text[last:i].split())
            inside_function = any(kind == "function" for kind, _, _ in stack)
            if inside_function:
                kind = "block"
            elif CONTAINER.search(head):
                kind = "container"
            elif FUNCTION_TAIL.search(head) or re.search(r"\)\s*:\s*.*\)$", head):
                kind = "function"  # a constructor with an initializer list ends in ')' too
            else:
                kind = "block"  # an initializer, an enum body
            name = ""
            if kind == "function":
                m = re.search(r"([\w:~]+(?:operator\S*)?)\s*\(", head)
                name = m.group(1) if m else head[:60]
            stack.append((kind, line, name))
            last = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function" and line - start + 1 > limit:
                    found.append((path, start, name, line - start + 1))
            last = i + 1
        elif c == ";":
            last = i + 1
    return found


def main(argv):
    root, limit = arguments(argv, LIMIT)
    found = []
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    found += long_functions(os.path.join(base, f), limit)
    for path, start, name, length in sorted(found, key=lambda x: -x[3]):
        print(f"{os.path.relpath(path, root)}:{start}: {name}: {length} lines (limit {limit})")
    if found:
        print(f"{len(found)} function(s) over {limit} lines: split them into named steps")
        return 1
    print(f"no function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
