#!/usr/bin/env python3
"""hdc_dataset.py - synthetic ISOLET-shaped data sets for the HDC programs of run.sh.

The public HD-Classification and HD-Clustering programs read ISOLET (617 features, 26
classes) from ../dataset/*.bin, whose training halves are not in their repositories'
stored history. This writes data of the same shapes and file formats: 26 class centres,
and each sample a centre plus noise, from a fixed seed (the same bytes on every run).

  classification DIR: isolet_nq_{train,test}{X,Y}.bin, X as float32 with the element
      count stored first as a float32 (the program reads the count as the element type),
      Y as int32 with an int32 count; 6238 training and 1559 test rows of 624 floats
      (617 features, zero padding to a multiple of 8).
  clustering DIR: isolet_train_train{X,Y}.bin, int32 values with an int32 count; 6238
      rows of 624 (617 quantized features, zero padding).
"""
import random
import struct
import sys
from pathlib import Path

FEATURES, PADDED, CLASSES = 617, 624, 26


def samples(rng, count, centres, scale, quantize):
    rows, labels = [], []
    for i in range(count):
        label = (i * 7 + rng.randrange(CLASSES)) % CLASSES
        centre = centres[label]
        row = [c + rng.gauss(0.0, scale) for c in centre]
        if quantize:
            row = [max(0, min(15, int(round(v)))) for v in row]
        rows.extend(row + [0] * (PADDED - FEATURES))
        labels.append(label)
    return rows, labels


def write(path, code, values, count_code):
    with open(path, "wb") as f:
        f.write(struct.pack("<" + count_code, len(values)))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("classification", "clustering"):
        sys.exit("usage: hdc_dataset.py classification|clustering DIR")
    kind, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261206)
    if kind == "classification":
        centres = [[rng.uniform(-1.0, 1.0) for _ in range(FEATURES)] for _ in range(CLASSES)]
        for name, count in (("train", 6238), ("test", 1559)):
            rows, labels = samples(rng, count, centres, 2.5, quantize=False)
            write(out / ("isolet_nq_%sX.bin" % name), "f", rows, "f")
            write(out / ("isolet_nq_%sY.bin" % name), "i", labels, "i")
    else:
        centres = [[rng.uniform(2.0, 13.0) for _ in range(FEATURES)] for _ in range(CLASSES)]
        rows, labels = samples(rng, 6238, centres, 2.0, quantize=True)
        write(out / "isolet_train_trainX.bin", "i", rows, "i")
        write(out / "isolet_train_trainY.bin", "i", labels, "i")


if __name__ == "__main__":
    main()
