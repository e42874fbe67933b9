/* fake_cublas.c - a stand-in libcublas over host memory (the fake libcuda's device pointers are
 * host addresses): handles, streams and column-major sgemm with real arithmetic, call counters,
 * and failures on request (FAKE_CUBLAS_FAIL=<entry point>: CUBLAS_STATUS_NOT_SUPPORTED). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/cuda/cuda_libraries.h"

#define EXPORT __attribute__((visibility("default")))

enum { SUCCESS = 0, INVALID_VALUE = 7, EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };

static _Atomic long live_handles, products;

EXPORT long fake_cublas_live_handles(void) { return atomic_load(&live_handles); }
EXPORT long fake_cublas_products(void) { return atomic_load(&products); }

static int failing(const char *name) {
  const char *text = getenv("FAKE_CUBLAS_FAIL");
  return text && strcmp(text, name) == 0;
}

struct cublasContext {
  int magic;
  CUstream stream;
};

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (failing("cublasCreate_v2"))
    return NOT_SUPPORTED;
  *handle = calloc(1, sizeof(**handle));
  (*handle)->magic = 11;
  atomic_fetch_add(&live_handles, 1);
  return SUCCESS;
}
EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (!handle || handle->magic != 11)
    return INVALID_VALUE;
  atomic_fetch_sub(&live_handles, 1);
  free(handle);
  return SUCCESS;
}
EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, CUstream stream) {
  handle->stream = stream;
  return SUCCESS;
}

/* C = alpha * A B + beta * C, column-major, no transposes. */
static cublasStatus_t gemm(cublasHandle_t handle, int ta, int tb, int m, int n, int k,
                           const float *alpha, const float *a, int lda, const float *b, int ldb,
                           const float *beta, float *c, int ldc) {
  if (!handle || handle->magic != 11 || (uintptr_t)handle->stream != 0x2)
    return EXECUTION_FAILED;
  if (ta != 0 || tb != 0 || m < 0 || n < 0 || k < 0 || lda < (m > 1 ? m : 1) ||
      ldb < (k > 1 ? k : 1) || ldc < (m > 1 ? m : 1))
    return INVALID_VALUE;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += (double)a[i + (long)l * lda] * b[l + (long)j * ldb];
      float *element = &c[i + (long)j * ldc];
      *element = *alpha * (float)sum + (*beta != 0.0f ? *beta * *element : 0.0f);
    }
  return SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, int ta, int tb, int m, int n, int k,
                                     const float *alpha, const float *a, int lda, const float *b,
                                     int ldb, const float *beta, float *c, int ldc) {
  if (failing("cublasSgemm_v2"))
    return NOT_SUPPORTED;
  cublasStatus_t status = gemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status == SUCCESS)
    atomic_fetch_add(&products, 1);
  return status;
}

EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, int ta, int tb, int m,
                                                int n, int k, const float *alpha, const float *a,
                                                int lda, long long stride_a, const float *b,
                                                int ldb, long long stride_b, const float *beta,
                                                float *c, int ldc, long long stride_c,
                                                int batch) {
  if (failing("cublasSgemmStridedBatched"))
    return NOT_SUPPORTED;
  if (batch < 0)
    return INVALID_VALUE;
  for (int i = 0; i < batch; ++i) {
    cublasStatus_t status = gemm(handle, ta, tb, m, n, k, alpha, a + i * stride_a, lda,
                                 b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
    if (status != SUCCESS)
      return status;
  }
  atomic_fetch_add(&products, 1);
  return SUCCESS;
}
