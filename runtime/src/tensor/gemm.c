/* Tensor kernels of the CPU: matrix products, 2-D convolutions and pools in f32
 * (hpvm.tensor.mul, conv2d and pool, called by the code convert-hpvm-tensor-to-linalg makes).
 *
 * One driver serves products and strided convolutions: a problem is C[M x N] = A[M x K] *
 * B[K x N] where packers copy A into panels of MR rows and B into panels of NR columns (for
 * a convolution B is the im2col matrix of one image, packed straight from the image: no
 * im2col buffer). Both operands are packed whole first, each once, by parallel jobs (where
 * they fit HPVM_TENSOR_PACK_ALL_MAX; else each task packs its own blocks), then tasks of
 * (problem, MB rows, NB columns) run the micro-kernel over them on the runtime's thread pool.
 * Products of one or two rows skip the packing (the skinny kernel). Stride-1 convolutions run a
 * direct kernel, depthwise convolutions (one input channel per group) one per plane, pools one
 * plane per task. The inner loops are the AVX-512 ones where the CPU has them, the AVX2+FMA
 * ones when it has both, else the baseline ones (chosen once).
 *
 * These calls cannot fail: without memory for packing a task computes its block unpacked,
 * and without the thread pool the tasks run on the calling thread. */
#include "kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum {
  KC = 256, /* depth of a packed block: A (MB x KC) and B (KC x NB) stay in L2 */
  /* A task's block: MB_ROWS rows (a multiple of the micro-kernel's) x NB_PANELS of its column
   * panels, narrowed for small products: 192 x 256 with AVX2's 6 x 16, 192 x 512 with
   * AVX-512's 12 x 32. */
  MB_ROWS = 192,
  NB_PANELS = 16,
  /* Results rounded to a 16-bit format go through a buffer of this many. */
  NARROW_CHUNK = 256,
  /* Products of up to this many rows run unpacked (hpvm_tensor_skinny_fn): 1 x 4096 x 4096
   * 15.8 -> 6.5 ms, 2 rows 20.0 -> 12.6; from 3 rows the packed product is as fast. */
  SKINNY_ROWS = 2,
};

static const hpvm_tensor_kernels_t generic_kernels = {
    .micro = hpvm_tensor_micro_kernel_generic,
    .micro_mr = HPVM_TENSOR_MR,
    .micro_nr = HPVM_TENSOR_NR,
    .depthwise = hpvm_tensor_depthwise_generic,
    .direct = hpvm_tensor_conv_direct_generic,
    .direct_nr = HPVM_TENSOR_NR,
    .filters = hpvm_tensor_conv_filters_generic,
    .filters_pb = HPVM_TENSOR_PB,
    .taps_filters = hpvm_tensor_conv_taps_filters_generic,
    .taps_pb = HPVM_TENSOR_PB,
    .taps_direct = hpvm_tensor_conv_taps_direct_generic,
    .pack_half = hpvm_tensor_pack_half_generic,
    .narrow_half = hpvm_tensor_narrow_half_generic,
    .widen_half = hpvm_tensor_widen_half_generic,
    .pool_plane = hpvm_tensor_pool_plane_generic,
    .skinny = hpvm_tensor_skinny_generic,
    .activate = hpvm_tensor_activate_generic,
    .contract_fused = hpvm_tensor_contract_fused_generic,
    .contract_unfused = hpvm_tensor_contract_unfused_generic,
    .contract_fused_narrow = hpvm_tensor_contract_fused_generic,
    .contract_unfused_narrow = hpvm_tensor_contract_unfused_generic,
    .contract_mr = HPVM_TENSOR_MR,
    .contract_nr = HPVM_TENSOR_NR};

static hpvm_tensor_kernels_t select_kernels(void) {
  hpvm_tensor_kernels_t k = generic_kernels;
  const char *isa = getenv("HPVM_TENSOR_ISA");
  if (isa && *isa && strcmp(isa, "generic") && strcmp(isa, "avx2") && strcmp(isa, "avx512")) {
    hpvm_warning("HPVM_TENSOR_ISA=%s: expected generic, avx2 or avx512; using the CPU's best "
                 "kernels",
                 isa);
    isa = NULL;
  }
  if (isa && strcmp(isa, "generic") == 0)
    return k;
#ifdef HPVM_TENSOR_HAVE_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.micro = hpvm_tensor_micro_kernel_avx2;
    k.depthwise = hpvm_tensor_depthwise_avx2;
    k.direct = hpvm_tensor_conv_direct_avx2;
    k.filters = hpvm_tensor_conv_filters_avx2;
    k.taps_filters = hpvm_tensor_conv_taps_filters_avx2;
    k.taps_direct = hpvm_tensor_conv_taps_direct_avx2;
    k.pool_plane = hpvm_tensor_pool_plane_avx2;
    k.skinny = hpvm_tensor_skinny_avx2;
    k.activate = hpvm_tensor_activate_avx2;
    k.contract_fused = hpvm_tensor_contract_fused_avx2;
    k.contract_unfused = hpvm_tensor_contract_unfused_avx2;
    k.contract_fused_narrow = hpvm_tensor_contract_fused_avx2;
    k.contract_unfused_narrow = hpvm_tensor_contract_unfused_avx2;
    /* vcvtph2ps: every AVX2 CPU has F16C, but ask. */
    if (__builtin_cpu_supports("f16c")) {
      k.pack_half = hpvm_tensor_pack_half_avx2;
      k.narrow_half = hpvm_tensor_narrow_half_avx2;
      k.widen_half = hpvm_tensor_widen_half_avx2;
    }
#ifdef HPVM_TENSOR_HAVE_AVX512
    if (__builtin_cpu_supports("avx512f") && !(isa && strcmp(isa, "avx2") == 0)) {
      k.micro = hpvm_tensor_micro_kernel_avx512;
      k.micro_mr = HPVM_TENSOR_CONTRACT_MR_WIDE;
      k.micro_nr = HPVM_TENSOR_CONTRACT_NR_WIDE;
      k.direct = hpvm_tensor_conv_direct_avx512;
      k.direct_nr = HPVM_TENSOR_NR_WIDE;
      k.filters = hpvm_tensor_conv_filters_avx512;
      k.filters_pb = HPVM_TENSOR_PB_WIDE;
      k.taps_filters = hpvm_tensor_conv_taps_filters_avx512;
      k.taps_pb = HPVM_TENSOR_PB_WIDE;
      k.contract_fused = hpvm_tensor_contract_fused_avx512;
      k.contract_unfused = hpvm_tensor_contract_unfused_avx512;
      k.contract_mr = HPVM_TENSOR_CONTRACT_MR_WIDE;
      k.contract_nr = HPVM_TENSOR_CONTRACT_NR_WIDE;
      k.activate = hpvm_tensor_activate_avx512;
    }
#endif
  }
#endif
  return k;
}

static hpvm_tensor_kernels_t chosen_kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static int generic_only;

static void choose_kernels(void) { chosen_kernels = select_kernels(); }

const hpvm_tensor_kernels_t *hpvm_tensor_kernels(void) {
  if (generic_only)
    return &generic_kernels;
  pthread_once(&kernels_once, choose_kernels);
  return &chosen_kernels;
}

void hpvm_tensor_use_generic_kernels(int on) { generic_only = on; }

/* ------------------------------------------------------------------------------------------
 * Problems: where A, B and C of problem p are, and how to pack them.
 * ---------------------------------------------------------------------------------------- */

typedef struct problem_set_t problem_set_t;
struct problem_set_t {
  int64_t count, m, n, k;
  /* The micro-kernel and its register block (the panels' widths). */
  hpvm_tensor_micro_kernel_fn micro;
  int64_t mr, nr;
  /* Both operands packed whole before the blocks run (NULL: each task packs its own): chunk k0
   * of problem p's A at a_all + (p * k + k0) * rows_padded (its panels one after another, as a
   * task's a_pack), of its B at b_all + (p * k + k0) * cols_padded. */
  float *a_all;
  const float *b_all; /* packed after A in the same buffer, or a kept constant */
  int64_t rows_padded, cols_padded, a_groups, b_groups;
  /* B of every problem packed whole once and kept (constants' products), in b_all's layout for
   * the set's kernel, or NULL (then B is packed per call as above); asked for in solve, once
   * the kernel (its nr) is chosen. */
  const float *(*b_constant)(problem_set_t *set);
  /* Packs rows [i0, i0 + rows) x depth [k0, k0 + kc) of A(p) into MR-row panels. */
  void (*pack_a)(const problem_set_t *set, int64_t p, int64_t i0, int64_t rows, int64_t k0,
                 int64_t kc, float *dst);
  /* Packs depth [k0, k0 + kc) x columns [j0, j0 + cols) of B(p) into NR-column panels. */
  void (*pack_b)(const problem_set_t *set, int64_t p, int64_t k0, int64_t kc, int64_t j0,
                 int64_t cols, float *dst);
  /* A(p)[i][kk] and B(p)[kk][j], for the unpacked fallback. */
  float (*a_at)(const problem_set_t *set, int64_t p, int64_t i, int64_t kk);
  float (*b_at)(const problem_set_t *set, int64_t p, int64_t kk, int64_t j);
  float *(*c_of)(const problem_set_t *set, int64_t p, int64_t *ldc);
  /* Matrix products: row-major A, B, C, one after another per problem; a16 and b16 instead
   * of a and b when the operands are stored in the 16-bit `format` (0: f32), to which every
   * result is then rounded. */
  const float *a, *b;
  float *c;
  const uint16_t *a16, *b16;
  int64_t format;
  /* Convolutions: the NCHW image and the FCHW filter (A of every problem of a group). */
  const float *image, *weights;
  /* The epilogue: bias (per row of a convolution's problem = per filter, or per column of a
   * product; NULL: none) and activation. */
  const float *bias;
  int bias_per_row;
  int64_t activation;
  float activation_max;
  /* Convolutions: the shapes. */
  int64_t channels, height, width, filters, kernel_h, kernel_w, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, groups;
};

