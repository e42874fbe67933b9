"""An ONNX model imported by hpvm, compiled, run and checked against onnxruntime.

    python python/examples/lenet_onnx.py [OUT_DIR]

Builds the LeNet-like CNN of hpvm.onnx.examples (batch 16), saves it as OUT_DIR/lenet.onnx,
imports it (one leaf per ONNX node), writes the graph's MLIR, compiles it with tensor-node
fusion, runs it on random images and compares the class probabilities with onnxruntime's;
then times both (best of a few rounds; make bench has the careful comparison).
"""

import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

import hpvm
import hpvm.onnx
from hpvm.onnx.examples import lenet


def best_time(run, rounds=5, iters=20):
    run()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(iters):
            run()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def main(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    batch = 16
    path = out_dir / "lenet.onnx"
    onnx.save(lenet(batch=batch), str(path))
    graph = hpvm.onnx.load(str(path))
    text = graph.verify()
    (out_dir / "lenet.mlir").write_text(text)
    print(f"imported {path}: {text.count('hpvm.leaf @')} leaves, verified; MLIR in "
          f"{out_dir / 'lenet.mlir'}")
    net = hpvm.compile(graph, fuse=True)
    images = np.random.default_rng(1).standard_normal((batch, 1, 28, 28)).astype(np.float32)
    probabilities = net(input=images)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"input": images})[0]
    difference = float(np.abs(probabilities - expected).max())
    agree = int((probabilities.argmax(1) == expected.argmax(1)).sum())
    ok = difference < 1e-5 and agree == batch
    print(f"hpvm vs onnxruntime: max |difference| {difference:.2e}, same class for "
          f"{agree}/{batch} images: {'OK' if ok else 'MISMATCH'}")
    ours = best_time(lambda: net(input=images))
    theirs = best_time(lambda: session.run(None, {"input": images}))
    print(f"throughput: hpvm {batch / ours:.0f} images/s, onnxruntime {batch / theirs:.0f} "
          f"images/s (same process; benchmarks/tensor/run.sh measures them apart)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("demo")))
