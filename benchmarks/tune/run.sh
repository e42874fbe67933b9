#!/usr/bin/env bash
# The performance auto-tuner's comparison (docs/Tuning.md): for sgemm, the stencil and
# the edge-detection pipeline (python/hpvm/tune/programs.py), the whole space is measured once
# (hpvm-tune --exhaustive), then random, bandit and surrogate search replay those measurements
# with SEEDS seeds each on a budget of 100 evaluations; the default, the sweep's five best points
# and each strategy's answer are timed again (--confirm 5, alternating). Writes
# BUILD/benchmarks/tune/PROGRAM.{json,png,log} (docs/images/tune-PROGRAM.png are copies).
# Usage: benchmarks/tune/run.sh [BUILD_DIR] [--quick]
#        (SEEDS=N, default 9; PROGRAMS="...", default "edge stencil sgemm")
# sgemm's space is 800 points (400 builds, ~15-20 minutes); the others take a few minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
python=$(bash scripts/bootstrap-python.sh "$build")
# matplotlib draws the curves; installed into the package's venv (a no-op when present).
"$python" -m pip install -q --disable-pip-version-check -r benchmarks/tune/requirements.txt >&2
export HPVM_HOME=$build HPVM_SOURCE_DIR=$PWD
out="$build/benchmarks/tune"
mkdir -p "$out"
seeds="${SEEDS:-9}"
programs="${PROGRAMS:-edge stencil sgemm}"
echo "# hpvm-tune: $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for program in $programs; do
  if [[ "${2:-}" == "--quick" ]]; then
    "$python" -m hpvm.tune "$program" --budget 4 --checkpoints 2,4 --seeds 2 \
      --workdir "$out/work-$program" --out "$out/$program.json"
    continue
  fi
  "$python" -m hpvm.tune "$program" --exhaustive --seeds "$seeds" --budget 100 \
    --checkpoints 20,50,100 --confirm 5 --workdir "$out/work-$program" \
    --out "$out/$program.json" --plot "$out/$program.png" | tee "$out/$program.log"
done
