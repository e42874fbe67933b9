#!/usr/bin/env python3
"""inputs.py - deterministic inputs for the release's programs, in each program's own format.

Usage (each writes its files into DIR, fixed seed, pure Python):
  inputs.py sgemm   DIR M N K      A (M x K), B (K x N), B^T (N x K): parboil's column-major text
                                   ("rows cols" then the values, column by column)
  inputs.py stencil DIR NX NY NZ   NX*NY*NZ raw float32 (x fastest), no header
  inputs.py spmv    DIR DIM        a symmetric DIM x DIM Matrix Market file (lower triangle,
                                   "coordinate real symmetric"), and DIM raw float32 (x)
  inputs.py lbm     DIR            the obstacle file of the 120 x 120 x 150 grid (the size is
                                   fixed by the release's layout_config.h): one character per
                                   cell, '.' fluid, anything else obstacle, a newline after
                                   each row and after each plane
  inputs.py cava    DIR ROWS COLS  a raw image: int32 rows, cols, 3, then ROWS*COLS*3 bytes (HWC)

Values are float32 numbers printed with 9 significant digits where a format is text, so the
programs read back exactly the numbers generated here.
"""
import os
import random
import struct
import sys


def f32(x):
    """x rounded to the nearest float32."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def text(x):
    return "%.9g" % x


def sgemm(out, m, n, k):
    rng = random.Random(1001)
    a = [[f32(rng.uniform(-1.0, 1.0)) for _ in range(k)] for _ in range(m)]  # a[i][p]
    b = [[f32(rng.uniform(-1.0, 1.0)) for _ in range(n)] for _ in range(k)]  # b[p][j]

    def write(name, rows, cols, at):
        # readColMajorMatrixFile: "rows cols" then rows*cols values, column-major
        with open(os.path.join(out, name), "w") as f:
            f.write("%d %d\n" % (rows, cols))
            for c in range(cols):
                f.write(" ".join(text(at(r, c)) for r in range(rows)))
                f.write("\n")

    write("matrix1.txt", m, k, lambda r, c: a[r][c])
    write("matrix2.txt", k, n, lambda r, c: b[r][c])
    write("matrix2t.txt", n, k, lambda r, c: b[c][r])


def stencil(out, nx, ny, nz):
    rng = random.Random(2002)
    vals = [f32(rng.random()) for _ in range(nx * ny * nz)]
    with open(os.path.join(out, "input.bin"), "wb") as f:
        f.write(struct.pack("<%df" % len(vals), *vals))


def spmv(out, dim):
    # coo_to_jds (the release's convert_dataset.c) needs, for a result without races:
    #  * every row with an entry (an empty row maps to row 0 and writes dst[0] too),
    #  * DIM a multiple of the warp size 32 (padded rows also map to row 0),
    #  * a last row with two entries or more (its row count is taken from the last entry).
    assert dim % 32 == 0 and dim >= 32
    rng = random.Random(3003)
    entries = []
    for r in range(dim):
        entries.append((r, r, f32(rng.uniform(1.0, 2.0))))
        count = rng.randint(0, 12) if r > 0 else 0
        if r == dim - 1:
            count = max(count, 1)
        for c in sorted(rng.sample(range(r), min(count, r))):
            entries.append((r, c, f32(rng.uniform(-1.0, 1.0))))
    with open(os.path.join(out, "matrix.mtx"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write("%d %d %d\n" % (dim, dim, len(entries)))
        for r, c, v in entries:
            f.write("%d %d %s\n" % (r + 1, c + 1, text(v)))
    x = [f32(rng.random()) for _ in range(dim)]
    with open(os.path.join(out, "vector.bin"), "wb") as f:
        f.write(struct.pack("<%df" % dim, *x))


def lbm(out):
    sx, sy, sz = 120, 120, 150  # layout_config.h
    rng = random.Random(4004)
    grid = bytearray(b"." * (sx * sy * sz))  # x fastest
    # a few boxes and balls as obstacles, and scattered single cells
    for _ in range(12):
        kind = rng.choice("bs")
        cx, cy, cz = rng.randrange(10, sx - 10), rng.randrange(10, sy - 10), rng.randrange(10, sz - 10)
        r = rng.randint(3, 9)
        for z in range(cz - r, cz + r + 1):
            for y in range(cy - r, cy + r + 1):
                for x in range(cx - r, cx + r + 1):
                    if kind == "b" or (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 <= r * r:
                        grid[x + sx * (y + sy * z)] = ord("#")
    for _ in range(2000):
        grid[rng.randrange(sx * sy * sz)] = ord("#")
    with open(os.path.join(out, "obstacles.of"), "wb") as f:
        for z in range(sz):
            for y in range(sy):
                start = sx * (y + sy * z)
                f.write(grid[start:start + sx] + b"\n")
            f.write(b"\n")


def cava(out, rows, cols):
    rng = random.Random(5005)
    pix = bytearray()
    for y in range(rows):
        for x in range(cols):
            for c in range(3):
                base = (x * (3 + c) + y * (5 - c)) * 255 // (rows + cols) // 2
                if (x // 8 + y // 8) % 2:
                    base += 60
                # dark (0..70): brighter raw images drive gamut_map's output above 1, and
                # tone_map's conversion of 255 * that to uint8_t is undefined behaviour
                pix.append(max(0, min(255, (base + rng.randint(-20, 20)) // 10)))
    with open(os.path.join(out, "raw.bin"), "wb") as f:
        f.write(struct.pack("<3i", rows, cols, 3))
        f.write(bytes(pix))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    prog, out, sizes = argv[1], argv[2], [int(a) for a in argv[3:]]
    os.makedirs(out, exist_ok=True)
    gens = {"sgemm": (sgemm, 3), "stencil": (stencil, 3), "spmv": (spmv, 1), "lbm": (lbm, 0),
            "cava": (cava, 2)}
    if prog not in gens or len(sizes) != gens[prog][1]:
        sys.exit(__doc__)
    gens[prog][0](out, *sizes)


if __name__ == "__main__":
    main(sys.argv)
