/* Exact contractions for compiled leaves (hpvm_rt_contract_f32): s[y][x] = the fold of a
 * leaf's step over kk from init, bit for bit the sequential loop, at GEMM speed.
 *
 * The driver of gemm.c, changed where exactness needs it: p is packed into panels of MR rows (y)
 * and q into panels of NR columns (x, the contiguous direction of s), KC deep at a time, from
 * any element strides (contiguous copies where the stride along the panel is 1). Tasks of (MB
 * rows, NB columns) run over the runtime's pool. The micro-kernel (kernels_isa.inc) keeps one
 * accumulator per element: it starts from init on the first KC chunk and from the partial
 * accumulator it loads from s on the next ones, so that every element sees the sequential
 * fold's rounded operations in its order (never a partial sum from 0 added afterwards). Which
 * operations: those of the leaf's step, found by calling it once on inputs where a fused
 * multiply-add and a rounded product then a rounded sum differ.
 *
 * Without memory for packing a task folds its blocks through the step itself, unpacked. */
#include "kernels.h"

#include "base/trace.h"

#include "hpvm/hpvm_rt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
  KC = 256, /* depth of a packed block, as gemm.c's */
  MB = 8 * HPVM_TENSOR_MR,
  NB = 16 * HPVM_TENSOR_NR,
};

static int without_memory; /* tests: hpvm_tensor_contract_without_memory */

void hpvm_tensor_contract_without_memory(int on) { without_memory = on; }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Which kind of step `step` is: 1 a fused multiply-add, 2 a rounded product then a rounded sum,
 * 0 neither. a = b = 1 + 2^-23, acc = -(1 + 2^-22): a * b = 1 + 2^-22 + 2^-46 exactly, so fused
 * gives 2^-46 and unfused 0 (the product rounds to 1 + 2^-22). The operands go through volatiles
 * so that nothing is folded at compile time; the unfused value's product through one too, so
 * that it cannot be contracted with the sum. */
static int step_kind(hpvm_rt_contract_step_fn step) {
  volatile float a_in = 0x1.000002p0f, acc_in = -0x1.000004p0f;
  float a = a_in, acc = acc_in;
  float got = step(a, a, acc);
  float fused = fmaf(a, a, acc);
  volatile float product = a * a;
  float unfused = acc + product;
  uint32_t got_bits, fused_bits, unfused_bits;
  memcpy(&got_bits, &got, sizeof(got_bits));
  memcpy(&fused_bits, &fused, sizeof(fused_bits));
  memcpy(&unfused_bits, &unfused, sizeof(unfused_bits));
  if (fused_bits == unfused_bits) /* cannot happen: the inputs tell them apart */
    return 0;
  return got_bits == fused_bits ? 1 : got_bits == unfused_bits ? 2 : 0;
}

typedef struct contract_t {
  const float *p, *q;
  int64_t p_row, p_depth, q_col, q_depth;
  int64_t rows, cols, depth;
  float init;
  hpvm_rt_contract_step_fn step;
  hpvm_tensor_contract_fn kernel;
  float *s;
  int64_t lds;
  int64_t row_blocks, col_blocks, rows_per_task, cols_per_task;
} contract_t;

/* Rows [y0, y0 + rows) x depth [k0, k0 + kc) of p into MR-row panels dst[panel][kk][r]; rows
 * past the end are zero. */
static void pack_p(const contract_t *c, int64_t y0, int64_t rows, int64_t k0, int64_t kc,
                   float *dst) {
  const float *p = c->p;
  int64_t row = c->p_row, deep = c->p_depth;
  for (int64_t i = 0; i < rows; i += HPVM_TENSOR_MR, dst += HPVM_TENSOR_MR * kc) {
    int64_t live = min64(rows - i, HPVM_TENSOR_MR);
    int64_t first = (y0 + i) * row + k0 * deep;
    if (live < HPVM_TENSOR_MR)
      for (int64_t kk = 0; kk < kc; ++kk)
        for (int64_t r = live; r < HPVM_TENSOR_MR; ++r)
          dst[kk * HPVM_TENSOR_MR + r] = 0.0f;
    if (row == 1) {
      /* Consecutive rows: a run of `live` floats per kk. */
      for (int64_t kk = 0; kk < kc; ++kk) {
        const float *src = p + first + kk * deep;
        if (live == HPVM_TENSOR_MR)
          memcpy(dst + kk * HPVM_TENSOR_MR, src, sizeof(float) * HPVM_TENSOR_MR);
        else
          memcpy(dst + kk * HPVM_TENSOR_MR, src, sizeof(float) * (size_t)live);
      }
    } else if (deep == 1) {
      /* Each row's depth is consecutive: read along it. */
      for (int64_t r = 0; r < live; ++r) {
        const float *src = p + first + r * row;
        for (int64_t kk = 0; kk < kc; ++kk)
          dst[kk * HPVM_TENSOR_MR + r] = src[kk];
      }
    } else {
      for (int64_t kk = 0; kk < kc; ++kk)
        for (int64_t r = 0; r < live; ++r)
          dst[kk * HPVM_TENSOR_MR + r] = p[first + r * row + kk * deep];
    }
  }
}

