/* Exact contractions for compiled leaves (hpvm_rt_contract_f32): s[y][x] = the fold of a
 * leaf's step over kk from init, bit for bit the sequential loop, at GEMM speed.
 *
 * The driver of gemm.c, changed where exactness needs it: p is packed into panels of MR rows (y)
 * and q into panels of NR columns (x, the contiguous direction of s), KC deep at a time, from
 * any element strides (contiguous copies where the stride along the panel is 1). Tasks of (MB
 * rows, NB columns) run over the runtime's pool; MR x NR is the ISA's register block (6 x 16
 * for AVX2 and the baseline, 12 x 32 for AVX-512). The micro-kernel (kernels_isa.inc) keeps one
 * accumulator per element: it starts from init on the first KC chunk and from the partial
 * accumulator it loads from s on the next ones, so that every element sees the sequential
 * fold's rounded operations in its order (never a partial sum from 0 added afterwards). Which
 * operations: those of the leaf's step, found by calling it once on inputs where a fused
 * multiply-add and a rounded product then a rounded sum differ.
 *
 * Without memory for packing a task folds its blocks through the step itself, unpacked. */
#include "kernels.h"

#include "base/platform.h"
#include "base/trace.h"

#include "hpvm/hpvm_rt.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
  KC = 256, /* depth of a packed block, as gemm.c's */
  /* A task's block: MB_ROWS rows (a multiple of the kernel's) x NB_PANELS of its column
   * panels, narrowed for small products (as gemm.c's). */
  MB_ROWS = 192,
  NB_PANELS = 16,
};

/* Packing everything first: jobs of PACK_PANELS panels of one chunk. */
enum { PACK_PANELS = 8 };

static int without_memory; /* tests: hpvm_tensor_contract_without_memory */
static int per_task_packing; /* tests: hpvm_tensor_contract_pack_whole(0) */

/* HPVM_CONTRACT_MIN, read by the first hpvm_rt_contract_pays (0: not read yet). Racing first
 * readers compute the same value. */
static _Atomic int64_t min_work;

enum { DEFAULT_MIN_WORK = 1 << 25 };

int32_t hpvm_rt_contract_pays(int64_t rows, int64_t cols, int64_t depth) {
  int64_t least = atomic_load_explicit(&min_work, memory_order_relaxed);
  if (!least) {
    uint64_t value;
    bool given;
    /* Compiled leaves call this without a status to return: garbage stops the program (or
     * returns to a guard) naming the variable, as the runtime's other settings do. */
    hpvm_rt_check_at(hpvm_platform_env_integer("HPVM_CONTRACT_MIN", 1, INT64_MAX, &value, &given),
                     "hpvm_rt_contract_pays");
    least = given ? (int64_t)value : DEFAULT_MIN_WORK;
    atomic_store_explicit(&min_work, least, memory_order_relaxed);
  }
  int64_t work;
  if (rows < 1 || cols < 1 || depth < 1 || __builtin_mul_overflow(rows, cols, &work) ||
      __builtin_mul_overflow(work, depth, &work))
    return 0;
  return work >= least;
}

void hpvm_tensor_contract_without_memory(int on) { without_memory = on; }

void hpvm_tensor_contract_pack_whole(int on) { per_task_packing = !on; }

#define ceil_div hpvm_tensor_ceil_div

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
  int64_t mr, nr; /* the kernel's register block */
  /* Both operands packed whole before any block is computed (NULL: each task packs its own):
   * chunk k0 of p (rows_padded x kc) at p_all + k0 * rows_padded, of q at q_all + k0 *
   * cols_padded, each chunk's panels one after another (as a task's p_pack, q_pack). */
  float *p_all, *q_all;
  int64_t rows_padded, cols_padded;
  int64_t p_groups, q_groups; /* packing jobs per chunk: groups of PACK_PANELS panels */
  float *s;
  int64_t lds;
  int64_t row_blocks, col_blocks, rows_per_task, cols_per_task;
} contract_t;

/* Elements [i0, i0 + count) x depth [k0, k0 + kc) of an operand (element i at depth kk is
 * src[i * along + kk * deep]) into panels of `width` elements, dst[panel][kk][e]; elements past
 * the end are zero. p's rows pack in panels of MR, q's columns in panels of NR. */