/* Matrix products. */
static void matmul_pack_a(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows,
                          int64_t k0, int64_t kc, float *dst) {
  hpvm_tensor_pack_rows(s->a + p * s->m * s->k + i0 * s->k + k0, s->k, rows, kc, s->mr, dst);
}
static void matmul_pack_b(const problem_set_t *s, int64_t p, int64_t k0, int64_t kc,
                          int64_t j0, int64_t cols, float *dst) {
  hpvm_tensor_pack_columns(s->b + p * s->k * s->n + k0 * s->n + j0, s->n, kc, cols, s->nr, dst);
}
static float matmul_a_at(const problem_set_t *s, int64_t p, int64_t i, int64_t kk) {
  return s->a[p * s->m * s->k + i * s->k + kk];
}
static float matmul_b_at(const problem_set_t *s, int64_t p, int64_t kk, int64_t j) {
  return s->b[p * s->k * s->n + kk * s->n + j];
}
static float *matmul_c_of(const problem_set_t *s, int64_t p, int64_t *ldc) {
  *ldc = s->n;
  return s->c + p * s->m * s->n;
}

/* Matrix products of 16-bit operands: widened to f32 as they are packed (A one panel of mr
 * rows at a time through a small buffer, B by the kernels' pack_half). */
static void matmul_pack_a_half(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows,
                               int64_t k0, int64_t kc, float *dst) {
  const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
  const uint16_t *a = s->a16 + p * s->m * s->k + i0 * s->k + k0;
  float panel[HPVM_TENSOR_CONTRACT_MR_WIDE * KC];
  for (int64_t i = 0; i < rows; i += s->mr, dst += s->mr * kc) {
    int64_t live = rows - i < s->mr ? rows - i : s->mr;
    for (int64_t r = 0; r < live; ++r)
      kernels->widen_half(a + (i + r) * s->k, panel + r * kc, kc, s->format);
    hpvm_tensor_pack_rows(panel, kc, live, kc, s->mr, dst);
  }
}
static void matmul_pack_b_half(const problem_set_t *s, int64_t p, int64_t k0, int64_t kc,
                               int64_t j0, int64_t cols, float *dst) {
  hpvm_tensor_kernels()->pack_half(s->b16 + p * s->k * s->n + k0 * s->n + j0, s->n, kc, cols,
                                   s->nr, dst, s->format);
}
static float matmul_a_at_half(const problem_set_t *s, int64_t p, int64_t i, int64_t kk) {
  return hpvm_tensor_widen(s->a16[p * s->m * s->k + i * s->k + kk], s->format);
}
static float matmul_b_at_half(const problem_set_t *s, int64_t p, int64_t kk, int64_t j) {
  return hpvm_tensor_widen(s->b16[p * s->k * s->n + kk * s->n + j], s->format);
}

/* Convolutions: problem p = (image, group); A = the group's filters (F/G x Cg*KH*KW, the
 * filter tensor itself), B = the im2col matrix of the image's group channels. */
static void conv_pack_a(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows, int64_t k0,
                        int64_t kc, float *dst) {
  int64_t group = p % s->groups;
  hpvm_tensor_pack_rows(s->weights + (group * s->m + i0) * s->k + k0, s->k, rows, kc, s->mr, dst);
}

static const float *conv_image(const problem_set_t *s, int64_t p) {
  int64_t image = p / s->groups, group = p % s->groups;
  int64_t per_group = s->channels / s->groups;
  return s->image + ((image * s->channels) + group * per_group) * s->height * s->width;
}

static float conv_b_at(const problem_set_t *s, int64_t p, int64_t kk, int64_t j) {
  int64_t window = s->kernel_h * s->kernel_w;
  int64_t c = kk / window, i = kk % window / s->kernel_w, jj = kk % s->kernel_w;
  int64_t y = j / s->out_w, x = j % s->out_w;
  int64_t iy = y * s->stride_h + i - s->pad_h, ix = x * s->stride_w + jj - s->pad_w;
  if (iy < 0 || iy >= s->height || ix < 0 || ix >= s->width)
    return 0.0f;
  return conv_image(s, p)[(c * s->height + iy) * s->width + ix];
}

static void conv_pack_b(const problem_set_t *s, int64_t p, int64_t k0, int64_t kc, int64_t j0,
                        int64_t cols, float *dst) {
  const float *image = conv_image(s, p);
  int64_t window = s->kernel_h * s->kernel_w, positions = s->out_h * s->out_w;
  for (int64_t j = j0; j < j0 + cols; j += s->nr) {
    for (int64_t kk = k0; kk < k0 + kc; ++kk) {
      int64_t c = kk / window, i = kk % window / s->kernel_w, jj = kk % s->kernel_w;
      const float *plane = image + c * s->height * s->width;
      int64_t t = 0;
      while (t < s->nr) {
        int64_t position = j + t;
        if (position >= j0 + cols || position >= positions) {
          for (; t < s->nr; ++t)
            dst[t] = 0.0f;
          break;
        }
        /* A run of output columns on one output row. */
        int64_t y = position / s->out_w, x = position % s->out_w;
        int64_t run = s->out_w - x;
        if (run > s->nr - t)
          run = s->nr - t;
        if (run > j0 + cols - position)
          run = j0 + cols - position;
        int64_t iy = y * s->stride_h + i - s->pad_h;
        if (iy < 0 || iy >= s->height) {
          memset(dst + t, 0, sizeof(float) * (size_t)run);
        } else {
          const float *row = plane + iy * s->width;
          int64_t ix = x * s->stride_w + jj - s->pad_w;
          for (int64_t u = 0; u < run; ++u, ix += s->stride_w)
            dst[t + u] = ix >= 0 && ix < s->width ? row[ix] : 0.0f;
        }
        t += run;
      }
      dst += s->nr;
    }
  }
}

static float conv_a_at(const problem_set_t *s, int64_t p, int64_t i, int64_t kk) {
  int64_t group = p % s->groups;
  return s->weights[(group * s->m + i) * s->k + kk];
}

static float *conv_c_of(const problem_set_t *s, int64_t p, int64_t *ldc) {
  int64_t image = p / s->groups, group = p % s->groups;
  *ldc = s->out_h * s->out_w;
  return s->c + (image * s->filters + group * s->m) * *ldc;
}

/* ------------------------------------------------------------------------------------------
 * Epilogues
 * ---------------------------------------------------------------------------------------- */

/* bias and activation over a rows x cols block of C; bias[row_bias + i] per row or
 * bias[col_bias + j] per column. */
static void epilogue(float *c, int64_t ldc, int64_t rows, int64_t cols, const float *bias,
                     int per_row, int64_t row_bias, int64_t col_bias, int64_t activation,
                     float max) {
  if (!bias && activation == HPVM_RT_TENSOR_IDENTITY)
    return;
  /* The logistic activations in vectors, after the bias. */
  int logistic = hpvm_tensor_logistic(activation);
  int64_t scalar = logistic ? HPVM_RT_TENSOR_IDENTITY : activation;
  hpvm_tensor_activate_fn activate = logistic ? hpvm_tensor_kernels()->activate : NULL;
  for (int64_t i = 0; i < rows; ++i) {
    float *row = c + i * ldc;
    float row_add = bias && per_row ? bias[row_bias + i] : 0.0f;
    const float *col_add = bias && !per_row ? bias + col_bias : NULL;
    if (bias || !logistic)
      for (int64_t j = 0; j < cols; ++j)
        row[j] = hpvm_tensor_activate(row[j] + row_add + (col_add ? col_add[j] : 0.0f),
                                      scalar, max);
    if (activate)
      activate(row, cols, activation, max);
  }
}