/* Depth [k0, k0 + kc) x columns [x0, x0 + cols) of q into NR-column panels dst[panel][kk][x];
 * columns past the end are zero. */
static void pack_q(const contract_t *c, int64_t k0, int64_t kc, int64_t x0, int64_t cols,
                   float *dst) {
  const float *q = c->q;
  int64_t col = c->q_col, deep = c->q_depth;
  for (int64_t j = 0; j < cols; j += HPVM_TENSOR_NR, dst += HPVM_TENSOR_NR * kc) {
    int64_t live = min64(cols - j, HPVM_TENSOR_NR);
    int64_t first = (x0 + j) * col + k0 * deep;
    if (live < HPVM_TENSOR_NR)
      for (int64_t kk = 0; kk < kc; ++kk)
        memset(dst + kk * HPVM_TENSOR_NR + live, 0,
               sizeof(float) * (size_t)(HPVM_TENSOR_NR - live));
    if (col == 1) {
      /* Consecutive columns: a run of `live` floats per kk. */
      for (int64_t kk = 0; kk < kc; ++kk) {
        const float *src = q + first + kk * deep;
        if (live == HPVM_TENSOR_NR)
          memcpy(dst + kk * HPVM_TENSOR_NR, src, sizeof(float) * HPVM_TENSOR_NR);
        else
          memcpy(dst + kk * HPVM_TENSOR_NR, src, sizeof(float) * (size_t)live);
      }
    } else if (deep == 1) {
      /* Each column's depth is consecutive: read along it. */
      for (int64_t x = 0; x < live; ++x) {
        const float *src = q + first + x * col;
        for (int64_t kk = 0; kk < kc; ++kk)
          dst[kk * HPVM_TENSOR_NR + x] = src[kk];
      }
    } else {
      for (int64_t kk = 0; kk < kc; ++kk)
        for (int64_t x = 0; x < live; ++x)
          dst[kk * HPVM_TENSOR_NR + x] = q[first + x * col + kk * deep];
    }
  }
}

/* The block rows [y0, y0 + rows) x columns [x0, x0 + cols), unpacked, through the step itself
 * (without memory for packing). */
static void block_unpacked(const contract_t *c, int64_t y0, int64_t rows, int64_t x0,
                           int64_t cols) {
  for (int64_t y = y0; y < y0 + rows; ++y)
    for (int64_t x = x0; x < x0 + cols; ++x) {
      float acc = c->init;
      for (int64_t kk = 0; kk < c->depth; ++kk)
        acc = c->step(c->p[y * c->p_row + kk * c->p_depth], c->q[x * c->q_col + kk * c->q_depth],
                      acc);
      c->s[y * c->lds + x] = acc;
    }
}

/* The block rows [y0, y0 + rows) x columns [x0, x0 + cols), KC deep at a time: the first chunk
 * from init, the next ones from the partial accumulators in s. */
static void block(const contract_t *c, int64_t y0, int64_t rows, int64_t x0, int64_t cols,
                  float *p_pack, float *q_pack) {
  for (int64_t k0 = 0; k0 < c->depth; k0 += KC) {
    int64_t kc = min64(c->depth - k0, KC);
    pack_p(c, y0, rows, k0, kc, p_pack);
    pack_q(c, k0, kc, x0, cols, q_pack);
    for (int64_t j = 0; j < cols; j += HPVM_TENSOR_NR) {
      const float *q_panel = q_pack + (j / HPVM_TENSOR_NR) * HPVM_TENSOR_NR * kc;
      int64_t live_cols = min64(cols - j, HPVM_TENSOR_NR);
      for (int64_t i = 0; i < rows; i += HPVM_TENSOR_MR) {
        const float *p_panel = p_pack + (i / HPVM_TENSOR_MR) * HPVM_TENSOR_MR * kc;
        int64_t live_rows = min64(rows - i, HPVM_TENSOR_MR);
        c->kernel(kc, p_panel, q_panel, c->s + (y0 + i) * c->lds + x0 + j, c->lds, live_rows,
                  live_cols, k0 > 0, c->init);
      }
    }
  }
}

