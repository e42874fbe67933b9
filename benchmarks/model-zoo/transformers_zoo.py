"""Transformers from Hugging Face: `transformers` model definitions built from small configs
(random weights, eval mode, no downloads), exported by torch to ONNX, imported by hpvm.onnx,
compiled and checked against onnxruntime. Nothing here is part of `make check`.

    python transformers_zoo.py [--only bert,gpt2] [--rounds R] [--threads N] [--work DIR]
                               [--dynamo] [--profile] [--cpu-time CALLS]

For each model: a wrapper that takes the inputs positionally (input_ids and attention_mask,
int64 [batch, seq]; pixel_values for the vision models) and returns one output (the last
hidden state, a classifier's logits, CLIP's pooled output), `torch.onnx.export` (opset 17,
dynamo=False; with --dynamo also dynamo=True at opset 18), `hpvm.onnx.load` and
`hpvm.compile(fuse=True)`, one run compared with onnxruntime on the exported model
(max |diff| / max |ref| <= 1e-4); then R alternated rounds of hpvm and onnxruntime, each side
in a process of its own (2 warm-up calls, 5 timed; min / median / max ms); with --profile,
hpvm's side once more with HPVM_PROFILE=1 (zoo.py's --profile). Each model is ok,
refused (the importer's or compiler's message: which node and operator) or MISMATCH. Exit
status 1 when any is not ok, but for the refusals of KNOWN_REFUSED ("refused (known)")."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import traceback
import warnings

import numpy as np

RTOL = 1e-4
# The legacy exporter's opset 17; the dynamo exporter's implementations start at opset 18
# (asked for 17, it converts down, and a failed conversion leaves opset 18 operators under
# an opset 17 header, which onnxruntime refuses).
OPSET = {False: 17, True: 18}
BATCH, SEQ, VOCAB = 2, 16, 1000
# The base-sized models (not in the default list): batch 1, 128 tokens.
LARGE = {"bert_base": (1, 128), "llama_base": (1, 128)}


def _text_configs(transformers):
    """{name: (model class, config, the output compared)} of the text models: 2 layers,
    hidden 128, 4 heads (token 0 pads, token 2 ends a sequence)."""
    t = transformers
    common = dict(vocab_size=VOCAB, attn_implementation="eager", pad_token_id=0,
                  eos_token_id=2)
    bert = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=256, max_position_embeddings=64, **common)
    decoder = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                   num_attention_heads=4, max_position_embeddings=64, use_cache=False,
                   **common)
    hidden = "last_hidden_state"
    return {
        "bert": (t.BertModel, t.BertConfig(**bert), hidden),
        "bert_cls": (t.BertForSequenceClassification, t.BertConfig(num_labels=3, **bert),
                     "logits"),
        "distilbert": (t.DistilBertModel, t.DistilBertConfig(dim=128, n_layers=2, n_heads=4,
                                                             hidden_dim=256,
                                                             max_position_embeddings=64,
                                                             **common), hidden),
        "roberta": (t.RobertaModel, t.RobertaConfig(**dict(bert, pad_token_id=1)), hidden),
        "albert": (t.AlbertModel, t.AlbertConfig(embedding_size=64, **bert), hidden),
        "electra": (t.ElectraModel, t.ElectraConfig(embedding_size=64, **bert), hidden),
        "deberta_v2": (t.DebertaV2Model, t.DebertaV2Config(relative_attention=True,
                                                           position_buckets=8,
                                                           pos_att_type=["p2c", "c2p"],
                                                           **bert), hidden),
        "gpt2": (t.GPT2Model, t.GPT2Config(n_embd=128, n_layer=2, n_head=4, n_positions=64,
                                           use_cache=False, **common), hidden),
        "gpt2_cls": (t.GPT2ForSequenceClassification,
                     t.GPT2Config(n_embd=128, n_layer=2, n_head=4, n_positions=64,
                                  use_cache=False, num_labels=3, **common), "logits"),
        "opt": (t.OPTModel, t.OPTConfig(hidden_size=128, ffn_dim=256, num_hidden_layers=2,
                                        num_attention_heads=4, max_position_embeddings=64,
                                        word_embed_proj_dim=128, use_cache=False,
                                        **common), hidden),
        "bloom": (t.BloomModel, t.BloomConfig(hidden_size=128, n_layer=2, n_head=4,
                                              use_cache=False, **common), hidden),
        "gpt_neox": (t.GPTNeoXModel, t.GPTNeoXConfig(rotary_pct=0.25, **decoder), hidden),
        "t5_encoder": (t.T5EncoderModel, t.T5Config(d_model=128, d_ff=256, d_kv=32,
                                                    num_layers=2, num_heads=4,
                                                    use_cache=False, **common), hidden),
        "llama": (t.LlamaModel, t.LlamaConfig(num_key_value_heads=2, **decoder), hidden),
        "qwen2": (t.Qwen2Model, t.Qwen2Config(num_key_value_heads=2, **decoder), hidden),
        "gptj": (t.GPTJModel, t.GPTJConfig(n_embd=128, n_layer=2, n_head=4, n_positions=64,
                                           rotary_dim=16, use_cache=False, **common), hidden),
        "mistral": (t.MistralModel, t.MistralConfig(num_key_value_heads=2, sliding_window=8,
                                                    **decoder), hidden),
        "phi": (t.PhiModel, t.PhiConfig(**decoder), hidden),
        "falcon": (t.FalconModel, t.FalconConfig(hidden_size=128, num_hidden_layers=2,
                                                 num_attention_heads=4, use_cache=False,
                                                 **common), hidden),
        "gemma": (t.GemmaModel, t.GemmaConfig(num_key_value_heads=1, head_dim=32, **decoder),
                  hidden),
        "mpnet": (t.MPNetModel, t.MPNetConfig(**bert), hidden),
        "xlm_roberta": (t.XLMRobertaModel, t.XLMRobertaConfig(**dict(bert, pad_token_id=1)),
                        hidden),
        "mobilebert": (t.MobileBertModel, t.MobileBertConfig(embedding_size=64,
                                                             intra_bottleneck_size=64,
                                                             true_hidden_size=64, **bert),
                       hidden),
        # Base sizes (BERT-base: 12 layers, hidden 768, 12 heads; a Llama of 4 such layers
        # with 4 key-value heads), for timings: only when named in --only.
        "bert_base": (t.BertModel, t.BertConfig(max_position_embeddings=512, **dict(
            common, vocab_size=30522)), hidden),
        "llama_base": (t.LlamaModel, t.LlamaConfig(
            hidden_size=768, intermediate_size=2048, num_hidden_layers=4,
            num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=512,
            use_cache=False, **dict(common, vocab_size=32000)), hidden),
        "clip_text": (t.CLIPTextModel, t.CLIPTextConfig(
            hidden_size=128, intermediate_size=256, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=64, vocab_size=VOCAB,
            attn_implementation="eager", pad_token_id=0, eos_token_id=2), "pooler_output"),
    }


def _vision_configs(transformers):
    """{name: (model class, config, pixel_values' shape)} of the vision models."""
    t = transformers
    vit = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
               intermediate_size=256, attn_implementation="eager")
    image = (BATCH, 3, 32, 32)
    return {
        "vit": (t.ViTModel, t.ViTConfig(image_size=32, patch_size=8, hidden_size=128,
                                        num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=256, attn_implementation="eager"),
                (BATCH, 3, 32, 32)),
        "swin": (t.SwinModel, t.SwinConfig(image_size=32, patch_size=4, embed_dim=32,
                                           depths=[2, 2], num_heads=[2, 4], window_size=4,
                                           attn_implementation="eager"),
                 (BATCH, 3, 32, 32)),
        "deit": (t.DeiTModel, t.DeiTConfig(image_size=32, patch_size=8, **vit), image),
        "beit": (t.BeitModel, t.BeitConfig(image_size=32, patch_size=8,
                                           use_relative_position_bias=True, **vit), image),
        "levit": (t.LevitModel, t.LevitConfig(image_size=32, hidden_sizes=[32, 48, 64],
                                              num_attention_heads=[1, 2, 2], depths=[1, 1, 1],
                                              key_dim=[8, 8, 8]), image),
        "segformer": (t.SegformerModel, t.SegformerConfig(
            image_size=32, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
            hidden_sizes=[16, 32], num_attention_heads=[1, 2], patch_sizes=[7, 3],
            strides=[4, 2]), image),
        "convnext": (t.ConvNextModel, t.ConvNextConfig(image_size=32, hidden_sizes=[16, 32],
                                                       depths=[1, 1], num_stages=2), image),
        "resnet": (t.ResNetModel, t.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32],
                                                 depths=[1, 1]), image),
    }


