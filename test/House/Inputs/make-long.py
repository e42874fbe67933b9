"""Writes a C++ file with one member function of exactly 160 lines (braces included) and
short functions around it whose comments, strings and macros hold unbalanced braces."""
import sys

lines = [
    "#define OPEN {",
    "// a comment with a brace {",
    "namespace n {",
    "class Widget {",
    "  int short_inline() const { return 1; }",
    "  int grow(int x);",
    "};",
    "static const char *text = \"}{ not code\";",
    "int Widget::grow(int x) {",
]
body = 160 - 2 - 3
lines.append("  auto f = [&](int y) {")
lines.append("    return y + 1;")
lines.append("  };")
for i in range(body):
    lines.append(f"  x = f(x) + {i}; /* {{ */")
lines.append("}")
lines.append("int short_free(int y) { return y; }")
lines.append("} // namespace n")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
