#!/usr/bin/env python3
"""Fails when the files of a lowering call each other in a cycle.

The node lowering of the CPU backend (lib/Conversion/HPVMToCPU) is one class,
CPULowering, whose methods are defined across several files, one concern each. A file
"calls" another when it calls a CPULowering method defined there. The calls must go one
way (docs/Rationale.md 8.3): CPULowering.cpp, then InstanceFunctions.cpp, then the ways
to run a node (barriers, collapsed grids, kernel sites, task graphs, lanes), then
LowerNodes.cpp, then the streaming pipelines, then the pass. Files that do not include the
class's header (CPULowering.h) are layered by their types instead: they see only the
public headers (the code-generation helper, the host-op patterns), so they cannot call
into the class; the script lists them apart ("by types") and leaves them out of the
graph. Prints the layers it found and exits 0, or prints each cycle and exits 1.

usage: check-call-layers.py [DIRECTORY] [CLASS]
"""
import os
import re
import sys

from layer_graph import find_cycles, print_layers


def method_definitions(sources, cls):
    """Maps each method of `cls` to the file that defines it."""
    defined = {}
    pattern = re.compile(r"\b" + cls + r"::(\w+)\s*\(")
    for name, text in sources.items():
        for match in pattern.finditer(text):
            defined.setdefault(match.group(1), name)
    return defined


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def call_graph(sources, defined):
    edges = {name: set() for name in sources}
    for name, text in sources.items():
        for method, owner in defined.items():
            if owner != name and re.search(r"\b" + method + r"\s*\(", text):
                edges[name].add(owner)
    return edges


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    directory = argv[1] if len(argv) > 1 else os.path.join(root, "lib", "Conversion",
                                                          "HPVMToCPU")
    cls = argv[2] if len(argv) > 2 else "CPULowering"
    sources, by_types = {}, []
    header = re.compile(r'#include\s+"' + cls + r'\.h"')
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".cpp"):
            with open(os.path.join(directory, entry), encoding="utf-8") as handle:
                text = handle.read()
            if os.path.exists(os.path.join(directory, cls + ".h")) and \
                    not header.search(text):
                by_types.append(entry[:-4])
                continue
            sources[entry[:-4]] = strip_comments(text)
    if not sources:
        print(f"check-call-layers: no .cpp files in {directory}")
        return 1
    if by_types:
        print(f"by types: {', '.join(by_types)}")
    edges = call_graph(sources, method_definitions(sources, cls))
    cycles = find_cycles(edges)
    for cycle in cycles:
        calls = "; ".join(f"{a} -> {', '.join(sorted(edges[a] & set(cycle)))}"
                          for a in cycle)
        print(f"call cycle between {', '.join(cycle)}: {calls}")
    if cycles:
        return 1
    print_layers(edges)
    print(f"check-call-layers: {len(sources)} files of {cls}, no call cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