def _other_models(torch, transformers, name):
    """(module, inputs, names) of the encoder-decoders and the audio and CLIP vision models,
    or None: T5 with its decoder (T5ForConditionalGeneration's logits from input_ids,
    attention_mask and 8 decoder_input_ids), Whisper (WhisperModel: 80 mel bins x 64 frames
    into the encoder, 8 decoder_input_ids; the decoder's last hidden state), CLIP's vision
    tower (CLIPVisionModel, [2, 3, 32, 32]; its pooled output) and Wav2Vec2 (Wav2Vec2Model on
    2 x 1600 samples of raw audio; the last hidden state)."""
    t = transformers
    generator = torch.Generator().manual_seed(1)
    decoder_ids = torch.randint(3, VOCAB, (BATCH, 8), generator=generator, dtype=torch.int64)
    decoder_ids[:, 0] = 0
    if name == "t5":
        config = t.T5Config(d_model=128, d_ff=256, d_kv=32, num_layers=2, num_heads=4,
                            vocab_size=VOCAB, attn_implementation="eager", pad_token_id=0,
                            eos_token_id=2, decoder_start_token_id=0, use_cache=False)
        inner = t.T5ForConditionalGeneration(config).eval()
        ids = torch.randint(3, VOCAB, (BATCH, SEQ), generator=generator, dtype=torch.int64)
        mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
        ids[:, SEQ - 1] = 2
        ids[1, SEQ - 6], ids[1, SEQ - 5:], mask[1, SEQ - 5:] = 2, 0, 0

        def forward(input_ids, attention_mask, decoder_input_ids):
            return inner(input_ids=input_ids, attention_mask=attention_mask,
                         decoder_input_ids=decoder_input_ids, return_dict=True).logits
        inputs = (ids, mask, decoder_ids)
        names = ["input_ids", "attention_mask", "decoder_input_ids"]
    elif name == "whisper":
        config = t.WhisperConfig(vocab_size=VOCAB, num_mel_bins=80, d_model=128,
                                 encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                 decoder_attention_heads=4, encoder_ffn_dim=256,
                                 decoder_ffn_dim=256, max_source_positions=32,
                                 max_target_positions=64, pad_token_id=0, eos_token_id=2,
                                 bos_token_id=1, decoder_start_token_id=1, use_cache=False,
                                 attn_implementation="eager")
        inner = t.WhisperModel(config).eval()

        def forward(input_features, decoder_input_ids):
            # An all-ones decoder mask: without one, the decoder's causal mask looks for
            # packed sequences in the positions (torch.diff, which the legacy exporter has
            # no implementation of).
            return inner(input_features=input_features, decoder_input_ids=decoder_input_ids,
                         decoder_attention_mask=torch.ones_like(decoder_input_ids),
                         return_dict=True).last_hidden_state
        inputs = (torch.randn(BATCH, 80, 64, generator=generator), decoder_ids)
        names = ["input_features", "decoder_input_ids"]
    elif name == "clip_vision":
        config = t.CLIPVisionConfig(image_size=32, patch_size=8, hidden_size=128,
                                    intermediate_size=256, num_hidden_layers=2,
                                    num_attention_heads=4, attn_implementation="eager")
        inner = t.CLIPVisionModel(config).eval()

        def forward(pixel_values):
            return inner(pixel_values=pixel_values, return_dict=True).pooler_output
        inputs, names = (torch.randn(BATCH, 3, 32, 32, generator=generator),), ["pixel_values"]
    elif name == "wav2vec2":
        config = t.Wav2Vec2Config(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=256, conv_dim=(32, 32, 32),
                                  conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                                  num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                  vocab_size=VOCAB, attn_implementation="eager")
        inner = t.Wav2Vec2Model(config).eval()

        def forward(input_values):
            return inner(input_values=input_values, return_dict=True).last_hidden_state
        inputs = (torch.randn(BATCH, 1600, generator=generator),)
        names = ["input_values"]
    else:
        return None

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return forward(*args)

    return Wrapped().eval(), inputs, names