/* The epilogue of a block of problem p (rows from i0, columns from j0). */
static void block_epilogue(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows,
                           int64_t j0, int64_t cols) {
  int64_t ldc;
  float *c = s->c_of(s, p, &ldc) + i0 * ldc + j0;
  int64_t first_row = s->groups > 0 ? (p % s->groups) * s->m + i0 : i0;
  epilogue(c, ldc, rows, cols, s->bias, s->bias_per_row, first_row, j0, s->activation,
           s->activation_max);
  if (s->format) {
    /* The results stored in the format: rounded, a row segment at a time. */
    const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
    uint16_t stored[NARROW_CHUNK];
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; j += NARROW_CHUNK) {
        int64_t count = cols - j < NARROW_CHUNK ? cols - j : NARROW_CHUNK;
        kernels->narrow_half(c + i * ldc + j, stored, count, s->format);
        kernels->widen_half(stored, c + i * ldc + j, count, s->format);
      }
  }
}

/* ------------------------------------------------------------------------------------------
 * Tasks
 * ---------------------------------------------------------------------------------------- */

#define ceil_div hpvm_tensor_ceil_div

void hpvm_tensor_task_shape(int64_t problems, int64_t m, int64_t n, int64_t mr, int64_t nr,
                            int64_t *rows, int64_t *cols) {
  int64_t threads = hpvm_rt_thread_count();
  while (*cols > nr && problems * ceil_div(m, *rows) * ceil_div(n, *cols) < 4 * threads)
    *cols = ceil_div(*cols / nr, 2) * nr;
  while (*rows > mr && problems * ceil_div(m, *rows) * ceil_div(n, *cols) < 4 * threads)
    *rows -= mr;
}

/* C block rows [i0, i0 + rows) x columns [j0, j0 + cols) of problem p, unpacked (the
 * fallback without memory). */
static void block_unpacked(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows,
                           int64_t j0, int64_t cols) {
  int64_t ldc;
  float *c = s->c_of(s, p, &ldc);
  for (int64_t i = i0; i < i0 + rows; ++i)
    for (int64_t j = j0; j < j0 + cols; ++j) {
      float sum = 0.0f;
      for (int64_t kk = 0; kk < s->k; ++kk)
        sum += s->a_at(s, p, i, kk) * s->b_at(s, p, kk, j);
      c[i * ldc + j] = sum;
    }
  block_epilogue(s, p, i0, rows, j0, cols);
}

static void block(const problem_set_t *s, int64_t p, int64_t i0, int64_t rows, int64_t j0,
                  int64_t cols) {
  int64_t kc_max = s->k < KC ? s->k : KC;
  float *a_pack = NULL, *b_pack = NULL;
  if (!s->a_all)
    a_pack = hpvm_tensor_alloc_panels(ceil_div(rows, s->mr) * s->mr * kc_max);
  if (!s->b_all)
    b_pack = hpvm_tensor_alloc_panels(ceil_div(cols, s->nr) * s->nr * kc_max);
  if ((!s->a_all && !a_pack) || (!s->b_all && !b_pack)) {
    free(a_pack);
    free(b_pack);
    block_unpacked(s, p, i0, rows, j0, cols);
    return;
  }
  hpvm_tensor_micro_kernel_fn micro = s->micro;
  int64_t mr = s->mr, nr = s->nr, ldc;
  float *c = s->c_of(s, p, &ldc);
  if (s->k == 0) {
    for (int64_t i = i0; i < i0 + rows; ++i)
      memset(c + i * ldc + j0, 0, sizeof(float) * (size_t)cols);
  }
  for (int64_t k0 = 0; k0 < s->k; k0 += KC) {
    int64_t kc = s->k - k0 < KC ? s->k - k0 : KC;
    const float *a_chunk, *b_chunk;
    if (s->a_all) {
      a_chunk = s->a_all + (p * s->k + k0) * s->rows_padded + i0 * kc;
    } else {
      s->pack_a(s, p, i0, rows, k0, kc, a_pack);
      a_chunk = a_pack;
    }
    if (s->b_all) {
      b_chunk = s->b_all + (p * s->k + k0) * s->cols_padded + j0 * kc;
    } else {
      s->pack_b(s, p, k0, kc, j0, cols, b_pack);
      b_chunk = b_pack;
    }
    for (int64_t i = 0; i < rows; i += mr) {
      const float *a_panel = a_chunk + i * kc;
      int64_t live_rows = rows - i < mr ? rows - i : mr;
      for (int64_t j = 0; j < cols; j += nr) {
        const float *b_panel = b_chunk + j * kc;
        int64_t live_cols = cols - j < nr ? cols - j : nr;
        micro(kc, a_panel, b_panel, c + (i0 + i) * ldc + j0 + j, ldc, live_rows, live_cols,
              k0 > 0);
      }
    }
  }
  block_epilogue(s, p, i0, rows, j0, cols);
  free(a_pack);
  free(b_pack);
}

/* Packing both operands whole first: jobs of PACK_PANELS panels of one chunk of one problem.
 * x: A's groups of panels, then B's; y: (problem, chunk of KC). */
enum { PACK_PANELS = 8 };
static void pack_jobs(void *context, const hpvm_rt_instance_range_t *range) {
  const problem_set_t *s = context;
  int64_t chunks = ceil_div(s->k, KC);
  for (int64_t y = range->begin[1]; y < range->end[1]; ++y) {
    int64_t p = y / chunks, k0 = (y % chunks) * KC, kc = s->k - k0 < KC ? s->k - k0 : KC;
    for (int64_t job = range->begin[0]; job < range->end[0]; ++job) {
      if (job < s->a_groups) {
        int64_t i0 = job * PACK_PANELS * s->mr;
        int64_t rows = s->m - i0 < PACK_PANELS * s->mr ? s->m - i0 : PACK_PANELS * s->mr;
        s->pack_a(s, p, i0, rows, k0, kc, s->a_all + (p * s->k + k0) * s->rows_padded + i0 * kc);
      } else {
        int64_t j0 = (job - s->a_groups) * PACK_PANELS * s->nr;
        int64_t cols = s->n - j0 < PACK_PANELS * s->nr ? s->n - j0 : PACK_PANELS * s->nr;
        float *b_all = s->a_all + s->count * s->rows_padded * s->k;
        s->pack_b(s, p, k0, kc, j0, cols, b_all + (p * s->k + k0) * s->cols_padded + j0 * kc);
      }
    }
  }
}

typedef struct tasks_t {
  const problem_set_t *set;
  int64_t row_blocks, col_blocks, rows_per_task, cols_per_task;
} tasks_t;

/* x: column blocks; y: (problem, row block). */
static void run_tasks(void *context, const hpvm_rt_instance_range_t *range) {
  const tasks_t *t = context;
  const problem_set_t *s = t->set;
  for (int64_t y = range->begin[1]; y < range->end[1]; ++y) {
    int64_t p = y / t->row_blocks, i0 = (y % t->row_blocks) * t->rows_per_task;
    int64_t rows = s->m - i0 < t->rows_per_task ? s->m - i0 : t->rows_per_task;
    for (int64_t x = range->begin[0]; x < range->end[0]; ++x) {
      int64_t j0 = x * t->cols_per_task;
      int64_t cols = s->n - j0 < t->cols_per_task ? s->n - j0 : t->cols_per_task;
      block(s, p, i0, rows, j0, cols);
    }
  }
}

void hpvm_tensor_run_grid(uint32_t rank, const int64_t extents[2],
                          hpvm_rt_parallel_for_fn_t body, void *context) {
  hpvm_status_t status = hpvm_rt_parallel_for(rank, extents, body, context);
  if (status) {
    /* No pool (threads could not start): the caller runs everything. */
    hpvm_status_free(status);
    hpvm_rt_instance_range_t all = {{0, 0, 0}, {extents[0], rank > 1 ? extents[1] : 1, 1},
                                    {extents[0], rank > 1 ? extents[1] : 1, 1}, rank, 0};
    body(context, &all);
  }
}

