/* contract_test.c - the exact contractions (hpvm_rt_contract_f32) against the sequential fold,
 * bit for bit: fused (fmaf) and unfused (rounded product, rounded sum) steps; sizes around the
 * micro-kernels' blocks (6 x 16; 12 x 32 for AVX-512), the task blocks and KC = 256;
 * contiguous, transposed, negative and zero strides; a nonzero init; s rows wider than cols
 * (the padding stays untouched); a step of neither kind and invalid arguments compute nothing;
 * rows or cols 0 do nothing. Every case runs with the CPU's kernels (operands packed whole
 * first, and packed by each task), with AVX2's (HPVM_TENSOR_ISA=avx2, in a child process: the
 * choice is made once per process) where the CPU has it, with the baseline ones, and as without
 * memory for packing. The
 * inputs are random in [-1, 1], where fused and unfused folds differ: a driver that ran the
 * wrong kind fails. hpvm_rt_contract_pays: the size from which contractions are worth it. */
#include "tensor/kernels.h"
#include "test_util.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_long step_calls;

/* The leaves' two kinds of step, called through the pointer. */
static float step_fused(float a, float b, float acc) {
  atomic_fetch_add_explicit(&step_calls, 1, memory_order_relaxed);
  return fmaf(a, b, acc);
}

static float step_unfused(float a, float b, float acc) {
  atomic_fetch_add_explicit(&step_calls, 1, memory_order_relaxed);
  volatile float product = a * b;
  return acc + product;
}

/* Neither: acc - a * b. */
static float step_other(float a, float b, float acc) {
  volatile float product = a * b;
  return acc - product;
}

/* The sequential fold, exact as written: fmaf, or a product through a volatile then the sum. */
static float fold(int fused, const float *p, int64_t p_row, int64_t p_depth, const float *q,
                  int64_t q_col, int64_t q_depth, int64_t y, int64_t x, int64_t depth,
                  float init) {
  float acc = init;
  for (int64_t kk = 0; kk < depth; ++kk) {
    float a = p[y * p_row + kk * p_depth], b = q[x * q_col + kk * q_depth];
    if (fused) {
      acc = fmaf(a, b, acc);
    } else {
      volatile float product = a * b;
      acc = acc + product;
    }
  }
  return acc;
}

static uint32_t bits_of(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof(b));
  return b;
}

/* An operand of `count` x `depth` elements at strides (along, deep), any signs: a buffer of
 * random values spanning every index, and the pointer the strides start from. */
typedef struct operand_t {
  float *buffer;
  const float *base;
} operand_t;

static operand_t make_operand(int64_t count, int64_t depth, int64_t along, int64_t deep) {
  int64_t low = 0, high = 0;
  if (count > 0 && depth > 0) {
    int64_t a = (count - 1) * along, d = (depth - 1) * deep;
    low = (a < 0 ? a : 0) + (d < 0 ? d : 0);
    high = (a > 0 ? a : 0) + (d > 0 ? d : 0);
  }
  operand_t o;
  o.buffer = test_random_array(high - low + 1);
  o.base = o.buffer - low;
  return o;
}

/* Stride layouts of p (p_row, p_depth) and q (q_col, q_depth). */
enum { LAYOUTS = 6 };
static void layout(int which, int64_t rows, int64_t cols, int64_t depth, int64_t *p_row,
                   int64_t *p_depth, int64_t *q_col, int64_t *q_depth) {
  switch (which) {
  case 0: /* column-major p and q: consecutive rows / columns per kk (C = A * B^T) */
    *p_row = 1, *p_depth = rows, *q_col = 1, *q_depth = cols;
    break;
  case 1: /* row-major: consecutive depth per row / column */
    *p_row = depth, *p_depth = 1, *q_col = depth, *q_depth = 1;
    break;
  case 2: /* everything reversed */
    *p_row = -1, *p_depth = -rows, *q_col = -depth, *q_depth = -1;
    break;
  case 3: /* zero strides: one row of p for all y, one row of q for all kk */
    *p_row = 0, *p_depth = 3, *q_col = 2, *q_depth = 0;
    break;
  case 4: /* contiguous along the panels, backwards along the depth, with gaps */
    *p_row = 1, *p_depth = -(rows + 2), *q_col = 1, *q_depth = -(cols + 5);
    break;
  default: /* gaps everywhere, mixed signs */
    *p_row = -(2 * depth + 1), *p_depth = 2, *q_col = 3, *q_depth = -(3 * cols + 1);
    break;
  }
}