MODELS = ["bert", "bert_cls", "distilbert", "roberta", "xlm_roberta", "albert", "electra",
          "deberta_v2", "mpnet", "mobilebert", "gpt2", "gpt2_cls", "gptj", "opt", "bloom",
          "falcon", "gpt_neox", "phi", "t5_encoder", "llama", "mistral", "qwen2", "gemma",
          "clip_text", "vit", "deit", "beit", "swin", "levit", "segformer", "convnext",
          "resnet", "t5", "whisper", "clip_vision", "wav2vec2"]


# The models the importer refuses on purpose, with the reason: their refusal is reported as
# "refused (known)" and does not fail the run (anything else of theirs still does).
KNOWN_REFUSED = {
    "opt": "its position ids are a running sum of the caller's attention_mask: a table read "
           "at computed indices whose range the importer cannot prove",
}


def model_and_inputs(torch, transformers, name):
    """(a module taking its inputs positionally and returning the output compared, the
    example inputs, their names). Text models get two sequences of token ids, the second
    padded (its last 5 tokens are the pad token 0, masked out; each sequence holds the end
    token 2 once)."""
    torch.manual_seed(0)
    other = _other_models(torch, transformers, name)
    if other is not None:
        return other
    text = _text_configs(transformers)
    if name in text:
        cls, config, field = text[name]
        inner = cls(config).eval()

        class Text(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask):
                return getattr(self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                          return_dict=True), field)

        generator = torch.Generator().manual_seed(1)
        batch, seq = LARGE.get(name, (BATCH, SEQ))
        ids = torch.randint(3, VOCAB, (batch, seq), generator=generator, dtype=torch.int64)
        mask = torch.ones(batch, seq, dtype=torch.int64)
        ids[:, seq - 1] = 2
        if batch > 1:
            ids[1, seq - 6] = 2
            ids[1, seq - 5:] = 0
            mask[1, seq - 5:] = 0
        return Text().eval(), (ids, mask), ["input_ids", "attention_mask"]
    cls, config, shape = _vision_configs(transformers)[name]
    inner = cls(config).eval()

    class Vision(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, pixel_values):
            return self.inner(pixel_values=pixel_values, return_dict=True).last_hidden_state

    return Vision().eval(), (torch.randn(*shape),), ["pixel_values"]