static void solve(problem_set_t *s) {
  if (s->count <= 0 || s->m <= 0 || s->n <= 0)
    return;
  /* One ISA's kernel for the whole call: its block decides how everything is packed. */
  const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
  s->micro = kernels->micro;
  s->mr = kernels->micro_mr;
  s->nr = kernels->micro_nr;
  tasks_t t = {s, 0, 0, ceil_div(MB_ROWS, s->mr) * s->mr, NB_PANELS * s->nr};
  /* Enough tasks for the pool when there are few problems. */
  hpvm_tensor_task_shape(s->count, s->m, s->n, s->mr, s->nr, &t.rows_per_task, &t.cols_per_task);
  t.row_blocks = ceil_div(s->m, t.rows_per_task);
  t.col_blocks = ceil_div(s->n, t.cols_per_task);
  /* Tasks packing their own blocks pack A once per column block and B once per row block;
   * where both fit HPVM_TENSOR_PACK_ALL_MAX, they are packed whole first, each once. */
  s->rows_padded = ceil_div(s->m, s->mr) * s->mr;
  s->cols_padded = ceil_div(s->n, s->nr) * s->nr;
  /* A B packed once for good (a constant's, hpvm_rt_tensor_matmul_constant_f32) is used as
   * it is; only A is packed then. */
  const float *constant_b = s->b_constant && s->k > 0 ? s->b_constant(s) : NULL;
  int64_t packed = s->count * (s->rows_padded + (constant_b ? 0 : s->cols_padded)) * s->k;
  float *packs = NULL;
  if (s->k > 0 && (t.row_blocks * t.col_blocks > 1 || constant_b) &&
      packed <= HPVM_TENSOR_PACK_ALL_MAX / (int64_t)sizeof(float) &&
      (packs = hpvm_tensor_take_buffer(packed))) {
    s->a_all = packs;
    s->b_all = constant_b ? constant_b : packs + s->count * s->rows_padded * s->k;
    s->a_groups = ceil_div(s->rows_padded / s->mr, PACK_PANELS);
    s->b_groups = constant_b ? 0 : ceil_div(s->cols_padded / s->nr, PACK_PANELS);
    int64_t jobs[2] = {s->a_groups + s->b_groups, s->count * ceil_div(s->k, KC)};
    hpvm_tensor_run_grid(2, jobs, pack_jobs, s);
  } else if (constant_b && s->k > 0) {
    s->b_all = constant_b; /* each task packs its own A */
  }
  int64_t extents[2] = {t.col_blocks, s->count * t.row_blocks};
  hpvm_tensor_run_grid(2, extents, run_tasks, &t);
  hpvm_tensor_give_back(packs);
  s->a_all = NULL;
  s->b_all = NULL;
}

static int valid_counts(const char *what, int count, const int64_t *values) {
  for (int i = 0; i < count; ++i)
    if (values[i] < 0) {
      hpvm_warning("%s: negative size %lld; nothing computed", what, (long long)values[i]);
      return 0;
    }
  return 1;
}

static int valid_activation(const char *what, int64_t activation) {
  if (activation < HPVM_RT_TENSOR_IDENTITY || activation > HPVM_RT_TENSOR_SILU) {
    hpvm_warning("%s: unknown activation %lld (expected 0: identity, 1: relu, 2: clipped "
                 "relu, 3: sigmoid, 4: silu); nothing computed", what, (long long)activation);
    return 0;
  }
  return 1;
}

/* Products of at most SKINNY_ROWS rows (fully connected layers at batch 1 or 2): tasks of
 * (problem, HPVM_TENSOR_SKINNY_COLS columns), each through the ISA's skinny kernel, unpacked.
 * x: column blocks; y: problems. */
static void run_skinny(void *context, const hpvm_rt_instance_range_t *range) {
  const problem_set_t *s = context;
  hpvm_tensor_skinny_fn skinny = hpvm_tensor_kernels()->skinny;
  for (int64_t p = range->begin[1]; p < range->end[1]; ++p)
    for (int64_t x = range->begin[0]; x < range->end[0]; ++x) {
      int64_t j0 = x * HPVM_TENSOR_SKINNY_COLS;
      int64_t cols = s->n - j0 < HPVM_TENSOR_SKINNY_COLS ? s->n - j0 : HPVM_TENSOR_SKINNY_COLS;
      float *c = s->c + p * s->m * s->n + j0;
      if (s->k == 0)
        for (int64_t i = 0; i < s->m; ++i)
          memset(c + i * s->n, 0, sizeof(float) * (size_t)cols);
      else
        skinny(s->m, s->k, KC, s->a + p * s->m * s->k, s->k, s->b + p * s->k * s->n + j0, s->n,
               c, s->n, cols);
      block_epilogue(s, p, 0, s->m, j0, cols);
    }
}

/* B of every problem, packed as solve's b_all: chunk k0 of problem p at (p * k + k0) *
 * cols_padded, its NR-column panels one after another. */
static void pack_constant_b(void *context, float *out) {
  const problem_set_t *s = context;
  for (int64_t p = 0; p < s->count; ++p)
    for (int64_t k0 = 0; k0 < s->k; k0 += KC) {
      int64_t kc = s->k - k0 < KC ? s->k - k0 : KC;
      s->pack_b(s, p, k0, kc, 0, s->n, out + (p * s->k + k0) * s->cols_padded);
    }
}

static const float *constant_b(problem_set_t *s) {
  int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {4, s->count, s->k, s->n, s->nr, KC, 0, 0};
  return hpvm_tensor_packed_constant(s->b, NULL, layout,
                                     (size_t)(s->count * s->cols_padded * s->k),
                                     pack_constant_b, s);
}

/* The f32 products of both entry points: `what` names the caller in warnings; `b_constant`
 * (or NULL) keeps B packed (hpvm_rt_tensor_matmul_constant_f32). Products of at most
 * SKINNY_ROWS rows read B as it is: nothing to pack, nothing to keep. */
static void matmul_f32(const char *what, const float *a, const float *b, const float *bias,
                       float *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                       int64_t activation, double activation_max,
                       const float *(*b_constant)(problem_set_t *set)) {
  int64_t sizes[] = {batch, m, n, k};
  if (!valid_counts(what, 4, sizes) || !a || !b || !c || !valid_activation(what, activation))
    return;
  problem_set_t s = {0};
  s.count = batch, s.m = m, s.n = n, s.k = k;
  s.a = a, s.b = b, s.c = c;
  s.bias = bias, s.bias_per_row = 0, s.activation = activation;
  s.activation_max = (float)activation_max;
  s.pack_a = matmul_pack_a, s.pack_b = matmul_pack_b;
  s.a_at = matmul_a_at, s.b_at = matmul_b_at, s.c_of = matmul_c_of;
  if (m <= SKINNY_ROWS && n > 0 && batch > 0) {
    int64_t extents[2] = {ceil_div(n, HPVM_TENSOR_SKINNY_COLS), batch};
    hpvm_tensor_run_grid(2, extents, run_skinny, &s);
    return;
  }
  s.b_constant = b_constant;
  solve(&s);
}

void hpvm_rt_tensor_matmul_f32(const float *a, const float *b, const float *bias, float *c,
                               int64_t batch, int64_t m, int64_t n, int64_t k,
                               int64_t activation, double activation_max) {
  matmul_f32("hpvm_rt_tensor_matmul_f32", a, b, bias, c, batch, m, n, k, activation,
             activation_max, NULL);
}

void hpvm_rt_tensor_matmul_constant_f32(const float *a, const float *b, const float *bias,
                                        float *c, int64_t batch, int64_t m, int64_t n,
                                        int64_t k, int64_t activation, double activation_max) {
  matmul_f32("hpvm_rt_tensor_matmul_constant_f32", a, b, bias, c, batch, m, n, k, activation,
             activation_max, constant_b);
}

void hpvm_rt_tensor_matmul_half(const uint16_t *a, const uint16_t *b, const float *bias,
                                float *c, int64_t batch, int64_t m, int64_t n, int64_t k,
                                int64_t activation, double activation_max, int64_t format) {
  int64_t sizes[] = {batch, m, n, k};
  if (!valid_counts("hpvm_rt_tensor_matmul_half", 4, sizes) || !a || !b || !c ||
      !valid_activation("hpvm_rt_tensor_matmul_half", activation))
    return;
  if (format != HPVM_RT_TENSOR_FP16 && format != HPVM_RT_TENSOR_BF16) {
    hpvm_warning("hpvm_rt_tensor_matmul_half: unknown format %lld (expected 1: fp16, 2: bf16); "
                 "nothing computed", (long long)format);
    return;
  }
  problem_set_t s = {0};
  s.count = batch, s.m = m, s.n = n, s.k = k;
  s.a16 = a, s.b16 = b, s.c = c, s.format = format;
  s.bias = bias, s.bias_per_row = 0, s.activation = activation;
  s.activation_max = (float)activation_max;
  s.pack_a = matmul_pack_a_half, s.pack_b = matmul_pack_b_half;
  s.a_at = matmul_a_at_half, s.b_at = matmul_b_at_half, s.c_of = matmul_c_of;
  solve(&s);
}

typedef struct depthwise_t {
  const float *input, *filter, *bias;
  float *output;
  int64_t activation;
  float activation_max;
  int64_t channels, height, width, kernel_h, kernel_w, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w;
} depthwise_t;

