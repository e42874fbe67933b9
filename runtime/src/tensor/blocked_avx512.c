/* The blocked layout's loops (blocked_isa.inc) for AVX-512F: CMake compiles this file with
 * -mavx512f, as pool_avx512.c; blocked.c picks them only where dispatch.c chose the AVX-512
 * kernels (so only on CPUs with AVX-512F, and not under HPVM_TENSOR_ISA=avx2 or generic). The
 * reorders transpose 16 x 16 blocks in registers; the depthwise sums are the fused
 * multiply-adds of the AVX-512 NCHW kernels, the same bits. */
#define SUFFIX _avx512
#include "blocked_isa.inc"
