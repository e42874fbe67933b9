#!/usr/bin/env python3
"""Fails when the classes of a lowering depend on each other in a cycle.

The node lowering of the CPU backend (lib/Conversion/HPVMToCPU) is a set of classes, one
header each (NodeLowering.h, GridRunner.h, ...): a class can call another only through a
reference it is given, whose type its header includes. The includes of the directory's
own headers are therefore its call graph, and they must go one way (docs/Rationale.md
8.3): the shared state, then the grid runner, then the runners built on it, then the node
lowering, then the pass. A class's unit is its header, the .cpp of the same name and any
other .cpp that defines its members (`GridRunner::` in GridPhases.cpp); a .cpp of no class
(the pass, the host-op patterns) is a unit of its own. Prints the layers it found and exits
0, or prints each cycle with the includes on it and exits 1.

usage: check-call-layers.py [DIRECTORY]
"""
import os
import re
import sys

from layer_graph import find_cycles, print_layers

INCLUDE = re.compile(r'^\s*#\s*include\s+"(\w+)\.h"', re.M)


def units(directory):
    """Maps each unit to the text of its files."""
    entries = sorted(os.listdir(directory))
    headers = [e[:-2] for e in entries if e.endswith(".h")]
    texts = {}
    for entry in entries:
        if not entry.endswith((".h", ".cpp")):
            continue
        with open(os.path.join(directory, entry), encoding="utf-8") as handle:
            text = handle.read()
        stem = entry.rsplit(".", 1)[0]
        if stem not in headers:
            stem = next((h for h in headers if re.search(r"^\S.*\b" + h + r"::\w+\(", text,
                                                         re.M)), stem)
        texts[stem] = texts.get(stem, "") + text
    return texts


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    directory = argv[1] if len(argv) > 1 else os.path.join(root, "lib", "Conversion",
                                                          "HPVMToCPU")
    texts = units(directory)
    if not texts:
        print(f"check-call-layers: no sources in {directory}")
        return 1
    edges = {unit: {h for h in INCLUDE.findall(text) if h in texts and h != unit}
             for unit, text in texts.items()}
    cycles = find_cycles(edges)
    for cycle in cycles:
        includes = "; ".join(f"{a} -> {', '.join(sorted(edges[a] & set(cycle)))}"
                             for a in cycle)
        print(f"include cycle between {', '.join(cycle)}: {includes}")
    if cycles:
        return 1
    print_layers(edges)
    print(f"check-call-layers: {len(texts)} units, no include cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