static void run_depthwise(void *context, const hpvm_rt_instance_range_t *range) {
  const depthwise_t *d = context;
  const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
  hpvm_tensor_depthwise_fn kernel = kernels->depthwise;
  /* The logistic activations over each finished plane (in the cache), with the widest
   * vectors the CPU has: the depthwise kernel's own are 8 floats wide. */
  int logistic = hpvm_tensor_logistic(d->activation);
  int64_t floats = hpvm_tensor_depthwise_scratch(d->width, d->kernel_h, d->kernel_w, d->out_h,
                                                 d->out_w, d->pad_w, d->stride_h, d->stride_w);
  /* Zeroed once: every plane writes the same positions (the padding stays zero). Without
   * memory, or for a window too large, the kernel runs its scalar loops. */
  float *scratch = floats ? calloc((size_t)floats, sizeof(float)) : NULL;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane) {
    int64_t c = plane % d->channels;
    kernel(d->input + plane * d->height * d->width, d->height, d->width,
           d->filter + c * d->kernel_h * d->kernel_w, d->kernel_h, d->kernel_w,
           d->output + plane * d->out_h * d->out_w, d->out_h, d->out_w, d->pad_h, d->pad_w,
           d->stride_h, d->stride_w, d->bias ? d->bias[c] : 0.0f,
           logistic ? HPVM_RT_TENSOR_IDENTITY : d->activation, d->activation_max, scratch);
    if (logistic)
      kernels->activate(d->output + plane * d->out_h * d->out_w, d->out_h * d->out_w,
                        d->activation, d->activation_max);
  }
  free(scratch);
}

/* Stride-1 convolutions run directly over blocks of MR filters x NR output columns, the
 * filters packed once per call. Without padding (and on rows of 4 blocks or more) the kernel
 * reads the image itself (the last block of a row, which would read past it, from a small
 * zero-filled copy); otherwise each task first pads the rows of the image it needs (all
 * channels of a group) into a slab. No im2col matrix is made: for the small filter counts of
 * early layers, packing it cost more than the products. A task is (image, group, rows, a range
 * of whole NR-column blocks). */
typedef struct direct_t {
  const float *input, *weights, *bias;
  /* The filters packed as [group][filter block][channel][kh][kw][block] (NULL without memory),
   * blocks of MR filters, or of FB for narrow outputs (then also the bias as [group][filter
   * block][FB], or NULL: none). */
  const float *packed, *packed_bias;
  int narrow;
  float *output;
  int64_t activation;
  float activation_max;
  int64_t channels, height, width, filters, kernel_h, kernel_w, out_h, out_w, pad_h, pad_w;
  int64_t groups, per_group_c, per_group_f, filter_blocks, rows_per_task, row_blocks, plane_w;
  int64_t cols_per_task, col_blocks;
  /* Narrow jobs (run_narrow): the images, and how many one task takes; the filter blocks of
   * a task, in filter_tasks ranges of blocks_per_task (several per chunk of images when there
   * are few images: one image alone would otherwise run on one thread). */
  int64_t images, images_per_task, filter_tasks, blocks_per_task;
} direct_t;

/* Plain loops for one task's block when a slab cannot be allocated. */
static void direct_unpacked(const direct_t *d, int64_t image, int64_t group, int64_t y0,
                            int64_t rows, int64_t x_begin, int64_t x_end, int64_t o_begin,
                            int64_t o_end) {
  for (int64_t o = group * d->per_group_f + o_begin; o < group * d->per_group_f + o_end; ++o)
    for (int64_t y = y0; y < y0 + rows; ++y)
      for (int64_t x = x_begin; x < x_end; ++x) {
        float sum = 0.0f;
        for (int64_t ch = 0; ch < d->per_group_c; ++ch)
          for (int64_t i = 0; i < d->kernel_h; ++i)
            for (int64_t j = 0; j < d->kernel_w; ++j) {
              int64_t iy = y + i - d->pad_h, ix = x + j - d->pad_w;
              if (iy >= 0 && iy < d->height && ix >= 0 && ix < d->width)
                sum += d->input[((image * d->channels + group * d->per_group_c + ch) *
                                     d->height + iy) * d->width + ix] *
                       d->weights[((o * d->per_group_c + ch) * d->kernel_h + i) *
                                      d->kernel_w + j];
            }
        d->output[((image * d->filters + o) * d->out_h + y) * d->out_w + x] =
            hpvm_tensor_activate(sum + (d->bias ? d->bias[o] : 0.0f), d->activation,
                                 d->activation_max);
      }
}

/* Filters f0 .. f1 - 1 of the group (f0 a multiple of MR) at one block of `cols` (<= NR)
 * positions, from `src` laid out as the kernel wants it (its row src_y and column src_x being
 * the window's origin). `out` is the block's first output of the group's first filter; filter
 * r's is out[r * out_plane]. */
static void direct_filters(const direct_t *d, hpvm_tensor_conv_direct_fn kernel,
                           const float *src, int64_t plane_h, int64_t plane_w, int64_t src_y,
                           int64_t src_x, float *out, int64_t out_plane, int64_t group,
                           int64_t cols, int64_t f0, int64_t f1) {
  int64_t window = d->kernel_h * d->kernel_w;
  kernel(src, d->per_group_c, plane_h, plane_w,
         d->packed + (group * d->filter_blocks + f0 / HPVM_TENSOR_MR) * d->per_group_c *
                         window * HPVM_TENSOR_MR,
         d->kernel_h, d->kernel_w, out + f0 * out_plane, out_plane, src_y, src_x, f1 - f0, cols,
         d->bias ? d->bias + group * d->per_group_f + f0 : NULL, d->activation,
         d->activation_max);
}

/* How many filters the direct kernel takes per pass over a task's positions: their packed
 * weights stay in the cache (about 512 KiB) through the pass, instead of all the group's
 * weights streaming from memory for each block of positions. A multiple of MR. */
static int64_t filters_per_pass(const direct_t *d) {
  int64_t bytes = d->per_group_c * d->kernel_h * d->kernel_w * (int64_t)sizeof(float);
  int64_t fit = (512 * 1024 / (bytes > 0 ? bytes : 1)) / HPVM_TENSOR_MR * HPVM_TENSOR_MR;
  return fit > HPVM_TENSOR_MR ? fit : HPVM_TENSOR_MR;
}

/* Rows narrower than a block, with too few filters for the kernel across filters (narrow
 * jobs are run_narrow's): the task's padded rows lie end to end in the slab (row width
 * plane_w), and the direct kernel runs over blocks of NR consecutive slab positions, spanning
 * rows, the positions past out_w on a row computed and dropped. Each block goes through a
 * tile. */
static void direct_flat(const direct_t *d, const hpvm_tensor_kernels_t *k,
                        const float *slab, int64_t slab_h, int64_t plane_w, float *out,
                        int64_t rows, int64_t group) {
  float tile[HPVM_TENSOR_MR * HPVM_TENSOR_NR];
  int64_t out_plane = d->out_h * d->out_w, window = d->kernel_h * d->kernel_w;
  int64_t end = (rows - 1) * plane_w + d->out_w; /* one past the last position used */
  for (int64_t p = 0; p < end; p += HPVM_TENSOR_NR)
    for (int64_t fb = 0; fb < d->filter_blocks; ++fb) {
      int64_t live = d->per_group_f - fb * HPVM_TENSOR_MR;
      if (live > HPVM_TENSOR_MR)
        live = HPVM_TENSOR_MR;
      const float *bias = d->bias ? d->bias + group * d->per_group_f + fb * HPVM_TENSOR_MR
                                  : NULL;
      k->direct(slab, d->per_group_c, slab_h, plane_w,
                d->packed + (group * d->filter_blocks + fb) * d->per_group_c * window *
                                HPVM_TENSOR_MR,
                d->kernel_h, d->kernel_w, tile, HPVM_TENSOR_NR, 0, p, live, HPVM_TENSOR_NR,
                bias, d->activation, d->activation_max);
      float *filters = out + fb * HPVM_TENSOR_MR * out_plane;
      for (int64_t pos = p; pos < p + HPVM_TENSOR_NR && pos < end;) {
        int64_t y = pos / plane_w, x = pos % plane_w;
        int64_t run = plane_w - x < p + HPVM_TENSOR_NR - pos ? plane_w - x
                                                              : p + HPVM_TENSOR_NR - pos;
        int64_t valid = x < d->out_w ? (d->out_w - x < run ? d->out_w - x : run) : 0;
        for (int64_t r = 0; r < live && valid > 0; ++r)
          memcpy(filters + r * out_plane + y * d->out_w + x, tile + r * HPVM_TENSOR_NR + pos - p,
                 sizeof(float) * (size_t)valid);
        pos += run;
      }
    }
}

/* Narrow jobs (outputs narrower than a block, filters enough for the kernel across filters):
 * a task is a chunk of images of one group, their padded planes end to end in one slab (image
 * after image, each out_h + kh - 1 rows of the padded width). Each block of filters runs over
 * every block of positions of the chunk (a block may span rows and images: each position has
 * its own window offset), so its packed weights are read from the cache, not from memory, for
 * all of them. Every output is the sum the kernel makes for it alone: what the chunk holds
 * changes no result. */