def export(torch, module, inputs, names, path, dynamo):
    """torch.onnx.export at OPSET (the dynamo exporter's progress lines and its logging
    of the version conversion go to the log file beside the model)."""
    import contextlib
    import logging
    with open(path + ".log", "w") as log, torch.no_grad(), warnings.catch_warnings(), \
            contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        warnings.simplefilter("ignore")
        logging.disable(logging.CRITICAL)
        try:
            torch.onnx.export(module, inputs, path, dynamo=dynamo, opset_version=OPSET[dynamo],
                              input_names=names, output_names=["output"],
                              **({"external_data": False, "verbose": False} if dynamo else {}))
        finally:
            logging.disable(logging.NOTSET)


# One side's timing (argv: side, model, graph name, threads, inputs .npz, warm-up, timed).
_TIMER = """
import sys, time, numpy as np
side, path, name, threads, data, warm, timed = sys.argv[1:8]
feeds = dict(np.load(data))
if side == "hpvm":
    import hpvm, hpvm.onnx
    run = hpvm.compile(hpvm.onnx.load(path, name=name), fuse=True)
    call = lambda: run(**feeds)
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = int(threads), 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    call = lambda: session.run(None, feeds)
for _ in range(int(warm)):
    call()
for _ in range(int(timed)):
    t = time.perf_counter()
    call()
    print((time.perf_counter() - t) * 1e3)
"""