/* x: column blocks; y: row blocks. The packing buffers serve every task of the range. */
static void run_tasks(void *context, const hpvm_rt_instance_range_t *range) {
  const contract_t *c = context;
  int64_t kc_max = min64(c->depth, KC);
  float *p_pack = NULL, *q_pack = NULL;
  if (!without_memory) {
    p_pack = malloc(sizeof(float) *
                    (size_t)(ceil_div(c->rows_per_task, HPVM_TENSOR_MR) * HPVM_TENSOR_MR * kc_max));
    q_pack = malloc(sizeof(float) *
                    (size_t)(ceil_div(c->cols_per_task, HPVM_TENSOR_NR) * HPVM_TENSOR_NR * kc_max));
  }
  for (int64_t by = range->begin[1]; by < range->end[1]; ++by) {
    int64_t y0 = by * c->rows_per_task, rows = min64(c->rows - y0, c->rows_per_task);
    for (int64_t bx = range->begin[0]; bx < range->end[0]; ++bx) {
      int64_t x0 = bx * c->cols_per_task, cols = min64(c->cols - x0, c->cols_per_task);
      if (p_pack && q_pack)
        block(c, y0, rows, x0, cols, p_pack, q_pack);
      else
        block_unpacked(c, y0, rows, x0, cols);
    }
  }
  free(p_pack);
  free(q_pack);
}

int32_t hpvm_rt_contract_f32(const float *p, int64_t p_row, int64_t p_depth, const float *q,
                             int64_t q_col, int64_t q_depth, int64_t rows, int64_t cols,
                             int64_t depth, float init, hpvm_rt_contract_step_fn step, float *s,
                             int64_t lds) {
  if (rows < 0 || cols < 0 || depth < 0)
    return 1;
  if (rows == 0 || cols == 0)
    return 0;
  if (!p || !q || !s || !step || lds < cols)
    return 1;
  if (depth == 0) {
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x)
        s[y * lds + x] = init;
    return 0;
  }
  int kind = step_kind(step);
  if (!kind)
    return 1;
  const hpvm_tensor_kernels_t *kernels = hpvm_tensor_kernels();
  contract_t c = {0};
  c.p = p, c.q = q, c.p_row = p_row, c.p_depth = p_depth, c.q_col = q_col, c.q_depth = q_depth;
  c.rows = rows, c.cols = cols, c.depth = depth, c.init = init, c.step = step;
  c.kernel = kind == 1 ? kernels->contract_fused : kernels->contract_unfused;
  c.s = s, c.lds = lds;
  /* Enough tasks for the pool, as gemm.c's: narrower column blocks (whole panels) first, then
   * fewer rows. */
  c.rows_per_task = MB, c.cols_per_task = NB;
  int64_t threads = hpvm_rt_thread_count();
  while (c.cols_per_task > HPVM_TENSOR_NR &&
         ceil_div(rows, c.rows_per_task) * ceil_div(cols, c.cols_per_task) < 4 * threads)
    c.cols_per_task /= 2;
  while (c.rows_per_task > HPVM_TENSOR_MR &&
         ceil_div(rows, c.rows_per_task) * ceil_div(cols, c.cols_per_task) < 4 * threads)
    c.rows_per_task -= HPVM_TENSOR_MR;
  c.row_blocks = ceil_div(rows, c.rows_per_task);
  c.col_blocks = ceil_div(cols, c.cols_per_task);
  if (hpvm_trace_enabled())
    hpvm_trace_line("contract %lldx%lldx%lld (%s) on cpu", (long long)rows, (long long)cols,
                    (long long)depth, kind == 1 ? "fused" : "unfused");
  int64_t extents[2] = {c.col_blocks, c.row_blocks};
  hpvm_tensor_run_grid(2, extents, run_tasks, &c);
  return 0;
}
