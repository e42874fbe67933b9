# openblas-coretype.sh - sourced by the benchmarks that compare with OpenBLAS: exports
# OPENBLAS_CORETYPE when OpenBLAS cannot name this CPU itself. In the virtual machines these
# benchmarks run on, cpuid reports a model OpenBLAS 0.3.21 does not know, and it falls back to
# its Prescott (SSE3) kernels: 27 GFLOP/s at 1024^3 where its SkylakeX kernels reach 143 on
# the same 2 CPUs. A comparison with that would flatter us; the CPU's flags decide instead.
# A value already in the environment is kept.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi
