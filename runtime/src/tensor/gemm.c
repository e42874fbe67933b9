/* Matrix products of the CPU in f32 and 16-bit formats (hpvm.tensor.mul, called by the code
 * convert-hpvm-tensor-to-linalg makes), and the im2col convolutions (conv.c's last resort).
 *
 * One driver serves products and those convolutions: a problem is C[M x N] = A[M x K] *
 * B[K x N] where packers copy A into panels of MR rows and B into panels of NR columns (for
 * a convolution B is the im2col matrix of one image, packed straight from the image: no
 * im2col buffer). Both operands are packed whole first, each once, by parallel jobs (where
 * they fit HPVM_TENSOR_PACK_ALL_MAX; else each task packs its own blocks), then tasks of
 * (problem, MB rows, NB columns) run the micro-kernel over them on the runtime's thread pool.
 * Products of one or two rows skip the packing (the skinny kernel). The inner loops are the
 * ISA's (dispatch.c).
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
  int logistic = hpvm_tensor_activation_late(activation);
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
    hpvm_scratch_free(a_pack);
    hpvm_scratch_free(b_pack);
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
  hpvm_scratch_free(a_pack);
  hpvm_scratch_free(b_pack);
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
  double work = (double)s->count * (double)s->m * (double)s->n * (double)s->k;
  float *packs = NULL;
  if (s->k > 0 && (t.row_blocks * t.col_blocks > 1 || constant_b) &&
      packed <= HPVM_TENSOR_PACK_ALL_MAX / (int64_t)sizeof(float) &&
      (packs = hpvm_tensor_alloc_panels(packed))) {
    s->a_all = packs;
    s->b_all = constant_b ? constant_b : packs + s->count * s->rows_padded * s->k;
    s->a_groups = ceil_div(s->rows_padded / s->mr, PACK_PANELS);
    s->b_groups = constant_b ? 0 : ceil_div(s->cols_padded / s->nr, PACK_PANELS);
    int64_t jobs[2] = {s->a_groups + s->b_groups, s->count * ceil_div(s->k, KC)};
    hpvm_tensor_run_sized(2, jobs, pack_jobs, s, work);
  } else if (constant_b && s->k > 0) {
    s->b_all = constant_b; /* each task packs its own A */
  }
  int64_t extents[2] = {t.col_blocks, s->count * t.row_blocks};
  hpvm_tensor_run_sized(2, extents, run_tasks, &t, work);
  hpvm_scratch_free(packs);
  s->a_all = NULL;
  s->b_all = NULL;
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
  if (!hpvm_tensor_sizes_valid(what, 4, sizes) || !a || !b || !c ||
      !hpvm_tensor_activation_valid(what, activation))
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
  if (!hpvm_tensor_sizes_valid("hpvm_rt_tensor_matmul_half", 4, sizes) || !a || !b || !c ||
      !hpvm_tensor_activation_valid("hpvm_rt_tensor_matmul_half", activation))
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

/* A convolution as products: problem (image, group) is the group's filters times the image's
 * im2col matrix, packed straight from the image. */
void hpvm_tensor_conv_im2col(const float *input, const float *filter, const float *bias,
                             float *output, int64_t n, int64_t c, int64_t h, int64_t w, int64_t f,
                             int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t pad_h,
                             int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t groups,
                             int64_t activation, float max) {
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