def timed_in_child(side, path, name, data, args, calls=(2, 5), env=None):
    """The times (ms) of `calls` = (warm-up, timed) calls of one side in a process of its own
    (and that process's stderr, with `env` set)."""
    full = dict(os.environ, HPVM_NUM_THREADS=str(args.threads),
                OMP_NUM_THREADS=str(args.threads), **(env or {}))
    result = subprocess.run([sys.executable, "-c", _TIMER, side, path, name, str(args.threads),
                             data, *(str(c) for c in calls)], capture_output=True, text=True,
                            env=full)
    if result.returncode != 0:
        raise RuntimeError(f"the {side} timer failed: {result.stderr[-2000:]}")
    times = [float(v) for v in result.stdout.split()]
    return (times, result.stderr) if env else times


def profile(graph, path, data, args):
    """hpvm's side with HPVM_PROFILE=1 in a process of its own, its leaves' times by op
    class (zoo.py's --profile: the classes of the graph as hpvm.compile(fuse=True) has it)."""
    import zoo
    leaves = zoo.fused_leaves(graph, args.work)
    times, err = timed_in_child("hpvm", path, graph.name, data, args, zoo.PROFILE_CALLS,
                                {"HPVM_PROFILE": "1"})
    return zoo.summarize(leaves, times, err, args.threads)


def fmt(ts):
    ts = sorted(ts)
    return f"{ts[0]:.2f} / {ts[len(ts) // 2]:.2f} / {ts[-1]:.2f}"


