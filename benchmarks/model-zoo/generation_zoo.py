"""Generation with a key/value cache: Hugging Face decoders (GPT-2; a Llama-style decoder
with grouped-query attention, rotary positions, RMSNorm and a SiLU MLP) built from configs
(random weights, eval mode, no downloads), exported by torch to ONNX with their past keys and
values as inputs and outputs, and run as a greedy loop by hpvm (hpvm.onnx.compile_dynamic:
one compile per shape of the growing cache) and by onnxruntime. Nothing here is part of
`make check`.

    python generation_zoo.py [--only gpt2,llama] [--tokens 32] [--work DIR]
                             [--time gpt2_small] [--past 127] [--rounds R] [--threads N]

Each model is exported twice (torch.onnx.export, opset 17, dynamo=False): NAME_prefill.onnx
(input_ids [batch, sequence] -> logits, present.0.key, present.0.value, ...) and
NAME_decode.onnx (input_ids, past.0.key, past.0.value, ... [batch, kv heads, past_sequence,
head size] -> the same). Both loops feed a prompt of 4 tokens to the prefill graph, then one
token a step to the decode graph with the cache it returned: the tokens must be the same,
and each step's logits within 1e-4 of onnxruntime's (max |diff| / max |ref|). The prefill
logits are also checked against torch. --time times one decoding step (one token after a
cache of --past tokens) of the models it names, each side in a process of its own (2
warm-up calls, 10 timed, --rounds alternated rounds; min / median / max ms). Exit status 1
when a check fails."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
import warnings

import numpy as np

RTOL = 1e-4
PROMPT = [5, 17, 42, 7]


def configs(transformers):
    """{name: (model class, config)}: small ones (2 layers, hidden 128) and GPT-2 small at
    its full size (12 layers, hidden 768, 50257 tokens; only when named)."""
    t = transformers
    common = dict(attn_implementation="eager", use_cache=True)
    # Larger random weights than the default 0.02: sharper logits, tokens that vary.
    small = dict(initializer_range=0.1, **common)
    return {
        "gpt2": (t.GPT2LMHeadModel, t.GPT2Config(vocab_size=1000, n_embd=128, n_layer=2,
                                                 n_head=4, n_positions=128, **small)),
        "llama": (t.LlamaForCausalLM, t.LlamaConfig(
            vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
            hidden_act="silu", **small)),
        "gpt2_small": (t.GPT2LMHeadModel, t.GPT2Config(**common)),
    }


def wrappers(torch, transformers, name):
    """(prefill module, decode module, number of layers): positional tensors in and out."""
    cls, config = configs(transformers)[name]
    torch.manual_seed(0)
    inner = cls(config).eval()
    layers = config.num_hidden_layers

    def outputs(out):
        presents = []
        for layer in out.past_key_values.layers:
            presents += [layer.keys, layer.values]
        return (out.logits, *presents)

    class Prefill(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids):
            return outputs(self.inner(input_ids=input_ids, use_cache=True, return_dict=True))

    class Decode(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, *past):
            cache = transformers.DynamicCache(
                ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(layers)],
                config=config)
            return outputs(self.inner(input_ids=input_ids, past_key_values=cache,
                                      use_cache=True, return_dict=True))

    return Prefill().eval(), Decode().eval(), layers


def io_names(layers, prefix):
    return [f"{prefix}.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]


def export(torch, module, inputs, path, input_names, output_names, dynamic):
    with open(path + ".log", "w") as log, torch.no_grad(), warnings.catch_warnings(), \
            contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        warnings.simplefilter("ignore")
        torch.onnx.export(module, inputs, path, dynamo=False, opset_version=17,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic)


def export_pair(torch, transformers, name, work):
    """Writes NAME_prefill.onnx and NAME_decode.onnx; returns their paths and the prefill
    logits of torch (for the check)."""
    prefill, decode, layers = wrappers(torch, transformers, name)
    ids = torch.tensor([PROMPT], dtype=torch.int64)
    with torch.no_grad():
        first = prefill(ids)
    past_names, present_names = io_names(layers, "past"), io_names(layers, "present")
    cache = {0: "batch", 2: "past_sequence"}
    total = {0: "batch", 2: "total_sequence"}
    tokens = {0: "batch", 1: "sequence"}
    paths = [os.path.join(work, f"{name}_{kind}.onnx") for kind in ("prefill", "decode")]
    export(torch, prefill, (ids,), paths[0], ["input_ids"], ["logits"] + present_names,
           {"input_ids": tokens, "logits": tokens, **{n: total for n in present_names}})
    step = torch.tensor([[3]], dtype=torch.int64)
    export(torch, decode, (step, *first[1:]), paths[1], ["input_ids"] + past_names,
           ["logits"] + present_names,
           {"input_ids": tokens, "logits": tokens, **{n: cache for n in past_names},
            **{n: total for n in present_names}})
    return paths, first[0].numpy()


def greedy(prefill, decode, tokens):
    """A greedy loop: `prefill(ids)` and `decode(ids, *cache)` return (logits, *cache)
    (lists of arrays). Returns the tokens and each step's logits of the last position."""
    out = prefill(np.array([PROMPT], dtype=np.int64))
    chosen, logits = [], []
    for _ in range(tokens):
        last = out[0][:, -1]
        logits.append(last)
        chosen.append(int(np.argmax(last[0])))
        if len(chosen) == tokens:
            break
        out = decode(np.array([[chosen[-1]]], dtype=np.int64), *out[1:])
    return chosen, logits


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_callable(path, threads):
    session = ort_session(path, threads)
    names = [i.name for i in session.get_inputs()]
    return lambda *args: session.run(None, dict(zip(names, args)))


