#!/usr/bin/env python3
"""Lists the Python functions of the project longer than the limit (80 lines).

The Python side of scripts/check-function-length.py (which checks C and C++ at 150 lines): a
function of the Python package (python/hpvm) or of a benchmark script (benchmarks/) is counted
from its `def` line to its last line, docstring, comments and blank lines included; a function
nested in another counts as part of it, a method on its own (Class.method). Tests are not
counted.

A function longer than the limit that is not split yet would be listed in ALLOWED below (none
is now), and the list only shrinks. An allowed function that grows past its recorded length
is reported like any other; one that is now within the limit, or gone, is noted, so that its
entry can be removed.

The script prints each function over the limit (path:line, name, length) and exits 1 if there
is one, so that `make check` (test/House/function-length.test) fails until it is split.

usage: check-python-function-length.py [SOURCE_ROOT] [--limit N]
"""
import ast
import os
import sys

from length_limit import arguments

DIRS = ("python/hpvm", "benchmarks")
SKIP_DIRS = ("tests", "__pycache__", "build")
LIMIT = 80

# "path:Qualified.name": its length (lines) when it was allowed.
ALLOWED = {}


def functions(tree, prefix=""):
    """(qualified name, first line, length) of each function and method, nested ones not
    apart from their function."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node.lineno, node.end_lineno - node.lineno + 1
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, prefix + node.name + ".")


def sources(root):
    for d in DIRS:
        for base, dirs, files in os.walk(os.path.join(root, d)):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for f in sorted(files):
                if f.endswith(".py"):
                    yield os.path.join(base, f)


def main(argv):
    root, limit = arguments(argv, LIMIT)
    found, notes, seen = [], [], set()
    for path in sources(root):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            try:
                tree = ast.parse(f.read(), filename=rel)
            except SyntaxError as e:
                print(f"{rel}:{e.lineno}: cannot parse: {e.msg}")
                return 1
        for name, line, length in functions(tree):
            seen.add(f"{rel}:{name}")
            allowed = ALLOWED.get(f"{rel}:{name}")
            if length > limit and (allowed is None or length > allowed):
                found.append((rel, line, name, length))
            elif allowed is not None and length <= limit:
                notes.append(f"{rel}:{line}: {name}: {length} lines, within the limit: "
                             "remove it from ALLOWED")
    notes += [f"{key}: no such function: remove it from ALLOWED"
              for key in sorted(set(ALLOWED) - seen)]
    for rel, line, name, length in sorted(found, key=lambda x: -x[3]):
        print(f"{rel}:{line}: {name}: {length} lines (limit {limit})")
    for note in notes:
        print(f"note: {note}")
    if found:
        print(f"{len(found)} Python function(s) over {limit} lines: split them into named steps")
        return 1
    print(f"no Python function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