def check(name, dynamo, args, torch, transformers, rows):
    import onnxruntime as ort
    import hpvm
    import hpvm.onnx

    tag = f"{name}{'_dynamo' if dynamo else ''}"
    path = os.path.join(args.work, f"{tag}.onnx")
    row = {"model": name, "exporter": "dynamo" if dynamo else "legacy"}
    module, inputs, names = model_and_inputs(torch, transformers, name)
    feeds = {n: x.numpy() for n, x in zip(names, inputs)}
    try:
        export(torch, module, inputs, names, path, dynamo)
    except Exception as error:  # noqa: BLE001 - the exporter's failure, reported
        row["result"] = "export failed: " + " ".join(str(error).split())[:200]
        print(f"   {row['result']}", flush=True)
        rows.append(row)
        return False
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
    try:
        session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        ort_feeds = {i.name: feeds[i.name] for i in session.get_inputs()}
        ref = session.run(None, ort_feeds)[0]
    except Exception as error:  # noqa: BLE001 - an export onnxruntime cannot run
        row["result"] = "export failed (onnxruntime: " + " ".join(str(error).split())[:200] + ")"
        print(f"   {row['result']}", flush=True)
        rows.append(row)
        return False
    try:
        t0 = time.perf_counter()
        graph = hpvm.onnx.load(path, name=tag)
        t1 = time.perf_counter()
        compiled = hpvm.compile(graph, fuse=True)
        t2 = time.perf_counter()
        row["import"], row["compile"] = f"{t1 - t0:.1f} s", f"{t2 - t1:.1f} s"
        got = compiled(**ort_feeds)
    except Exception as error:  # noqa: BLE001 - reported in the table
        known = name in KNOWN_REFUSED and isinstance(error, hpvm.HPVMError)
        row["result"] = ("refused (known): " if known else "refused: ") + \
            str(error).splitlines()[0][:300]
        rows.append(row)
        print(f"   {row['result']}", flush=True)
        return known
    got = got[0] if isinstance(got, tuple) else got
    err = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))
    ok = got.shape == ref.shape and err <= RTOL
    row["result"] = ("ok" if ok else "MISMATCH") + f" ({err:.1e})"
    print(f"   {row['result']}, import {row['import']}, compile {row['compile']}", flush=True)
    data = os.path.join(args.work, f"{tag}_inputs.npz")
    if ok and (args.rounds or args.profile or args.cpu_time):
        np.savez(data, **ort_feeds)
    if ok and args.rounds:
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours += timed_in_child("hpvm", path, tag, data, args)
            theirs += timed_in_child("onnxruntime", path, tag, data, args)
        row["hpvm"], row["ort"] = fmt(ours), fmt(theirs)
        ratio = sorted(theirs)[len(theirs) // 2] / sorted(ours)[len(ours) // 2]
        row["speed"] = f"{ratio:.2f}"
        print(f"   hpvm {row['hpvm']} ms, onnxruntime {row['ort']} ms: {ratio:.2f}x", flush=True)
    if ok and args.profile:
        row["profile"] = profile(graph, path, data, args)
    if ok and args.cpu_time:
        import zoo
        row["cpu"] = zoo.cpu_times(path, tag, data, args.cpu_time)
        print(f"   {row['cpu']}", flush=True)
    rows.append(row)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated models (default: all but the "
                                                "base-sized bert_base, llama_base)")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (0: no timing)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(os.getcwd(), "zoo-work"))
    ap.add_argument("--dynamo", action="store_true",
                    help="also export with torch.onnx.export(dynamo=True)")
    ap.add_argument("--profile", action="store_true",
                    help="also run hpvm's side with HPVM_PROFILE=1: time per op class and the "
                         "slowest leaves (as zoo.py --profile)")
    ap.add_argument("--cpu-time", type=int, default=0, metavar="CALLS",
                    help="also both sides on one thread in one process, alternated call by "
                         "call: the CPU time of CALLS calls each (zoo.py --cpu-time)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or MODELS
    unknown = [n for n in names if n not in MODELS and n not in LARGE]
    if unknown:
        sys.exit(f"transformers_zoo.py: unknown models {unknown}; known: "
                 f"{', '.join(MODELS + sorted(LARGE))}")
    os.makedirs(args.work, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(args.threads)
    rows, failed = [], []
    for name in names:
        for dynamo in ([False, True] if args.dynamo else [False]):
            print(f"== {name} ({'dynamo' if dynamo else 'legacy'} exporter)", flush=True)
            try:
                if not check(name, dynamo, args, torch, transformers, rows):
                    failed.append(name + ("/dynamo" if dynamo else ""))
            except Exception:  # noqa: BLE001
                traceback.print_exc()
                rows.append({"model": name, "exporter": "dynamo" if dynamo else "legacy",
                             "result": "error (see log)"})
                failed.append(name + ("/dynamo" if dynamo else ""))
    print(f"\ntransformers {transformers.__version__}, torch {torch.__version__}, batch {BATCH}, "
          f"sequence {SEQ} (the base-sized models: batch 1, sequence 128)")
    print("| model | exporter | result | import | compile | hpvm ms | onnxruntime ms | "
          "ort/hpvm |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['exporter']} | {r.get('result', '')} | "
              f"{r.get('import', '-')} | {r.get('compile', '-')} | {r.get('hpvm', '-')} | "
              f"{r.get('ort', '-')} | {r.get('speed', '-')} |")
    for r in rows:
        if r.get("profile"):
            print(f"profile of {r['model']} ({r['exporter']}): {r['profile']}")
        if r.get("cpu"):
            print(f"{r['model']} ({r['exporter']}): {r['cpu']}")
    known = [r["model"] + ("/dynamo" if r["exporter"] == "dynamo" else "") for r in rows
             if r.get("result", "").startswith("refused (known)")]
    print(f"\ntransformers zoo: {len(rows) - len(failed) - len(known)} of {len(rows)} ok" +
          (f"; refused as known: {', '.join(known)}" if known else "") +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