static void run_narrow(void *context, const hpvm_rt_instance_range_t *range) {
  const direct_t *d = context;
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  float tile[HPVM_TENSOR_FB * HPVM_TENSOR_PB_WIDE];
  int64_t out_plane = d->out_h * d->out_w, window = d->kernel_h * d->kernel_w;
  int64_t plane_w = d->width + 2 * d->pad_w, image_h = d->out_h + d->kernel_h - 1;
  int64_t pb = k->filters_pb;
  for (int64_t task = range->begin[0]; task < range->end[0]; ++task) {
    int64_t filter_task = task % d->filter_tasks, chunk = task / d->filter_tasks;
    int64_t group = chunk % d->groups, first = chunk / d->groups * d->images_per_task;
    int64_t images = d->images - first < d->images_per_task ? d->images - first
                                                            : d->images_per_task;
    int64_t fb0 = filter_task * d->blocks_per_task;
    int64_t fb1 = fb0 + d->blocks_per_task < d->filter_blocks ? fb0 + d->blocks_per_task
                                                              : d->filter_blocks;
    int64_t slab_h = images * image_h;
    float *slab = malloc(sizeof(float) * (size_t)(d->per_group_c * slab_h * plane_w));
    if (!slab) {
      int64_t o_end = fb1 * HPVM_TENSOR_FB < d->per_group_f ? fb1 * HPVM_TENSOR_FB
                                                              : d->per_group_f;
      for (int64_t i = 0; i < images; ++i)
        direct_unpacked(d, first + i, group, 0, d->out_h, 0, d->out_w, fb0 * HPVM_TENSOR_FB,
                        o_end);
      continue;
    }
    for (int64_t i = 0; i < images; ++i) {
      const float *planes =
          d->input + ((first + i) * d->channels + group * d->per_group_c) * d->height * d->width;
      for (int64_t ch = 0; ch < d->per_group_c; ++ch)
        for (int64_t sy = 0; sy < image_h; ++sy) {
          float *row = slab + (ch * slab_h + i * image_h + sy) * plane_w;
          int64_t iy = sy - d->pad_h;
          memset(row, 0, sizeof(float) * (size_t)plane_w);
          if (iy >= 0 && iy < d->height)
            memcpy(row + d->pad_w, planes + (ch * d->height + iy) * d->width,
                   sizeof(float) * (size_t)d->width);
        }
    }
    int64_t count = images * out_plane; /* positions (image, y, x) of the chunk */
    for (int64_t fb = fb0; fb < fb1; ++fb) {
      int64_t live = d->per_group_f - fb * HPVM_TENSOR_FB;
      if (live > HPVM_TENSOR_FB)
        live = HPVM_TENSOR_FB;
      int64_t at = group * d->filter_blocks + fb;
      const float *weights = d->packed + at * d->per_group_c * window * HPVM_TENSOR_FB;
      const float *bias = d->packed_bias ? d->packed_bias + at * HPVM_TENSOR_FB : NULL;
      for (int64_t p = 0; p < count; p += pb) {
        int64_t offset[HPVM_TENSOR_PB_WIDE];
        int64_t live_q = count - p < pb ? count - p : pb;
        for (int64_t q = 0; q < pb; ++q) {
          int64_t pos = p + (q < live_q ? q : 0); /* past the end: position p again */
          int64_t image = pos / out_plane, rest = pos % out_plane;
          offset[q] = (image * image_h + rest / d->out_w) * plane_w + rest % d->out_w;
        }
        k->filters(slab, offset, d->per_group_c, slab_h * plane_w, plane_w, weights,
                   d->kernel_h, d->kernel_w, bias, d->activation, d->activation_max, tile);
        for (int64_t q = 0; q < live_q; ++q) {
          int64_t pos = p + q, image = first + pos / out_plane, rest = pos % out_plane;
          float *out = d->output +
                       (image * d->filters + group * d->per_group_f + fb * HPVM_TENSOR_FB) *
                           out_plane +
                       rest;
          for (int64_t r = 0; r < live; ++r)
            out[r * out_plane] = tile[q * HPVM_TENSOR_FB + r];
        }
      }
    }
    free(slab);
  }
}

static void run_direct(void *context, const hpvm_rt_instance_range_t *range) {
  const direct_t *d = context;
  const hpvm_tensor_kernels_t *k = hpvm_tensor_kernels();
  hpvm_tensor_conv_direct_fn kernel = k->direct;
  int64_t out_plane = d->out_h * d->out_w;
  /* In place only where most blocks of a row are (narrow rows: copying each block's window
   * would cost more than the slab); rows narrower than a block lie end to end. Wide rows go
   * in blocks of the kernel's widest (direct_nr), flat ones in blocks of NR. */
  int flat = d->out_w < HPVM_TENSOR_NR;
  int64_t nr = flat ? HPVM_TENSOR_NR : k->direct_nr;
  int64_t tail_w = nr + d->kernel_w - 1;
  int padded = flat || d->pad_h > 0 || d->pad_w > 0 || d->width < 4 * tail_w;
  int64_t flat_w = d->width + 2 * d->pad_w;
  for (int64_t task = range->begin[0]; task < range->end[0]; ++task) {
    int64_t chunk = task % d->col_blocks, rest = task / d->col_blocks;
    int64_t block = rest % d->row_blocks, problem = rest / d->row_blocks;
    int64_t image = problem / d->groups, group = problem % d->groups;
    int64_t y0 = block * d->rows_per_task;
    int64_t rows = d->out_h - y0 < d->rows_per_task ? d->out_h - y0 : d->rows_per_task;
    int64_t x_begin = chunk * d->cols_per_task;
    int64_t x_end = d->out_w - x_begin < d->cols_per_task ? d->out_w : x_begin + d->cols_per_task;
    /* Flat slabs: the rows the windows read, then zero rows for the last block's reach. */
    int64_t slab_h = flat      ? rows + d->kernel_h - 1 + (tail_w + flat_w - 1) / flat_w
                     : padded ? rows + d->kernel_h - 1
                              : d->kernel_h;
    int64_t slab_w = flat ? flat_w : padded ? d->plane_w : tail_w;
    float *slab = d->packed ? malloc(sizeof(float) * (size_t)(d->per_group_c * slab_h * slab_w))
                            : NULL;
    if (!slab) {
      direct_unpacked(d, image, group, y0, rows, x_begin, x_end, 0, d->per_group_f);
      continue;
    }
    const float *planes =
        d->input + (image * d->channels + group * d->per_group_c) * d->height * d->width;
    /* The output of the group's first filter at row y0. */
    float *out = d->output + (image * d->filters + group * d->per_group_f) * out_plane +
                 y0 * d->out_w;
    if (padded) {
      for (int64_t ch = 0; ch < d->per_group_c; ++ch) {
        const float *plane = planes + ch * d->height * d->width;
        for (int64_t sy = 0; sy < slab_h; ++sy) {
          float *row = slab + (ch * slab_h + sy) * slab_w;
          int64_t iy = y0 + sy - d->pad_h;
          memset(row, 0, sizeof(float) * (size_t)slab_w);
          if (iy >= 0 && iy < d->height && sy < rows + d->kernel_h - 1)
            memcpy(row + d->pad_w, plane + iy * d->width, sizeof(float) * (size_t)d->width);
        }
      }
    }
    if (flat) {
      direct_flat(d, k, slab, slab_h, slab_w, out, rows, group);
      free(slab);
      continue;
    }
    int64_t pass = filters_per_pass(d);
    for (int64_t f0 = 0; f0 < d->per_group_f; f0 += pass) {
      int64_t f1 = d->per_group_f - f0 < pass ? d->per_group_f : f0 + pass;
      for (int64_t y = y0; y < y0 + rows; ++y)
        for (int64_t x0 = x_begin; x0 < x_end; x0 += nr) {
          /* A last partial block moves back to end at x_end where the range holds a whole one
           * (its first columns computed twice, the same values): whole blocks keep the kernel's
           * accumulators in registers. */
          if (x_end - x0 < nr && x_end - x_begin >= nr)
            x0 = x_end - nr;
          int64_t cols = x_end - x0 < nr ? x_end - x0 : nr;
          float *block_out = out + (y - y0) * d->out_w + x0;
          if (padded) {
            direct_filters(d, kernel, slab, slab_h, d->plane_w, y - y0, x0, block_out,
                           out_plane, group, cols, f0, f1);
          } else if (x0 + tail_w <= d->width) {
            /* The image itself: every column read lies on the row. */
            direct_filters(d, kernel, planes, d->height, d->width, y, x0, block_out, out_plane,
                           group, cols, f0, f1);
          } else {
            /* The last block of a row: its window rows copied, zero-filled past the row. */
            int64_t live = d->width - x0;
            for (int64_t ch = 0; ch < d->per_group_c; ++ch)
              for (int64_t i = 0; i < d->kernel_h; ++i) {
                float *row = slab + (ch * slab_h + i) * tail_w;
                memcpy(row, planes + (ch * d->height + y + i) * d->width + x0,
                       sizeof(float) * (size_t)live);
                memset(row + live, 0, sizeof(float) * (size_t)(tail_w - live));
              }
            direct_filters(d, kernel, slab, slab_h, tail_w, 0, 0, block_out, out_plane, group,
                           cols, f0, f1);
          }
        }
    }
    free(slab);
  }
}

