"""Writes a Python module with one method of exactly 90 lines (a nested function inside it),
a short function whose string holds `def` lines, and an allowed-looking name that is not."""
import sys

lines = [
    "TEXT = '''",
    "def not_code():",
    "    pass",
    "'''",
    "",
    "",
    "def short(y):",
    "    return y",
    "",
    "",
    "class Widget:",
    "    def grow(self, x):",
    "        def inner(y):",
    "            return y + 1",
]
for i in range(90 - 3):
    lines.append(f"        x = inner(x) + {i}  # def {{")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
