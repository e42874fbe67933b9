/* Packing the operands of products into the micro-kernels' panels (gemm.c's products and
 * contract.c's contractions share these): panels of `width` elements, dst[panel][kk][e], the
 * elements past the last zero; and the buffer a whole packing is made in, kept from one call
 * to the next. */
#include "kernels.h"

#include <string.h>

/* n floats from src to dst: a constant-size copy (inlined: a few vector moves) for the panel
 * widths of the kernels, memcpy otherwise. */
static inline void copy_run(float *dst, const float *src, int64_t n) {
  if (n == HPVM_TENSOR_CONTRACT_NR_WIDE)
    memcpy(dst, src, sizeof(float) * HPVM_TENSOR_CONTRACT_NR_WIDE);
  else if (n == HPVM_TENSOR_NR)
    memcpy(dst, src, sizeof(float) * HPVM_TENSOR_NR);
  else
    memcpy(dst, src, sizeof(float) * (size_t)n);
}

void hpvm_tensor_pack_rows(const float *a, int64_t lda, int64_t rows, int64_t kc, int64_t width,
                           float *dst) {
  /* A cache line's worth of depth (16 floats) of every row of the panel into a tile, then out
   * along the panel: the panel's rows are read side by side (their misses overlap, the next
   * line of each prefetched) rather than one short run after another. */
  enum { RUN = 16 };
  float tile[HPVM_TENSOR_CONTRACT_NR_WIDE][RUN];
  for (int64_t i = 0; i < rows; i += width, dst += width * kc) {
    int64_t live = rows - i < width ? rows - i : width;
    const float *first = a + i * lda;
    for (int64_t k0 = 0; k0 < kc; k0 += RUN) {
      int64_t n = kc - k0 < RUN ? kc - k0 : RUN;
      if (k0 + RUN < kc)
        for (int64_t r = 0; r < live; ++r)
          __builtin_prefetch(first + r * lda + k0 + RUN);
      for (int64_t r = 0; r < live; ++r)
        if (n == RUN)
          memcpy(tile[r], first + r * lda + k0, sizeof(tile[r]));
        else
          memcpy(tile[r], first + r * lda + k0, sizeof(float) * (size_t)n);
      for (int64_t kk = 0; kk < n; ++kk) {
        float *out = dst + (k0 + kk) * width;
        for (int64_t r = 0; r < live; ++r)
          out[r] = tile[r][kk];
        for (int64_t r = live; r < width; ++r)
          out[r] = 0.0f;
      }
    }
  }
}

void hpvm_tensor_pack_columns(const float *b, int64_t ldb, int64_t kc, int64_t cols,
                              int64_t width, float *dst) {
  /* Each depth's run of `cols` floats read once, start to end, and cut into the panels (the
   * runs are ldb apart, often a multiple of 4 KiB: read whole, each is what the prefetchers
   * follow). */
  for (int64_t kk = 0; kk < kc; ++kk, b += ldb) {
    float *out = dst + kk * width;
    for (int64_t j = 0; j < cols; j += width, out += width * kc) {
      int64_t live = cols - j < width ? cols - j : width;
      copy_run(out, b + j, live);
      if (live < width)
        memset(out + live, 0, sizeof(float) * (size_t)(width - live));
    }
  }
}
