"""PyTorch (cuDNN) on the GPU for the tensor graphs HPVM is compared against, and PyTorch on the CPU.

LeNet-5 (1x28x28: conv5x5(6)-ReLU-maxpool, conv5x5(16)-ReLU-maxpool, fc120-fc84-fc10), a
MobileNet block (as hpvm.onnx.examples.mobilenet_block: depthwise 3x3 stride 2 + BN + ReLU6,
pointwise 1x1 + BN + ReLU6; 32 -> 64 channels at 56x56) and torchvision's resnet18 (weights=None,
3x224x224), at batch 1 and 8: float32 with TF32 off, cudnn.benchmark, eval mode, no_grad.
GPU: after a warm-up, RUNS timings of one forward + synchronize with CUDA events (min / median /
max); CPU: torch with os.cpu_count() threads, the median of CPU_RUNS forwards. The GPU and CPU
outputs of each model must agree (max |diff| relative to max |output|; TF32 would show ~1e-3).

    python benchmarks/gpu/tensor_baseline.py       # the table; $OUT/tensor_baseline.json if OUT is set

Without CUDA it says so, measures the CPU only and exits 0.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time

import torch
from torch import nn

RUNS = int(os.environ.get("RUNS", 20))
CPU_RUNS = int(os.environ.get("CPU_RUNS", 5))
WARMUP = 5
BATCHES = (1, 8)


def lenet() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def mobilenet_block(channels: int = 32, out_channels: int = 64) -> nn.Module:
    block = nn.Sequential(
        nn.Conv2d(channels, channels, 3, stride=2, padding=1, groups=channels, bias=False),
        nn.BatchNorm2d(channels, eps=1e-3), nn.ReLU6(),
        nn.Conv2d(channels, out_channels, 1, bias=False),
        nn.BatchNorm2d(out_channels, eps=1e-3), nn.ReLU6())
    for bn in (block[1], block[4]):  # statistics that are not the identity
        bn.running_mean.normal_(0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.normal_(0, 0.1)
    return block


def resnet18() -> nn.Module:
    import torchvision
    return torchvision.models.resnet18(weights=None)


MODELS = {  # name: (builder, shape of one image)
    "lenet": (lenet, (1, 28, 28)),
    "mobilenet_block": (mobilenet_block, (32, 56, 56)),
    "resnet18": (resnet18, (3, 224, 224)),
}


def time_gpu(model: nn.Module, x: torch.Tensor) -> list[float]:
    for _ in range(WARMUP):  # cudnn.benchmark picks its algorithms here
        model(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(RUNS):
        start.record()
        model(x)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def time_cpu(model: nn.Module, x: torch.Tensor) -> float:
    model(x)
    times = []
    for _ in range(CPU_RUNS):
        t = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> int:
    cuda = torch.cuda.is_available()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0) if cuda else None,
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "gpu_runs": RUNS, "cpu_runs": CPU_RUNS, "tf32": False,
    }
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"torch {env['torch']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}, "
          f"device {env['device']}; CPU {env['cpu']}, {env['cpu_threads']} threads")
    if not cuda:
        print("CUDA is not available: the GPU columns are skipped, the CPU is measured")

    rows = []
    print(f"{'model':<16} {'batch':>5} {'GPU ms min/median/max':>24} {'images/s':>12} "
          f"{'CPU ms':>9} {'speedup':>8} {'rel diff':>9}")
    with torch.no_grad():
        for name, (build, shape) in MODELS.items():
            model = build().eval()
            for batch in BATCHES:
                x = torch.randn(batch, *shape)
                row = {"model": name, "batch": batch}
                reference = model(x)
                row["cpu_ms"] = time_cpu(model, x)
                if cuda:
                    gpu_model, gx = model.cuda(), x.cuda()
                    times = time_gpu(gpu_model, gx)
                    out = gpu_model(gx).cpu()
                    model.cpu()
                    median = statistics.median(times)
                    row.update(gpu_ms_min=min(times), gpu_ms_median=median, gpu_ms_max=max(times),
                               images_per_s=batch / median * 1e3,
                               speedup=row["cpu_ms"] / median,
                               rel_diff=float((out - reference).abs().max()
                                              / reference.abs().max().clamp_min(1e-30)))
                    gpu = (f"{row['gpu_ms_min']:.3f}/{median:.3f}/{row['gpu_ms_max']:.3f}",
                           f"{row['images_per_s']:.0f}", f"{row['speedup']:.1f}x",
                           f"{row['rel_diff']:.1e}")
                else:
                    gpu = ("-", f"{batch / row['cpu_ms'] * 1e3:.0f} (cpu)", "-", "-")
                print(f"{name:<16} {batch:>5} {gpu[0]:>24} {gpu[1]:>12} "
                      f"{row['cpu_ms']:>9.3f} {gpu[2]:>8} {gpu[3]:>9}", flush=True)
                rows.append(row)
    print(f"(GPU: {RUNS} x one forward + synchronize, CUDA events, after {WARMUP} warm-ups; "
          f"CPU: median of {CPU_RUNS}; speedup = CPU median / GPU median)")
    if os.environ.get("OUT"):
        path = os.path.join(os.environ["OUT"], "tensor_baseline.json")
        with open(path, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=1)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