def hpvm_callable(path):
    import hpvm.onnx
    step = hpvm.onnx.compile_dynamic(path, fuse=True)
    return lambda *args: (lambda r: list(r) if isinstance(r, tuple) else [r])(step(*args)), step


def check(name, paths, torch_logits, args):
    ort_prefill, ort_decode = (ort_callable(p, args.threads) for p in paths)
    expected, expected_logits = greedy(ort_prefill, ort_decode, args.tokens)
    ref0 = ort_prefill(np.array([PROMPT], dtype=np.int64))[0]
    torch_err = float(np.max(np.abs(ref0 - torch_logits)) / np.max(np.abs(torch_logits)))
    (prefill, _), (decode, step) = (hpvm_callable(p) for p in paths)
    t0 = time.perf_counter()
    got, logits = greedy(prefill, decode, args.tokens)
    seconds = time.perf_counter() - t0
    err = max(float(np.max(np.abs(g - e)) / np.max(np.abs(e)))
              for g, e in zip(logits, expected_logits))
    ok = got == expected and err <= RTOL and torch_err <= RTOL
    print(f"   {'ok' if ok else 'MISMATCH'}: {len(got)} tokens "
          f"{'equal' if got == expected else 'DIFFER'}, logits max rel diff {err:.1e} "
          f"(onnxruntime vs torch {torch_err:.1e}); the loop with {len(step.compiled)} "
          f"compiles of the decode graph took {seconds:.1f} s", flush=True)
    print(f"   hpvm:        {got}\n   onnxruntime: {expected}", flush=True)
    return ok


# One side's timing of one decoding step (argv: side, decode model, threads, inputs .npz,
# warm-up, timed).
_TIMER = """
import sys, time, numpy as np
side, path, threads, data, warm, timed = sys.argv[1:7]
feeds = np.load(data)
args = [feeds[k] for k in feeds.files]
if side == "hpvm":
    import hpvm.onnx
    step = hpvm.onnx.compile_dynamic(path, fuse=True)
    call = lambda: step(*args)
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = int(threads), 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    call = lambda: session.run(None, dict(zip(names, args)))
for _ in range(int(warm)):
    call()
for _ in range(int(timed)):
    t = time.perf_counter()
    call()
    print((time.perf_counter() - t) * 1e3)
"""


def timed_in_child(side, path, data, args):
    env = dict(os.environ, HPVM_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    result = subprocess.run([sys.executable, "-c", _TIMER, side, path, str(args.threads), data,
                             "2", "10"], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the {side} timer failed: {result.stderr[-2000:]}")
    return [float(v) for v in result.stdout.split()]


def fmt(ts):
    ts = sorted(ts)
    return f"{ts[0]:.2f} / {ts[len(ts) // 2]:.2f} / {ts[-1]:.2f}"


def time_decode(name, paths, args):
    """One decoding step after a cache of args.past tokens, each side in its own process."""
    session = ort_session(paths[0], args.threads)
    rng = np.random.default_rng(0)
    vocab = session.get_outputs()[0].shape[-1]
    ids = rng.integers(3, vocab if isinstance(vocab, int) else 1000, (1, args.past))
    cache = session.run(None, {"input_ids": ids.astype(np.int64)})[1:]
    data = os.path.join(args.work, f"{name}_decode_past{args.past}.npz")
    np.savez(data, *([np.array([[3]], dtype=np.int64)] + list(cache)))
    t0 = time.perf_counter()
    timed_in_child("hpvm", paths[1], data, argparse.Namespace(threads=args.threads))
    print(f"   hpvm's first process (compile at this shape, or the cache) "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours += timed_in_child("hpvm", paths[1], data, args)
        theirs += timed_in_child("onnxruntime", paths[1], data, args)
    ratio = sorted(theirs)[len(theirs) // 2] / sorted(ours)[len(ours) // 2]
    print(f"   one token after {args.past}: hpvm {fmt(ours)} ms, onnxruntime {fmt(theirs)} ms"
          f" (min / median / max), ort/hpvm {ratio:.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="gpt2,llama", help="models whose greedy loops are "
                    "checked (gpt2, llama, gpt2_small)")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--time", default="", help="models whose decoding step is timed")
    ap.add_argument("--past", type=int, default=127, help="the cache's length when timed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(os.getcwd(), "zoo-work"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(args.threads)
    checked = [n for n in args.only.split(",") if n]
    timed = [n for n in args.time.split(",") if n]
    unknown = sorted(set(checked + timed) - set(configs(transformers)))
    if unknown:
        sys.exit(f"generation_zoo.py: unknown models {unknown}; known: "
                 f"{', '.join(configs(transformers))}")
    failed = []
    for name in dict.fromkeys(checked + timed):
        print(f"== {name}", flush=True)
        paths, torch_logits = export_pair(torch, transformers, name, args.work)
        if name in checked and not check(name, paths, torch_logits, args):
            failed.append(name)
        if name in timed:
            time_decode(name, paths, args)
    summary = (f"{len(checked) - len(failed)} of {len(checked)} greedy loops match"
               if checked else "timed only")
    print(f"\ntransformers {transformers.__version__}, torch {torch.__version__}: {summary}" +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