static const float SENTINEL = 12345.0f;

static int64_t cases_run, cases_differing;

/* One case with both kinds, checked against the folds bit for bit. */
static void check_case(int64_t rows, int64_t cols, int64_t depth, int which, int64_t pad,
                       float init, int without_memory) {
  int64_t p_row, p_depth, q_col, q_depth;
  layout(which, rows, cols, depth, &p_row, &p_depth, &q_col, &q_depth);
  operand_t p = make_operand(rows, depth, p_row, p_depth);
  operand_t q = make_operand(cols, depth, q_col, q_depth);
  int64_t lds = cols + pad;
  float *s = malloc(sizeof(float) * (size_t)(rows * lds + 1));
  float *want[2];
  for (int fused = 0; fused < 2; ++fused) {
    want[fused] = malloc(sizeof(float) * (size_t)(rows * cols + 1));
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x)
        want[fused][y * cols + x] =
            fold(fused, p.base, p_row, p_depth, q.base, q_col, q_depth, y, x, depth, init);
  }
  int differ = 0;
  for (int64_t i = 0; i < rows * cols; ++i)
    differ |= bits_of(want[0][i]) != bits_of(want[1][i]);
  cases_differing += differ;
  ++cases_run;
  for (int fused = 0; fused < 2; ++fused) {
    for (int64_t i = 0; i < rows * lds; ++i)
      s[i] = SENTINEL;
    atomic_store(&step_calls, 0);
    int32_t rc = hpvm_rt_contract_f32(p.base, p_row, p_depth, q.base, q_col, q_depth, rows, cols,
                                      depth, init, fused ? step_fused : step_unfused, s, lds);
    if (rc != 0) {
      fprintf(stderr, "contract %lldx%lldx%lld layout %d %s: returned %d\n", (long long)rows,
              (long long)cols, (long long)depth, which, fused ? "fused" : "unfused", rc);
      exit(1);
    }
    /* The driver tells the kinds apart with one call and then runs its own kernels. */
    if (depth > 0 && !without_memory && atomic_load(&step_calls) != 1) {
      fprintf(stderr, "contract %lldx%lldx%lld: the step was called %ld times\n",
              (long long)rows, (long long)cols, (long long)depth, atomic_load(&step_calls));
      exit(1);
    }
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < lds; ++x) {
        float got = s[y * lds + x];
        float expected = x < cols ? want[fused][y * cols + x] : SENTINEL;
        if (bits_of(got) != bits_of(expected)) {
          fprintf(stderr,
                  "contract %lldx%lldx%lld layout %d lds %lld init %g %s%s: s[%lld][%lld] is "
                  "%a, expected %a%s\n",
                  (long long)rows, (long long)cols, (long long)depth, which, (long long)lds,
                  (double)init, fused ? "fused" : "unfused",
                  without_memory ? " (without memory)" : "", (long long)y, (long long)x,
                  (double)got, (double)expected, x < cols ? "" : " (padding)");
          exit(1);
        }
      }
  }
  free(p.buffer), free(q.buffer), free(s), free(want[0]), free(want[1]);
}

static void run_all(int without_memory) {
  static const int64_t rows[] = {1, 5, 7, 12, 13, 97};
  static const int64_t cols[] = {1, 15, 17, 32, 33, 100};
  static const int64_t depths[] = {0, 1, 255, 256, 257, 600};
  int n = 0;
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); ++i)
    for (size_t j = 0; j < sizeof(cols) / sizeof(cols[0]); ++j)
      for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); ++k, ++n) {
        /* Without memory everything is scalar: fewer cases. */
        if (without_memory && n % 7 != 0)
          continue;
        float init = n % 4 == 0 ? 0.0f : n % 4 == 1 ? 0.375f : n % 4 == 2 ? -1.5f : 1e-3f;
        check_case(rows[i], cols[j], depths[k], n % LAYOUTS, n % 3 == 0 ? 0 : 3 + n % 5, init,
                   without_memory);
      }
  /* Larger than one task block both ways, and the shape of the benchmark (column-major). */
  check_case(131, 300, 513, 0, 1, 0.25f, without_memory);
  check_case(64, 257, 300, 1, 0, -0.5f, without_memory);
}

