/* The tensor kernels' compute loops for AVX2 with FMA (CMake compiles this file with
 * -mavx2 -mfma; dispatch.c picks them only when the CPU has both). */
#define SUFFIX avx2
#include "kernels_isa.inc"
