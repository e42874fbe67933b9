/* Host of examples/vector_add.mlir calling it as an embedder would, through the guarded entry
 * point: an error of the compiled code (here the same array passed as an input and as the
 * output: hpvm.track of it twice; a grid larger than the arrays) comes back as a status
 * instead of ending the process, what the abandoned call tracked is untracked, and the next
 * calls, with the same arrays, run. */
#include "hpvm_examples.h"
#include <hpvm/hpvm_rt.h>
#include <stdio.h>
#include <stdlib.h>

void __hpvm_guarded_vadd(void **args);

static hpvm_status_t vadd(hpvm_memref_f32_1d_t *a, hpvm_memref_f32_1d_t *b,
                          hpvm_memref_f32_1d_t *c, long n) {
  void *args[] = {a, b, c, &n};
  return hpvm_rt_call_guarded(__hpvm_guarded_vadd, args);
}

int main(void) {
  long n = 1000;
  float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  float *c = malloc(sizeof(float) * n);
  for (long i = 0; i < n; ++i)
    a[i] = (float)i, b[i] = 2.0f * (float)i, c[i] = -1.0f;
  hpvm_memref_f32_1d_t A = hpvm_memref_f32_1d(a, n), B = hpvm_memref_f32_1d(b, n),
                       C = hpvm_memref_f32_1d(c, n);
  int failed = 0;
  for (int round = 0; round < 2; ++round) {
    hpvm_status_t status = vadd(&A, &B, &A, n); /* a is both an input and the output */
    printf("aliased call %d: %s: %s\n", round, hpvm_status_code_name(hpvm_status_code(status)),
           hpvm_status_message(status));
    failed |= status == NULL;
    hpvm_status_free(status);
  }
  /* A grid larger than the arrays: refused before any instance runs (OUT_OF_RANGE), not
   * written past them. */
  hpvm_status_t status = vadd(&A, &B, &C, 4 * n);
  printf("grid of %ld over %ld elements: %s: %s\n", 4 * n, n,
         hpvm_status_code_name(hpvm_status_code(status)), hpvm_status_message(status));
  failed |= status == NULL;
  hpvm_status_free(status);
  status = vadd(&A, &B, &C, n);
  long wrong = 0;
  for (long i = 0; i < n; ++i)
    wrong += c[i] != 3.0f * (float)i;
  printf("separate arrays: %s, wrong=%ld\n", status ? hpvm_status_message(status) : "ok", wrong);
  failed |= status != NULL || wrong != 0;
  hpvm_status_free(status);
  /* Not a guarded call: the compiled code's policy, exit(1) with the message. */
  fflush(stdout);
  if (getenv("UNGUARDED")) {
    extern void _mlir_ciface_vadd(hpvm_memref_f32_1d_t *, hpvm_memref_f32_1d_t *,
                                  hpvm_memref_f32_1d_t *, long);
    _mlir_ciface_vadd(&A, &B, &A, n);
    printf("not reached\n");
  }
  free(a), free(b), free(c);
  return failed;
}