static void pack(const float *src, int64_t along, int64_t deep, int64_t i0, int64_t count,
                 int64_t k0, int64_t kc, int64_t width, float *dst) {
  const float *first = src + i0 * along + k0 * deep;
  if (along == 1) {
    hpvm_tensor_pack_columns(first, deep, kc, count, width, dst);
  } else if (deep == 1) {
    hpvm_tensor_pack_rows(first, along, count, kc, width, dst);
  } else {
    for (int64_t i = 0; i < count; i += width, dst += width * kc) {
      int64_t live = min64(count - i, width);
      for (int64_t kk = 0; kk < kc; ++kk) {
        for (int64_t e = 0; e < live; ++e)
          dst[kk * width + e] = first[(i + e) * along + kk * deep];
        for (int64_t e = live; e < width; ++e)
          dst[kk * width + e] = 0.0f;
      }
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
    const float *p_chunk, *q_chunk;
    if (c->p_all) {
      p_chunk = c->p_all + k0 * c->rows_padded + y0 * kc;
      q_chunk = c->q_all + k0 * c->cols_padded + x0 * kc;
    } else {
      pack(c->p, c->p_row, c->p_depth, y0, rows, k0, kc, c->mr, p_pack);
      pack(c->q, c->q_col, c->q_depth, x0, cols, k0, kc, c->nr, q_pack);
      p_chunk = p_pack, q_chunk = q_pack;
    }
    for (int64_t i = 0; i < rows; i += c->mr) {
      const float *p_panel = p_chunk + i * kc;
      int64_t live_rows = min64(rows - i, c->mr);
      for (int64_t j = 0; j < cols; j += c->nr) {
        const float *q_panel = q_chunk + j * kc;
        int64_t live_cols = min64(cols - j, c->nr);
        c->kernel(kc, p_panel, q_panel, c->s + (y0 + i) * c->lds + x0 + j, c->lds, live_rows,
                  live_cols, k0 > 0, c->init);
      }
    }
  }
}

/* Packing everything first. x: jobs of a chunk (p's groups of PACK_PANELS panels, then q's);
 * y: chunks of KC. */
static void pack_jobs(void *context, const hpvm_rt_instance_range_t *range) {
  const contract_t *c = context;
  for (int64_t chunk = range->begin[1]; chunk < range->end[1]; ++chunk) {
    int64_t k0 = chunk * KC, kc = min64(c->depth - k0, KC);
    for (int64_t job = range->begin[0]; job < range->end[0]; ++job) {
      if (job < c->p_groups) {
        int64_t y0 = job * PACK_PANELS * c->mr, count = min64(c->rows - y0, PACK_PANELS * c->mr);
        pack(c->p, c->p_row, c->p_depth, y0, count, k0, kc, c->mr,
             c->p_all + k0 * c->rows_padded + y0 * kc);
      } else {
        int64_t x0 = (job - c->p_groups) * PACK_PANELS * c->nr;
        int64_t count = min64(c->cols - x0, PACK_PANELS * c->nr);
        pack(c->q, c->q_col, c->q_depth, x0, count, k0, kc, c->nr,
             c->q_all + k0 * c->cols_padded + x0 * kc);
      }
    }
  }
}

/* x: column blocks; y: row blocks. The packing buffers serve every task of the range. */
static void run_tasks(void *context, const hpvm_rt_instance_range_t *range) {
  const contract_t *c = context;
  int64_t kc_max = min64(c->depth, KC);
  /* Without the operands packed whole, the range's own packing buffers. */
  float *p_pack = NULL, *q_pack = NULL;
  if (!c->p_all && !without_memory) {
    p_pack = hpvm_tensor_alloc_panels(ceil_div(c->rows_per_task, c->mr) * c->mr * kc_max);
    q_pack = hpvm_tensor_alloc_panels(ceil_div(c->cols_per_task, c->nr) * c->nr * kc_max);
  }
  int packed = c->p_all || (p_pack && q_pack);
  for (int64_t by = range->begin[1]; by < range->end[1]; ++by) {
    int64_t y0 = by * c->rows_per_task, rows = min64(c->rows - y0, c->rows_per_task);
    for (int64_t bx = range->begin[0]; bx < range->end[0]; ++bx) {
      int64_t x0 = bx * c->cols_per_task, cols = min64(c->cols - x0, c->cols_per_task);
      if (packed)
        block(c, y0, rows, x0, cols, p_pack, q_pack);
      else
        block_unpacked(c, y0, rows, x0, cols);
    }
  }
  hpvm_scratch_free(p_pack);
  hpvm_scratch_free(q_pack);
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
  c.mr = kernels->contract_mr, c.nr = kernels->contract_nr;
  if ((rows <= HPVM_TENSOR_MR || cols <= HPVM_TENSOR_NR) && c.mr > HPVM_TENSOR_MR) {
    /* Few rows or columns: the narrow block computes less padding (the same bits). */
    c.kernel = kind == 1 ? kernels->contract_fused_narrow : kernels->contract_unfused_narrow;
    c.mr = HPVM_TENSOR_MR, c.nr = HPVM_TENSOR_NR;
  }
  c.rows_per_task = ceil_div(MB_ROWS, c.mr) * c.mr, c.cols_per_task = NB_PANELS * c.nr;
  hpvm_tensor_task_shape(1, rows, cols, c.mr, c.nr, &c.rows_per_task, &c.cols_per_task);
  c.row_blocks = ceil_div(rows, c.rows_per_task);
  c.col_blocks = ceil_div(cols, c.cols_per_task);
  if (hpvm_trace_enabled())
    hpvm_trace_line("contract %lldx%lldx%lld (%s) on cpu", (long long)rows, (long long)cols,
                    (long long)depth, kind == 1 ? "fused" : "unfused");
  /* Each task packing its own blocks packs p once per column block and q once per row block
   * (a quarter of a 1024^3 product's time); packing both whole first packs each once. Where
   * they fit HPVM_TENSOR_PACK_ALL_MAX (and there is memory). */
  c.rows_padded = ceil_div(rows, c.mr) * c.mr;
  c.cols_padded = ceil_div(cols, c.nr) * c.nr;
  int64_t packed = (c.rows_padded + c.cols_padded) * depth;
  float *packs = NULL;
  if (!without_memory && !per_task_packing && (c.row_blocks > 1 || c.col_blocks > 1) &&
      packed <= HPVM_TENSOR_PACK_ALL_MAX / (int64_t)sizeof(float) &&
      (packs = hpvm_tensor_alloc_panels(packed))) {
    c.p_all = packs;
    c.q_all = packs + c.rows_padded * depth;
  }
  if (c.p_all) {
    c.p_groups = ceil_div(c.rows_padded / c.mr, PACK_PANELS);
    c.q_groups = ceil_div(c.cols_padded / c.nr, PACK_PANELS);
    int64_t jobs[2] = {c.p_groups + c.q_groups, ceil_div(depth, KC)};
    hpvm_tensor_run_grid(2, jobs, pack_jobs, &c);
  }
  int64_t extents[2] = {c.col_blocks, c.row_blocks};
  hpvm_tensor_run_grid(2, extents, run_tasks, &c);
  hpvm_scratch_free(packs);
  return 0;
}
