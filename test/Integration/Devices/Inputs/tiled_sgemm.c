// Tiled sgemm (benchmarks/opencl/sgemm_tiled.h: per-tile scratch memory, barriers in a
// loop) run once and checked: integer-valued inputs make every sum exact, so the result must
// equal the naive product bit for bit. Usage: tiled_sgemm [M N K]
#include <stdio.h>
#include <stdlib.h>

#include "sgemm_tiled.h"

int main(int argc, char **argv) {
  int m = argc > 3 ? atoi(argv[1]) : 70, n = argc > 3 ? atoi(argv[2]) : 45,
      k = argc > 3 ? atoi(argv[3]) : 37;
  size_t bytes_A = (size_t)m * k * sizeof(float), bytes_B = (size_t)k * n * sizeof(float),
         bytes_C = (size_t)m * n * sizeof(float);
  float *A = malloc(bytes_A), *B = malloc(bytes_B), *C = malloc(bytes_C);
  for (long i = 0; i < (long)m * k; ++i)
    A[i] = (float)((i * 7) % 5) - 2.0f;
  for (long i = 0; i < (long)k * n; ++i)
    B[i] = (float)((i * 3) % 5) - 2.0f;
  for (long i = 0; i < (long)m * n; ++i)
    C[i] = -1.0f;
  __hpvm__init();
  llvm_hpvm_track_mem(A, bytes_A);
  llvm_hpvm_track_mem(B, bytes_B);
  llvm_hpvm_track_mem(C, bytes_C);
  RootIn *args = sgemm_tiled_args(A, B, C, m, n, k);
  void *dfg = __hpvm__launch(0, root, (void *)args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(C, bytes_C);
  long wrong = 0;
  double total = 0.0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p)
        sum += A[(long)i * k + p] * B[(long)p * n + j];
      wrong += C[(long)i * n + j] != sum;
      total += C[(long)i * n + j] < 0 ? -C[(long)i * n + j] : C[(long)i * n + j];
    }
  printf("tiled_sgemm: %dx%dx%d sum|C|=%.1f wrong=%ld\n", m, n, k, total, wrong);
  llvm_hpvm_untrack_mem(A);
  llvm_hpvm_untrack_mem(B);
  llvm_hpvm_untrack_mem(C);
  __hpvm__cleanup();
  free(args);
  free(A);
  free(B);
  free(C);
  return wrong != 0;
}