/* The filters of a direct job in its kernels' layout ([group][filter block][channel][kh][kw]
 * [block], zeros past a group's last filter), then, for narrow jobs with a bias, the bias as
 * [group][filter block][FB]. */
static void pack_direct(void *context, float *out) {
  const direct_t *d = context;
  int64_t block = d->narrow ? HPVM_TENSOR_FB : HPVM_TENSOR_MR, window = d->kernel_h * d->kernel_w;
  float *dst = out;
  for (int64_t g = 0; g < d->groups; ++g)
    for (int64_t fb = 0; fb < d->filter_blocks; ++fb)
      for (int64_t ch = 0; ch < d->per_group_c; ++ch)
        for (int64_t k = 0; k < window; ++k)
          for (int64_t r = 0; r < block; ++r) {
            int64_t o = fb * block + r;
            *dst++ = o < d->per_group_f
                         ? d->weights[((g * d->per_group_f + o) * d->per_group_c + ch) * window + k]
                         : 0.0f;
          }
  for (int64_t i = 0; d->narrow && d->bias && i < d->groups * d->filter_blocks * block; ++i) {
    int64_t g = i / (d->filter_blocks * block), o = i % (d->filter_blocks * block);
    *dst++ = o < d->per_group_f ? d->bias[g * d->per_group_f + o] : 0.0f;
  }
}

/* `constant`: the filter and bias are constants of the program, packed once (constants.c). */
/* The logistic activations over `planes` finished output planes of `plane` floats, a task per
 * plane on the pool. */
typedef struct activate_job_t {
  float *output;
  int64_t plane, activation;
  float max;
} activate_job_t;

static void run_activate(void *context, const hpvm_rt_instance_range_t *range) {
  const activate_job_t *j = context;
  hpvm_tensor_activate_fn activate = hpvm_tensor_kernels()->activate;
  for (int64_t p = range->begin[0]; p < range->end[0]; ++p)
    activate(j->output + p * j->plane, j->plane, j->activation, j->max);
}

void hpvm_tensor_activate_planes(float *output, int64_t planes, int64_t plane,
                                 int64_t activation, float max) {
  activate_job_t job = {output, plane, activation, max};
  int64_t extents[2] = {planes, 1};
  hpvm_tensor_run_grid(1, extents, run_activate, &job);
}

static void conv_direct(const float *input, const float *filter, const float *bias,
                        float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                        int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                        int64_t pad_w, int64_t groups, int64_t activation, float max,
                        int constant) {
  if (hpvm_tensor_logistic(activation)) {
    /* The kernels keep their accumulators in registers with the short epilogues only (the
     * sigmoid inlined in them made every convolution 1.5-2x slower): the logistic
     * activations run after, over the finished planes, the same bits. */
    conv_direct(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w,
                groups, HPVM_RT_TENSOR_IDENTITY, max, constant);
    hpvm_tensor_activate_planes(output, n * f, oh * ow, activation, max);
    return;
  }
  direct_t job;
  direct_t *d = &job;
  /* Outputs narrower than NR with enough filters per group: vectors across filters. */
  int narrow = ow < HPVM_TENSOR_NR && f / groups >= 12;
  int64_t block = narrow ? HPVM_TENSOR_FB : HPVM_TENSOR_MR;
  *d = (direct_t){input, filter, bias, NULL, NULL, narrow, output, activation, max,
                  c, h, w, f, kh, kw, oh, ow, pad_h, pad_w, groups,
                  c / groups, f / groups, ceil_div(f / groups, block), oh, 1,
                  ow + kw + HPVM_TENSOR_NR_WIDE, ceil_div(ow, HPVM_TENSOR_NR) * HPVM_TENSOR_NR, 1,
                  0, 1, 1, ceil_div(f / groups, block)};
  int64_t weight_floats = groups * d->filter_blocks * d->per_group_c * kh * kw * block;
  int64_t bias_floats = narrow && bias ? groups * d->filter_blocks * block : 0;
  float *own = NULL;
  if (constant) {
    int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {1, c, f, kh, kw, groups, block, bias_floats};
    job.packed = hpvm_tensor_packed_constant(filter, bias_floats ? bias : NULL, layout,
                                             (size_t)(weight_floats + bias_floats), pack_direct,
                                             d);
  }
  if (!job.packed) {
    own = malloc(sizeof(float) * (size_t)(weight_floats + bias_floats));
    if (own)
      pack_direct(d, own);
    job.packed = own;
  }
  job.packed_bias = job.packed && bias_floats ? job.packed + weight_floats : NULL;
  int64_t threads = hpvm_rt_thread_count();
  if (narrow && job.packed) {
    /* Chunks of images of about 96 positions (a block of filters then serves 8 blocks of
     * positions), smaller while the pool would have fewer than 4 tasks per thread. */
    d->images = n;
    d->images_per_task = ceil_div(96, oh * ow);
    while (d->images_per_task > 1 && ceil_div(n, d->images_per_task) * groups < 4 * threads)
      d->images_per_task = ceil_div(d->images_per_task, 2);
    /* Still too few tasks (one image: resnet18's last layers at batch 1 ran on one thread):
     * the filter blocks split over tasks too, each copying the chunk's input. */
    int64_t chunks = ceil_div(n, d->images_per_task) * groups;
    d->blocks_per_task = d->filter_blocks;
    while (d->blocks_per_task > 1 &&
           chunks * ceil_div(d->filter_blocks, d->blocks_per_task) < 4 * threads)
      d->blocks_per_task = ceil_div(d->blocks_per_task, 2);
    d->filter_tasks = ceil_div(d->filter_blocks, d->blocks_per_task);
    int64_t extents[2] = {chunks * d->filter_tasks, 1};
    hpvm_tensor_run_grid(1, extents, run_narrow, &job);
    free(own);
    return;
  }
  /* Enough tasks for the pool: fewer rows per task, then narrower column ranges. */
  while (d->rows_per_task > 1 && n * groups * ceil_div(oh, d->rows_per_task) < 4 * threads)
    d->rows_per_task = ceil_div(d->rows_per_task, 2);
  d->row_blocks = ceil_div(oh, d->rows_per_task);
  while (d->cols_per_task > HPVM_TENSOR_NR &&
         n * groups * d->row_blocks * ceil_div(ow, d->cols_per_task) < 4 * threads)
    d->cols_per_task = ceil_div(d->cols_per_task / HPVM_TENSOR_NR, 2) * HPVM_TENSOR_NR;
  d->col_blocks = ceil_div(ow, d->cols_per_task);
  int64_t extents[2] = {n * groups * d->row_blocks * d->col_blocks, 1};
  hpvm_tensor_run_grid(1, extents, run_direct, &job);
  free(own);
}

int hpvm_tensor_conv_args_valid(const char *what, const float *input, const float *filter,
                                const float *output, int64_t n, int64_t c, int64_t h,
                                int64_t w, int64_t f, int64_t kh, int64_t kw, int64_t oh,
                                int64_t ow, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                int64_t stride_w, int64_t groups, int64_t activation) {
  int64_t sizes[] = {n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w};
  if (!valid_counts(what, 11, sizes) || !input || !filter || !output ||
      !valid_activation(what, activation))
    return 0;
  if (stride_h <= 0 || stride_w <= 0 || groups <= 0 || c % groups || f % groups ||
      oh != (h + 2 * pad_h - kh) / stride_h + 1 || ow != (w + 2 * pad_w - kw) / stride_w + 1) {
    hpvm_warning("%s: inconsistent shapes or parameters (input %lldx%lld"
                 "x%lldx%lld, %lld filters %lldx%lld, output %lldx%lld, stride %lldx%lld, %lld "
                 "groups); nothing computed",
                 what, (long long)n, (long long)c, (long long)h, (long long)w, (long long)f,
                 (long long)kh, (long long)kw, (long long)oh, (long long)ow,
                 (long long)stride_h, (long long)stride_w, (long long)groups);
    return 0;
  }
  return 1;
}

/* A filter's taps [i0, i0 + kh) x [j0, j0 + kw) of a window of src_kh x src_kw. */
typedef struct crop_t {
  const float *filter;
  int64_t planes, src_kh, src_kw, i0, j0, kh, kw; /* planes: filters x channels per group */
} crop_t;

