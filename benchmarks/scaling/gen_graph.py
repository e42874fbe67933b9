#!/usr/bin/env python3
"""gen_graph.py SHAPE N: writes an HPVM program with N distinct leaves to stdout.

SHAPE is `wide` (N independent 1-D leaves under one internal node, each bound to
the root's buffer: siblings without edges adding into one buffer race when they run at once, so
only a run on one thread gives a fixed result), `chain` (N 0-D leaves in a chain of one-to-one edges) or
`nested` (N internal nodes each creating the next, around one leaf: a hierarchy
N + 1 levels deep).
A host function launches the root, so the whole CPU pipeline has work to do.
"""
import sys


def wide(n):
    out = []
    for i in range(n):
        out.append(f"""hpvm.leaf @leaf{i}(%a: memref<?xf32>) {{
  %i = hpvm.instance_id x : index
  %v = memref.load %a[%i] : memref<?xf32>
  %c = arith.constant {i}.0 : f32
  %w = arith.addf %v, %c : f32
  memref.store %w, %a[%i] : memref<?xf32>
  hpvm.return
}}""")
    body = []
    for i in range(n):
        body.append(f"  %n{i} = hpvm.create_node @leaf{i} [%n] : !hpvm.node")
        body.append(f"  hpvm.bind_in %a -> %n{i}[0] : memref<?xf32>")
    out.append("hpvm.internal @root(%a: memref<?xf32>, %n: index) {\n" + "\n".join(body) + "\n}")
    out.append("""func.func @run(%a: memref<?xf32>, %n: index) {
  %g = hpvm.launch @root(%a, %n) : (memref<?xf32>, index) -> !hpvm.graph
  hpvm.wait %g
  return
}""")
    return "\n\n".join(out)


def chain(n):
    out = []
    for i in range(n):
        out.append(f"""hpvm.leaf @leaf{i}(%x: f32) -> (f32) {{
  %c = arith.constant {i}.0 : f32
  %y = arith.addf %x, %c : f32
  hpvm.return %y : f32
}}""")
    body = []
    for i in range(n):
        body.append(f"  %n{i} = hpvm.create_node @leaf{i} : !hpvm.node")
    body.append("  hpvm.bind_in %x -> %n0[0] : f32")
    for i in range(1, n):
        body.append(f"  hpvm.edge %n{i-1}[0] -> %n{i}[0] one_to_one")
    body.append(f"  hpvm.bind_out %n{n-1}[0] -> 0")
    out.append("hpvm.internal @root(%x: f32) -> (f32) {\n" + "\n".join(body) + "\n}")
    out.append("""func.func @run(%x: f32) -> f32 {
  %g = hpvm.launch @root(%x) : (f32) -> !hpvm.graph
  %r = hpvm.wait %g : f32
  return %r : f32
}""")
    return "\n\n".join(out)


def nested(n):
    out = ["""hpvm.leaf @leaf() {
  hpvm.return
}"""]
    for i in range(n):
        child = "leaf" if i == 0 else f"level{i - 1}"
        out.append(f"hpvm.internal @level{i}() {{\n  %c = hpvm.create_node @{child} : !hpvm.node\n}}")
    out.append(f"""func.func @run() {{
  %g = hpvm.launch @level{n - 1}() : () -> !hpvm.graph
  hpvm.wait %g
  return
}}""")
    return "\n\n".join(out)


if __name__ == "__main__":
    shapes = {"wide": wide, "chain": chain, "nested": nested}
    if len(sys.argv) != 3 or sys.argv[1] not in shapes:
        sys.exit("usage: gen_graph.py wide|chain|nested N")
    print(shapes[sys.argv[1]](int(sys.argv[2])))
