#!/usr/bin/env python3
"""Fails when the runtime's C source files depend on each other in a circle.

A file of runtime/src depends on another when it includes it (`#include "..."`) or uses a
function defined there (a call, or the function's address): a module's header and source
(device/kernel_cache.h and .c) count as one file. The dependencies must go one way
(docs/Runtime.md, "Layers"): a circle between two files, or between two folders of
runtime/src (base, device, mem, sched, stream, tensor; the files at the top each count as a
folder of their own), fails. Prints the layers it found and exits 0, or prints each circle,
with the includes and uses on it, and exits 1.

usage: check-runtime-layers.py [DIRECTORY] [--allow FROM:TO]...

--allow FROM:TO leaves out one dependency between two files (module paths such as
tensor/conv_taps:tensor/conv), printed as allowed; one that is no longer there fails, so that
the list only shrinks.
"""
import os
import re
import sys

from layer_graph import find_cycles, print_layers

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "_Alignof", "alignof",
            "_Static_assert", "_Generic", "defined", "__attribute__", "__typeof__",
            "typeof", "do", "else", "case", "goto", "__asm__", "asm"}
SOURCE_ENDINGS = (".c", ".h", ".inc")

HERE = os.path.dirname(os.path.abspath(__file__))


def strip_code(text):
    """The text without comments, and string and character literals kept as empty quotes
    except on #include lines."""
    pattern = re.compile(r'/\*.*?\*/|//[^\n]*|^[ \t]*#[ \t]*include[^\n]*'
                         r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S | re.M)

    def replace(match):
        token = match.group(0)
        if token.startswith("/"):
            return "\n" * token.count("\n") if token.startswith("/*") else ""
        if token.lstrip().startswith("#"):
            return token
        return token[0] * 2
    return pattern.sub(replace, text)


def split_preprocessor(text):
    """(the #include targets, the text without preprocessor lines)."""
    includes, lines, continued = [], [], False
    for line in text.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        if directive:
            match = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if match:
                includes.append(match.group(1))
            lines.append("")
        else:
            lines.append(line)
    return includes, "\n".join(lines)


TOKEN = re.compile(r"[A-Za-z_]\w*|\S")


def scan(code):
    """({name: static?} of the functions defined in `code` (at file scope, with a body), the
    names it uses: every identifier but those declared at file scope (a prototype declares,
    it does not use)."""
    tokens = TOKEN.findall(code)
    found, declared, depth, i, statement_start = {}, set(), 0, 0, 0
    while i < len(tokens):
        token = tokens[i]
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                statement_start = i + 1
        elif token == ";" and depth == 0:
            statement_start = i + 1
        elif (depth == 0 and token not in KEYWORDS and re.match(r"[A-Za-z_]", token)
              and i + 1 < len(tokens) and tokens[i + 1] == "("):
            declared.add(i)
            after = skip_parentheses(tokens, i + 1)
            while after < len(tokens) and tokens[after] == "__attribute__":
                after = skip_parentheses(tokens, after + 1)
            if after < len(tokens) and tokens[after] == "{":
                found[token] = "static" in tokens[statement_start:i]
        i += 1
    used = {token for index, token in enumerate(tokens)
            if index not in declared and re.match(r"[A-Za-z_]", token)}
    return found, used


def skip_parentheses(tokens, start):
    """The index after the parenthesis that closes the one at `start`."""
    level, index = 0, start
    while index < len(tokens):
        level += tokens[index] == "("
        level -= tokens[index] == ")"
        index += 1
        if level == 0:
            break
    return index


def module_of(path):
    """device/kernel_cache.c and device/kernel_cache.h are one module, device/kernel_cache."""
    return os.path.splitext(path)[0]


def folder_of(module):
    return module.split("/")[0]


def read_sources(directory):
    sources = {}
    for root, _, files in os.walk(directory):
        for entry in sorted(files):
            if entry.endswith(SOURCE_ENDINGS):
                path = os.path.join(root, entry)
                with open(path, encoding="utf-8") as handle:
                    sources[os.path.relpath(path, directory).replace(os.sep, "/")] = (
                        strip_code(handle.read()))
    return sources


def dependency_graph(directory):
    """{module: {module it depends on: [reasons]}}."""
    sources = read_sources(directory)
    parsed = {path: split_preprocessor(text) for path, text in sources.items()}
    scanned = {path: scan(code) for path, (_, code) in parsed.items()}
    defined = {path: names for path, (names, _) in scanned.items()}
    public = {}
    for path, names in defined.items():
        for name, is_static in names.items():
            if not is_static or path.endswith(".h"):
                public.setdefault(name, module_of(path))
    edges = {module_of(path): {} for path in sources}
    for path, (includes, code) in parsed.items():
        module = module_of(path)
        for target in includes:
            for candidate in (os.path.normpath(os.path.join(os.path.dirname(path), target)),
                              os.path.normpath(target)):
                candidate = candidate.replace(os.sep, "/")
                if candidate in sources:
                    if module_of(candidate) != module:
                        edges[module].setdefault(module_of(candidate), []).append(
                            f"{path} includes {candidate}")
                    break
        local = {name for name, is_static in defined[path].items() if is_static}
        for name in sorted(scanned[path][1]):
            owner = public.get(name)
            if owner and owner != module and name not in local:
                edges[module].setdefault(owner, []).append(f"{path} uses {name}")
    return edges


def folder_graph(edges):
    folders = {}
    for module, targets in edges.items():
        folders.setdefault(folder_of(module), {})
        for target, reasons in targets.items():
            if folder_of(target) != folder_of(module):
                folders[folder_of(module)].setdefault(folder_of(target), []).extend(reasons)
    return folders


def report_cycles(kind, graph):
    cycles = find_cycles({node: set(targets) for node, targets in graph.items()})
    for cycle in cycles:
        print(f"{kind} circle between {', '.join(cycle)}:")
        for node in cycle:
            for target in sorted(set(graph[node]) & set(cycle)):
                reasons = graph[node][target]
                more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
                print(f"  {node} -> {target}: {reasons[0]}{more}")
    return cycles


def main(argv):
    root = os.path.dirname(HERE)
    args, allowed = [], []
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--allow":
            allowed.append(tuple(next(rest, ":").split(":", 1)))
        else:
            args.append(arg)
    directory = args[0] if args else os.path.join(root, "runtime", "src")
    edges = dependency_graph(directory)
    if not edges:
        print(f"check-runtime-layers: no C sources in {directory}")
        return 1
    gone = []
    for source, target in allowed:
        reasons = edges.get(source, {}).pop(target, None)
        if reasons is None:
            gone.append(f"{source} -> {target}")
        else:
            print(f"allowed: {source} -> {target}: {'; '.join(reasons)}")
    folders = folder_graph(edges)
    cycles = report_cycles("file", edges) + report_cycles("folder", folders)
    for edge in gone:
        print(f"check-runtime-layers: the allowed {edge} is gone: remove its --allow")
    if cycles or gone:
        return 1
    print_layers({folder: set(targets) for folder, targets in folders.items()})
    print(f"check-runtime-layers: {len(edges)} files in {len(folders)} folders, no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
