#!/usr/bin/env python3
"""Lists every diagnostic of lib/ that no test triggers.

A diagnostic site is a call of emitError / emitOpError / emitWarning / emitOptionalError, or
of a helper that words a diagnostic for its callers (MESSAGE_HELPERS). Its text is the string
literals of the statement (adjacent literals joined, split at formatv placeholders); the longest of them is its distinctive
part. A site counts as tested when a line of a test under test/ that checks output holds the
first WINDOW characters of that part (all of it when shorter), or of the opening literal: tests
often check a message only up to a value it prints. The lines that check output are FileCheck's
positive directives (CHECK, -NEXT, -SAME, -DAG, -LABEL, -COUNT-n, under every prefix the file
names with --check-prefix / --check-prefixes) and the expected-error / -warning / -remark /
-note annotations of --verify-diagnostics tests; a message that appears only in a test's input,
in a comment or in a CHECK-NOT is not tested.

Sites whose text is not a literal (a helper forwarding its caller's message) and sites that
no input can reach are listed in ALLOWLIST with the reason. The script exits 1 and prints
each untested site, so `make check` (test/Diagnostics/all-tested.test) fails until a test
triggers it.

usage: check-diagnostics.py [SOURCE_ROOT]
"""
import ast
import os
import re
import sys

# Calls that emit a diagnostic whose message is the rest of the statement.
EMITTERS = ("emitError", "emitOpError", "emitWarning", "emitOptionalError")

# Helpers (per file) that emit a diagnostic from the literal their callers pass.
MESSAGE_HELPERS = {
    "ConvertHPVMToCPU.cpp": ("refuse",),
    "GridVariants.cpp": ("refused",),
    "HPVMTensorOps.cpp": ("shapeError",),
    "RaiseHPVMC.cpp": ("fail",),
    "EvaluateGraph.cpp": ("notConstant",),
    "ApplyKnobs.cpp": ("error",),
}

# A test that checks this many characters of a message checks the message.
WINDOW = 40

# (file, distinctive text) -> why no test needs to trigger it. Keep it short: every entry
# is a diagnostic a user cannot see, or one whose words come from its callers.
ALLOWLIST = {
    ("ExternalizeConstants.cpp", "<no literal>"):
        "ParameterArchive::open words the message; each of its messages is tested in "
        "hpvm-externalize-constants-invalid.test",
    ("ExternalizeConstants.cpp", "': the module has a symbol of that name"):
        "the new name is unique in the module (a tag and a counter): renaming cannot fail",
    # Emitters handed to a callee that words the message: the callee's sites are checked.
    ("HPVMAttrs.cpp", "<no literal>"):
        "the emitter given to ErrorBudgetAttr::getChecked; verify() words the message",
    ("ApplyKnobs.cpp", "<no literal>"):
        "KnobConfiguration::error prefixes the entry's path to its callers' messages; "
        "each caller is a site of its own",
    ("HPVMTensorOps.cpp", "' op"):
        "shapeError prefixes its callers' messages; each caller is a site of its own",
    # Shape inference also runs from C++ builders (passes), where no ODS constraint has
    # run yet; from text, the ODS attribute and type constraints reject these first.
    ("HPVMTensorOps.cpp", "to be a ranked tensor, found"):
        "operands are declared as ranked tensors: the parser rejects others first",
    ("HPVMTensorOps.cpp", "expects 'padding' and 'strides' to have 2 integers (height, width)"):
        "the attributes are declared with exactly 2 elements: ODS rejects others first",
    ("HPVMTensorOps.cpp", "expects 'padding_end' to have 2 integers (height, width)"):
        "the attribute is declared with exactly 2 elements: ODS rejects others first",
    ("HPVMTensorOps.cpp", "expects 'window' to have 2 integers (height, width)"):
        "the attribute is declared with exactly 2 elements: ODS rejects others first",
    ("HPVMTensorOps.cpp", "expects groups > 0, found"):
        "the attribute is declared positive: ODS rejects 0 first",
    # Defensive checks behind earlier ones: the input that would reach them is rejected
    # first, so no test can trigger them.
    ("HPVMGraphOps.cpp", "to be a child created by 'hpvm.create_node' in the same internal node"):
        "an internal node's verifier rejects any other producer of a node handle (block "
        "arguments, other ops) before the edge and bind verifiers run",
    ("LowerHostOps.cpp", "expects a graph handle produced by 'hpvm.launch' in the same function"):
        "convert-hpvm-to-cpu's checkSupported refuses such a wait first",
    ("LowerHostOps.cpp", "has a graph handle used by something other than 'hpvm.wait'; "
                         "the CPU backend needs the wait in the same function"):
        "convert-hpvm-to-cpu's checkSupported refuses such a launch first",
    ("NodeLowering.cpp", "has a cyclic child graph"):
        "the internal node verifier rejects cyclic child graphs before any pass runs",
    # Failures of LLVM's code generators on modules the lowering made: internal errors
    # with no input known to reach them.
    ("EmbedKernels.cpp", "could not lower the kernels for"):
        "the lowering's conversions are partial: what they cannot lower is named by the "
        "check after them ('cannot be lowered for ... kernels')",
    ("EmbedKernels.cpp", "could not compile the kernels to PTX"):
        "NVVM serialization of a module convert-gpu-to-nvvm accepted; no input reaches it",
    ("SerializeSPIRV.cpp", "LLVM's SPIR-V backend is missing:"):
        "the LLVM 22 packages scripts/bootstrap.sh installs have the SPIR-V target; a broken install only",
    ("SerializeSPIRV.cpp", "could not translate the OpenCL kernels to LLVM IR"):
        "the module is entirely in the llvm dialect after the lowering, which translates",
    ("SerializeSPIRV.cpp", "LLVM's SPIR-V backend failed on the OpenCL kernels:"):
        "the backend's child process reports what failed (no pipe or fork, no target "
        "machine, no object emission, a short binary, a crash); the target is found and "
        "emits objects, so no input reaches it",
    ("SerializeSPIRV.cpp", "to a block in a way the address spaces cannot follow"):
        "blocks of llvm.func bodies are entered only by LLVM branches, which are "
        "BranchOpInterface ops",
    ("TranslateToDOT.cpp", "expected a builtin.module"):
        "the translation parses its input as a builtin.module; nothing else reaches it",
    ("TranslateToLLVMIR.cpp", "failed to translate the lowered program to LLVM IR (see the "
                              "errors above)"):
        "the pipeline before it leaves only llvm-dialect ops, which always translate; a "
        "pipeline failure is reported by the pipeline",
}

STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def statement_at(text, start):
    """The text from start to the end of its C++ statement (a ';' outside parentheses,
    brackets and string or character literals)."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            quote = c
            i += 1
            while i < len(text) and text[i] != quote:
                i += 2 if text[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return text[start:i]
        elif c == ";" and depth == 0:
            return text[start:i]
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = end if end >= 0 else len(text)
            continue
        i += 1
    return text[start:]


def literals(statement):
    """The statement's string literals, adjacent ones joined as C++ joins them."""
    parts, last_end = [], None
    for match in STRING.finditer(statement):
        value = ast.literal_eval('"' + match.group(1) + '"')
        between = statement[last_end:match.start()] if last_end is not None else None
        if between is not None and re.fullmatch(r"(\s|//[^\n]*\n)*", between):
            parts[-1] += value
        else:
            parts.append(value)
        last_end = match.end()
    return parts


def sites(source_root):
    """(file name, line, distinctive text) of every diagnostic site under lib/."""
    for directory, _, files in os.walk(os.path.join(source_root, "lib")):
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(directory, name)
            text = open(path, encoding="utf-8").read()
            names = EMITTERS + MESSAGE_HELPERS.get(name, ())
            call = re.compile(r"(?<![\w.])(?:[\w>.-]*(?:\.|->))?(%s)\s*\(" % "|".join(names))
            for match in call.finditer(text):
                line_start = text.rfind("\n", 0, match.start()) + 1
                line = text[line_start:match.start()]
                if line.lstrip().startswith(("//", "///", "*")):
                    continue
                # Definitions of the helpers themselves ("auto refuse = [&](...)").
                if re.search(r"auto\s+%s\s*=\s*$" % match.group(1), line) or \
                        re.match(r"\s*static\s", line):
                    continue
                # formatv placeholders ({0}) stand for values, as << does.
                parts = [piece.strip()
                         for part in literals(statement_at(text, match.start()))
                         for piece in re.split(r"\{\d+\}", part)]
                parts = [p for p in parts if p]
                key = max(parts, key=len) if parts else "<no literal>"
                # Tests check messages from their start: the opening literal, when it says
                # enough, identifies the message as well.
                opening = parts[0] if parts and len(parts[0]) >= 20 else key
                yield name, text.count("\n", 0, match.start()) + 1, key, opening


def tested(key, corpus):
    """Whether a checked line contains the key's first WINDOW characters (all of a shorter
    key). A prefix, not any window: sibling messages often share their endings."""
    key = key.lstrip("'\":,; ")
    return key[:WINDOW] in corpus


PREFIX_OPTION = re.compile(r"--?check-prefix(?:es)?[= ]([\w,-]+)")
VERIFY_ANNOTATION = re.compile(r"expected-(?:error|warning|remark|note)\b[^{\n]*\{\{(.*?)\}\}")


def checked_lines(text):
    """The parts of a test file that check output: the text after each positive FileCheck
    directive of the file's prefixes, and the message of each -verify-diagnostics
    annotation."""
    prefixes = {"CHECK"}
    for match in PREFIX_OPTION.finditer(text):
        prefixes.update(p for p in match.group(1).split(",") if p)
    directive = re.compile(
        r"(?<![\w-])(?:%s)(?:-NEXT|-SAME|-DAG|-LABEL|-COUNT-\d+)?:(.*)"
        % "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True)))
    for line in text.splitlines():
        match = directive.search(line)
        if match:
            yield match.group(1)
        for annotation in VERIFY_ANNOTATION.finditer(line):
            yield annotation.group(1)


def test_corpus(source_root):
    """The checked lines of every test under test/, one per line."""
    texts = []
    for directory, _, files in os.walk(os.path.join(source_root, "test")):
        if "Output" in directory.split(os.sep):
            continue
        for name in files:
            try:
                text = open(os.path.join(directory, name), encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            texts.extend(checked_lines(text))
    return "\n".join(texts)


def main():
    source_root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    corpus = test_corpus(source_root)
    count, missing, allowed = 0, [], set()
    for name, line, key, opening in sites(source_root):
        count += 1
        if (name, key) in ALLOWLIST:
            allowed.add((name, key))
            continue
        if key == "<no literal>" or not (tested(key, corpus) or tested(opening, corpus)):
            missing.append("%s:%d: %s" % (name, line, key))
    stale = sorted(set(ALLOWLIST) - allowed)
    for name, key in stale:
        missing.append("%s: allowlist entry matches no site: %s" % (name, key))
    for entry in missing:
        print("untested diagnostic: " + entry)
    print("check-diagnostics: %d sites, %d allowlisted, %d without a test"
          % (count, len(allowed), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