/* Calls that compute nothing leave s as it was and return nonzero. */
static void check_refused(void) {
  float p[64], q[64], s[64];
  for (int i = 0; i < 64; ++i)
    p[i] = q[i] = (float)i / 64.0f - 0.5f;
  for (int i = 0; i < 64; ++i)
    s[i] = SENTINEL;
  /* A step of neither kind. */
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, 4, 4, 0.0f, step_other, s, 4) != 0);
  /* Negative sizes, NULL pointers, lds < cols. */
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, -1, 4, 4, 0.0f, step_fused, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, -1, 4, 0.0f, step_fused, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, 4, -1, 0.0f, step_fused, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(NULL, 1, 4, q, 1, 4, 4, 4, 4, 0.0f, step_fused, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, NULL, 1, 4, 4, 4, 4, 0.0f, step_fused, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, 4, 4, 0.0f, NULL, s, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, 4, 4, 0.0f, step_fused, NULL, 4) != 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 4, 4, 4, 0.0f, step_unfused, s, 3) != 0);
  for (int i = 0; i < 64; ++i)
    CHECK(s[i] == SENTINEL);
  /* Nothing to do: 0, whatever the pointers. */
  CHECK(hpvm_rt_contract_f32(NULL, 1, 4, NULL, 1, 4, 0, 4, 4, 0.0f, NULL, NULL, 0) == 0);
  CHECK(hpvm_rt_contract_f32(NULL, 1, 4, NULL, 1, 4, 4, 0, 4, 0.0f, NULL, NULL, 0) == 0);
  CHECK(hpvm_rt_contract_f32(p, 1, 4, q, 1, 4, 0, 0, 4, 0.0f, step_other, s, 0) == 0);
  for (int i = 0; i < 64; ++i)
    CHECK(s[i] == SENTINEL);
}

/* The size where contractions start to pay: HPVM_CONTRACT_MIN when set (the runtime reads it
 * once), else 2^25 multiply-adds; nothing for empty, negative or overflowing sizes. */
static void check_pays(void) {
  uint64_t least = 1u << 25;
  const char *text = getenv("HPVM_CONTRACT_MIN");
  if (text && *text)
    least = strtoull(text, NULL, 10);
  CHECK(hpvm_rt_contract_pays(1, 1, (int64_t)least) == 1);
  if (least > 1)
    CHECK(hpvm_rt_contract_pays(1, 1, (int64_t)least - 1) == 0);
  CHECK(hpvm_rt_contract_pays(1024, 1024, 1024) == (least <= (1u << 30)));
  CHECK(hpvm_rt_contract_pays(0, 1024, 1024) == 0);
  CHECK(hpvm_rt_contract_pays(1024, -1, 1024) == 0);
  CHECK(hpvm_rt_contract_pays(1024, 1024, 0) == 0);
  CHECK(hpvm_rt_contract_pays(INT64_MAX, 2, 1) == 0);
  CHECK(hpvm_rt_contract_pays(1 << 30, 1 << 30, 1 << 30) == 0);
}

/* run_all(0) with HPVM_TENSOR_ISA=avx2, in a child process forked before anything chose the
 * kernels of this one (and before the pool's threads start). Where the CPU lacks AVX2 the
 * runtime keeps to the baseline: the same checks, on those kernels. */
static void run_avx2_child(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setenv("HPVM_TENSOR_ISA", "avx2", 1);
    run_all(0);
    hpvm_rt_shutdown();
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  check_pays();
  check_refused();
  if (!getenv("HPVM_TENSOR_ISA"))
    run_avx2_child();
  run_all(0); /* on the runtime's pool, with the CPU's kernels, operands packed whole first */
  hpvm_tensor_contract_pack_whole(0);
  run_all(0); /* each task packing its own blocks */
  hpvm_tensor_contract_pack_whole(1);
  hpvm_tensor_use_generic_kernels(1);
  run_all(0); /* with the baseline ones */
  hpvm_tensor_use_generic_kernels(0);
  hpvm_tensor_contract_without_memory(1);
  run_all(1); /* every block through the step, unpacked */
  hpvm_tensor_contract_without_memory(0);
  /* The inputs tell the kinds apart: most cases' fused and unfused folds differ. */
  if (cases_differing * 2 < cases_run) {
    fprintf(stderr, "only %lld of %lld cases tell fused from unfused\n",
            (long long)cases_differing, (long long)cases_run);
    return 1;
  }
  hpvm_rt_shutdown();
  printf("contractions: all checks passed (%lld cases, %lld telling the kinds apart)\n",
         (long long)cases_run, (long long)cases_differing);
  return 0;
}