static void crop_filter(void *context, float *out) {
  const crop_t *c = context;
  for (int64_t p = 0; p < c->planes; ++p)
    for (int64_t i = 0; i < c->kh; ++i)
      memcpy(out + (p * c->kh + i) * c->kw,
             c->filter + (p * c->src_kh + c->i0 + i) * c->src_kw + c->j0,
             sizeof(float) * (size_t)c->kw);
}

/* The taps of one axis that read the image for some output: [*first, *last]. */
static void live_taps(int64_t size, int64_t window, int64_t pad, int64_t stride, int64_t out,
                      int64_t *first, int64_t *last) {
  int64_t lo = pad - (out - 1) * stride, hi = pad + size - 1;
  *first = lo > 0 ? lo : 0;
  *last = hi < window - 1 ? hi : window - 1;
}

static void conv2d(const char *what, const float *input, const float *filter,
                   const float *bias, float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                   int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                   int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                   int64_t activation, double activation_max, int constant) {
  if (!hpvm_tensor_conv_args_valid(what, input, filter, output, n, c, h, w, f, kh, kw, oh, ow,
                                   pad_h, pad_w, stride_h, stride_w, groups, activation))
    return;
  /* Taps that only ever read padding (a small image under a wide window: a 3 x 3 window
   * padded by 1 over a 1 x 1 image reads its center only) are dropped when the rest is a
   * convolution of symmetric padding: the same sums without the products by zero (resnet18
   * on 32 x 32 images: its last 3 x 3 convolutions read 1/9 of their weights). */
  int64_t i0, i1, j0, j1;
  live_taps(h, kh, pad_h, stride_h, oh, &i0, &i1);
  live_taps(w, kw, pad_w, stride_w, ow, &j0, &j1);
  if ((i0 > 0 || i1 < kh - 1 || j0 > 0 || j1 < kw - 1) && i0 <= i1 && j0 <= j1) {
    int64_t ckh = i1 - i0 + 1, ckw = j1 - j0 + 1, cpad_h = pad_h - i0, cpad_w = pad_w - j0;
    if (cpad_h >= 0 && cpad_w >= 0 && (h + 2 * cpad_h - ckh) / stride_h + 1 == oh &&
        (w + 2 * cpad_w - ckw) / stride_w + 1 == ow) {
      crop_t crop = {filter, f * (c / groups), kh, kw, i0, j0, ckh, ckw};
      size_t floats = (size_t)(f * (c / groups) * ckh * ckw);
      const float *cropped = NULL;
      float *own = NULL;
      if (constant) {
        /* The crop of a constant is a constant: made once, its address stable. */
        int64_t layout[HPVM_TENSOR_LAYOUT_WORDS] = {3, f, c / groups, kh, kw, i0, j0,
                                                    ckh * kw + ckw};
        cropped = hpvm_tensor_packed_constant(filter, NULL, layout, floats, crop_filter, &crop);
      }
      if (!cropped) {
        own = malloc(sizeof(float) * (floats ? floats : 1));
        if (own)
          crop_filter(&crop, own);
        cropped = own;
      }
      if (cropped) {
        conv2d(what, input, cropped, bias, output, n, c, h, w, f, ckh, ckw, oh, ow, cpad_h,
               cpad_w, stride_h, stride_w, groups, activation, activation_max, constant && !own);
        free(own);
        return;
      }
    }
  }
  float max = (float)activation_max;
  if (groups == c && f == c) {
    depthwise_t d = {input, filter, bias, output, activation, max, c, h, w, kh, kw, oh, ow,
                     pad_h, pad_w, stride_h, stride_w};
    int64_t extents[2] = {n * c, 1};
    hpvm_tensor_run_grid(1, extents, run_depthwise, &d);
    return;
  }
  if (kh == 1 && kw == 1 && pad_h == 0 && pad_w == 0 && stride_h == 1 && stride_w == 1) {
    /* Pointwise: every image plane is one row of h * w columns. */
    w *= h, ow *= oh;
    h = oh = 1;
  }
  if (stride_h == 1 && stride_w == 1 && oh > 0 && ow > 0) {
    conv_direct(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h, pad_w, groups,
                activation, max, constant);
    return;
  }
  if (f / groups >= 4) {
    /* Strided: the approximate convolutions' tap lists with nothing skipped, 16 filters x 6
     * positions at any offsets; about 3x faster than packing im2col blocks for the product
     * below. */
    hpvm_tensor_conv_taps(input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow, pad_h,
                          pad_w, stride_h, stride_w, groups, activation, max,
                          HPVM_RT_TENSOR_KNOB_EXACT, 0, 0, constant);
    return;
  }
  problem_set_t s = {0};
  s.count = n * groups, s.m = f / groups, s.n = oh * ow, s.k = (c / groups) * kh * kw;
  s.image = input, s.weights = filter, s.c = output;
  s.channels = c, s.height = h, s.width = w, s.filters = f, s.kernel_h = kh, s.kernel_w = kw;
  s.out_h = oh, s.out_w = ow, s.pad_h = pad_h, s.pad_w = pad_w;
  s.stride_h = stride_h, s.stride_w = stride_w, s.groups = groups;
  s.bias = bias, s.bias_per_row = 1, s.activation = activation, s.activation_max = max;
  s.pack_a = conv_pack_a, s.pack_b = conv_pack_b;
  s.a_at = conv_a_at, s.b_at = conv_b_at, s.c_of = conv_c_of;
  solve(&s);
}

void hpvm_rt_tensor_conv2d_f32(const float *input, const float *filter, const float *bias,
                               float *output, int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t f, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                               int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w,
                               int64_t groups, int64_t activation, double activation_max) {
  conv2d("hpvm_rt_tensor_conv2d_f32", input, filter, bias, output, n, c, h, w, f, kh, kw, oh, ow,
         pad_h, pad_w, stride_h, stride_w, groups, activation, activation_max, 0);
}

void hpvm_rt_tensor_conv2d_constant_f32(const float *input, const float *filter,
                                        const float *bias, float *output, int64_t n, int64_t c,
                                        int64_t h, int64_t w, int64_t f, int64_t kh, int64_t kw,
                                        int64_t oh, int64_t ow, int64_t pad_h, int64_t pad_w,
                                        int64_t stride_h, int64_t stride_w, int64_t groups,
                                        int64_t activation, double activation_max) {
  conv2d("hpvm_rt_tensor_conv2d_constant_f32", input, filter, bias, output, n, c, h, w, f, kh,
         kw, oh, ow, pad_h, pad_w, stride_h, stride_w, groups, activation, activation_max, 1);
}

/* Pooling: one plane per task item, by the ISA's pool_plane kernel. */
typedef struct pool_t {
  const float *input;
  float *output;
  int64_t kind, height, width, window_h, window_w, stride_h, stride_w, pad_h, pad_w;
  int64_t out_h, out_w;
} pool_t;

static void run_pool(void *context, const hpvm_rt_instance_range_t *range) {
  const pool_t *p = context;
  hpvm_tensor_pool_plane_fn plane_kernel = hpvm_tensor_kernels()->pool_plane;
  for (int64_t plane = range->begin[0]; plane < range->end[0]; ++plane)
    plane_kernel(p->input + plane * p->height * p->width,
                 p->output + plane * p->out_h * p->out_w, p->kind, p->height, p->width,
                 p->window_h, p->window_w, p->stride_h, p->stride_w, p->pad_h, p->pad_w,
                 p->out_h, p->out_w);
}

void hpvm_rt_tensor_pool_f32(const float *input, float *output, int64_t kind, int64_t n,
                             int64_t c, int64_t h, int64_t w, int64_t window_h,
                             int64_t window_w, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w, int64_t oh, int64_t ow) {
  int64_t sizes[] = {n, c, h, w, pad_h, pad_w, oh, ow};
  if (!valid_counts("hpvm_rt_tensor_pool_f32", 8, sizes) || !input || !output)
    return;
  if (kind < HPVM_RT_TENSOR_POOL_MAX || kind > HPVM_RT_TENSOR_POOL_MEAN || window_h <= 0 ||
      window_w <= 0 || stride_h <= 0 || stride_w <= 0 ||
      oh != (h + 2 * pad_h - window_h) / stride_h + 1 ||
      ow != (w + 2 * pad_w - window_w) / stride_w + 1) {
    hpvm_warning("hpvm_rt_tensor_pool_f32: inconsistent kind, window, strides or shapes (kind "
                 "%lld, input %lldx%lld, window %lldx%lld, stride %lldx%lld, output %lldx%lld); "
                 "nothing computed",
                 (long long)kind, (long long)h, (long long)w, (long long)window_h,
                 (long long)window_w, (long long)stride_h, (long long)stride_w, (long long)oh,
                 (long long)ow);
    return;
  }
  pool_t p = {input, output, kind, h, w, window_h, window_w, stride_h, stride_w,
              pad_h, pad_w, oh, ow};
  int64_t extents[2] = {n * c, 1};
  hpvm_tensor_run_grid(1, extents, run_pool, &p);
}
