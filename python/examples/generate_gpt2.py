"""Greedy generation with a key/value cache: GPT-2 (or any decoder exported the same way) run
token by token by hpvm and by onnxruntime, which must choose the same tokens.

    python python/examples/generate_gpt2.py [--model build/zoo-work/gpt2] [--tokens 32]

The model is two ONNX files, MODEL_prefill.onnx (input_ids [batch, sequence] -> logits,
present.0.key, present.0.value, ...) and MODEL_decode.onnx (input_ids and past.0.key,
past.0.value, ... [batch, heads, past_sequence, head size] -> the same), as
benchmarks/model-zoo/generation_zoo.py exports them from transformers' GPT-2 and Llama
definitions (`bash benchmarks/model-zoo/run.sh --generation`; random weights). A tensor
graph has static shapes and the cache grows by a token a step, so hpvm runs each file
through hpvm.onnx.compile_dynamic: a graph compiled once per input shape (the first loop
compiles one per step; the compile cache on disk keeps them for the next run).
"""

import argparse
import time

import numpy as np
import onnxruntime

import hpvm.onnx


def greedy(prefill, decode, prompt, tokens):
    """The tokens a greedy loop chooses: prefill(ids) and decode(ids, *cache) return
    (logits, *cache)."""
    out = prefill(np.array([prompt], dtype=np.int64))
    chosen = []
    while True:
        chosen.append(int(np.argmax(out[0][0, -1])))
        if len(chosen) == tokens:
            return chosen
        out = decode(np.array([[chosen[-1]]], dtype=np.int64), *out[1:])


def onnxruntime_step(path):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return lambda *arrays: session.run(None, dict(zip(names, arrays)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="build/zoo-work/gpt2",
                        help="MODEL of MODEL_prefill.onnx and MODEL_decode.onnx")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--prompt", default="5,17,42,7", help="token ids")
    args = parser.parse_args()
    prompt = [int(t) for t in args.prompt.split(",")]
    prefill_path, decode_path = (f"{args.model}_{kind}.onnx" for kind in ("prefill", "decode"))

    start = time.perf_counter()
    expected = greedy(onnxruntime_step(prefill_path), onnxruntime_step(decode_path), prompt,
                      args.tokens)
    print(f"onnxruntime: {expected} ({time.perf_counter() - start:.1f} s)")

    prefill = hpvm.onnx.compile_dynamic(prefill_path, fuse=True)
    decode = hpvm.onnx.compile_dynamic(decode_path, fuse=True)
    for run in ("first run", "second run"):
        start = time.perf_counter()
        tokens = greedy(prefill, decode, prompt, args.tokens)
        print(f"hpvm:        {tokens} ({run}: {time.perf_counter() - start:.1f} s, "
              f"{len(decode.compiled)} shapes of the decode graph compiled)")
    print("the same tokens" if tokens == expected else "the tokens DIFFER")
    return 0 if tokens == expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
