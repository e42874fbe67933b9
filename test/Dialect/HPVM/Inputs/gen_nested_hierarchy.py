"""Writes a chain of N nested internal nodes (@n<i> creates @n<i-1>, @n0 a
leaf) launched by a host function, or with --cycle a cycle of N internal
nodes (@n<i> creates @n<i+1 mod N>)."""
import sys

n = int(sys.argv[1])
cycle = "--cycle" in sys.argv
out = ["hpvm.leaf @leaf() {\n  hpvm.return\n}"]
for i in range(n):
    child = f"n{(i + 1) % n}" if cycle else ("leaf" if i == 0 else f"n{i - 1}")
    out.append(f"hpvm.internal @n{i}() {{\n  %c = hpvm.create_node @{child} : !hpvm.node\n}}")
if not cycle:
    out.append(f"func.func @host() {{\n  %g = hpvm.launch @n{n - 1}() : () -> !hpvm.graph\n"
               "  hpvm.wait %g\n  return\n}")
print("\n".join(out))
