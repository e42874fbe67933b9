/* tensor_half_test.c - the 16-bit storage of the fp16 and bf16 knobs: the conversions
 * (every 16-bit pattern widens to an f32 that rounds back to itself; rounding from f32 is to
 * the nearest value, ties to the even one, 65520 and above to infinity, NaN to a quiet NaN,
 * checked by looking at the neighbours in double), the AVX2 (F16C) packing and widening
 * against the baseline's bit for bit, and hpvm_rt_tensor_matmul_half against hpvm_rt_tensor_matmul_f32 on
 * the widened operands with each result rounded: the same packing and micro-kernel, so equal
 * bit for bit, for shapes with partial panels, batches, bias and each activation; the vector
 * rounding of hpvm_rt_tensor_narrow_f32 against the scalar one. An unknown format computes
 * nothing, with one warning line. */
#include "tensor/kernels.h"
#include "test_util.h"

#include <math.h>

static const int64_t formats[] = {HPVM_RT_TENSOR_FP16, HPVM_RT_TENSOR_BF16};

static int is_nan_bits(uint16_t h, int64_t format) {
  return format == HPVM_RT_TENSOR_FP16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)
                                       : (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
}

static uint16_t infinity_bits(int64_t format) {
  return format == HPVM_RT_TENSOR_FP16 ? 0x7c00u : 0x7f80u;
}

/* Every pattern: widening is exact, so rounding gives the pattern back (NaN: a NaN). */
static void check_round_trips(int64_t format) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    uint16_t h = (uint16_t)bits;
    float x = hpvm_rt_tensor_from_half(h, format);
    uint16_t back = hpvm_rt_tensor_to_half(x, format);
    if (is_nan_bits(h, format)) {
      CHECK(isnan(x));
      CHECK(is_nan_bits(back, format));
    } else if (back != h) {
      fprintf(stderr, "format %lld: 0x%04x widens to %a, rounds back to 0x%04x\n",
              (long long)format, h, (double)x, back);
      exit(1);
    }
  }
}

/* Rounding x: no other finite value of the format is nearer; at a tie, the even one. */
static void check_rounding(float x, int64_t format) {
  uint16_t h = hpvm_rt_tensor_to_half(x, format);
  if (isnan(x)) {
    CHECK(is_nan_bits(h, format));
    return;
  }
  uint16_t sign = (uint16_t)(signbit(x) ? 0x8000u : 0u), magnitude = (uint16_t)(h & 0x7fffu);
  CHECK((h & 0x8000u) == sign || x == 0.0f);
  double largest = hpvm_rt_tensor_from_half((uint16_t)(infinity_bits(format) - 1), format);
  double ax = fabs((double)x);
  /* Beyond the largest finite value by half an ulp or more: infinity. */
  double ulp_top = largest - hpvm_rt_tensor_from_half((uint16_t)(infinity_bits(format) - 2),
                                                      format);
  if (ax >= largest + ulp_top / 2) {
    CHECK(magnitude == infinity_bits(format));
    return;
  }
  CHECK(magnitude < infinity_bits(format));
  double got = fabs((double)hpvm_rt_tensor_from_half(magnitude, format));
  double error = fabs(got - ax);
  for (int step = -1; step <= 1; step += 2) {
    int neighbour = (int)magnitude + step;
    if (neighbour < 0 || neighbour >= infinity_bits(format))
      continue;
    double other = fabs(hpvm_rt_tensor_from_half((uint16_t)neighbour, format) - ax);
    if (other < error || (other == error && (magnitude & 1u))) {
      fprintf(stderr, "format %lld: %a rounds to 0x%04x (%a), 0x%04x is %s\n", (long long)format,
              (double)x, h, got, neighbour, other < error ? "nearer" : "as near and even");
      exit(1);
    }
  }
}

static void check_conversions(void) {
  for (size_t f = 0; f < 2; ++f) {
    int64_t format = formats[f];
    check_round_trips(format);
    const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f,
                             1e10f, INFINITY, -INFINITY, NAN, 0x1p-14f, 0x1p-24f, 0x1p-25f,
                             0x1.8p-25f, 0x1p-26f, 0x1.ffcp-15f, 0x1.ffep-15f, 3.0e38f,
                             3.4028235e38f, 1.00048828125f, 1.000732421875f, 1.0009765625f,
                             1.00390625f, 1.005859375f, 1e-40f, -1e-45f};
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i)
      check_rounding(special[i], format);
    /* Random bit patterns (every exponent) and values near the format's range. */
    uint32_t state = 99;
    for (int i = 0; i < 400000; ++i) {
      state = state * 1664525u + 1013904223u;
      uint32_t bits = state ^ (state << 13);
      float x;
      memcpy(&x, &bits, sizeof(x));
      check_rounding(x, format);
      check_rounding(test_random_value() * 70000.0f, format);
      check_rounding(test_random_value() * 1e-4f, format);
    }
  }
  /* An unknown format converts nothing. */
  CHECK(hpvm_rt_tensor_to_half(1.0f, 3) == 0);
  CHECK(hpvm_rt_tensor_from_half(0x3c00u, 0) == 0.0f);
}

/* The F16C packing (where the CPU and the build have it) equals the baseline bit for bit. */
static void check_packing(void) {
  const hpvm_tensor_kernels_t *chosen = hpvm_tensor_kernels();
  enum { K = 37, LDB = 53 };
  uint16_t b[K * LDB];
  uint32_t state = 7;
  for (int i = 0; i < K * LDB; ++i) {
    state = state * 1664525u + 1013904223u;
    b[i] = (uint16_t)(state >> 16); /* every pattern: NaNs, infinities, subnormals */
  }
  /* Panels of both micro-kernel widths (16 and AVX-512's 32). */
  static const int64_t widths[] = {HPVM_TENSOR_NR, HPVM_TENSOR_CONTRACT_NR_WIDE};
  for (size_t f = 0; f < 2; ++f)
    for (size_t w = 0; w < 2; ++w)
      for (int64_t cols = 1; cols <= LDB; cols += 13) {
        int64_t width = widths[w];
        float fast[4 * HPVM_TENSOR_NR * K], plain[4 * HPVM_TENSOR_NR * K];
        chosen->pack_half(b, LDB, K, cols, width, fast, formats[f]);
        hpvm_tensor_pack_half_generic(b, LDB, K, cols, width, plain, formats[f]);
        int64_t panels = (cols + width - 1) / width;
        CHECK(memcmp(fast, plain, sizeof(float) * (size_t)(panels * width * K)) == 0);
        /* Columns past cols are zero. */
        for (int64_t kk = 0; kk < K; ++kk)
          for (int64_t x = cols % width ? cols % width : width; x < width; ++x)
            CHECK(plain[(panels - 1) * width * K + kk * width + x] == 0.0f);
      }
  /* Widening a span, every length around the vectors. */
  for (size_t f = 0; f < 2; ++f)
    for (int64_t count = 0; count <= 40; ++count) {
      float fast[41], plain[41];
      fast[count] = plain[count] = 5.0f;
      chosen->widen_half(b + 3, fast, count, formats[f]);
      hpvm_tensor_widen_half_generic(b + 3, plain, count, formats[f]);
      CHECK(memcmp(fast, plain, sizeof(float) * (size_t)count) == 0);
      CHECK(fast[count] == 5.0f && plain[count] == 5.0f);
      for (int64_t i = 0; i < count; ++i) {
        float one = hpvm_rt_tensor_from_half(b[3 + i], formats[f]);
        CHECK(memcmp(&one, &plain[i], sizeof(float)) == 0);
      }
    }
}

/* hpvm_rt_tensor_narrow_f32 (vcvtps2ph where the CPU has F16C) equals the scalar rounding bit
 * for bit: every exponent, NaNs, infinities, ties, subnormals, lengths around the vectors. */
static void check_narrowing(void) {
  enum { COUNT = 4099 };
  static float x[COUNT];
  static uint16_t out[COUNT + 1];
  uint32_t state = 31;
  for (int i = 0; i < COUNT; ++i) {
    state = state * 1664525u + 1013904223u;
    uint32_t bits = i % 3 == 0 ? state : (state & 0x807fffffu) | ((112u + state % 32u) << 23);
    memcpy(&x[i], &bits, sizeof(bits)); /* a third anywhere, the rest near fp16's range */
  }
  for (size_t f = 0; f < 2; ++f)
    for (int64_t count = 0; count <= COUNT; count += count < 20 ? 1 : 1021) {
      out[count] = 0xabcdu;
      hpvm_rt_tensor_narrow_f32(x, out, count, formats[f]);
      for (int64_t i = 0; i < count; ++i)
        if (out[i] != hpvm_rt_tensor_to_half(x[i], formats[f])) {
          fprintf(stderr, "narrow_f32 format %lld: %a gives 0x%04x, expected 0x%04x\n",
                  (long long)formats[f], (double)x[i], out[i],
                  hpvm_rt_tensor_to_half(x[i], formats[f]));
          exit(1);
        }
      CHECK(out[count] == 0xabcdu); /* nothing past count */
    }
}

typedef struct product_t {
  int64_t batch, m, n, k;
} product_t;

/* matmul_half(a, b) == round(matmul_f32(widen(a), widen(b))), bit for bit. */
static void check_product(const product_t *p, int64_t format, int with_bias, int64_t activation) {
  int64_t na = p->batch * p->m * p->k, nb = p->batch * p->k * p->n, nc = p->batch * p->m * p->n;
  uint16_t *a16 = malloc(sizeof(uint16_t) * (size_t)(na + 1));
  uint16_t *b16 = malloc(sizeof(uint16_t) * (size_t)(nb + 1));
  float *a = malloc(sizeof(float) * (size_t)(na + 1)), *b = malloc(sizeof(float) * (size_t)(nb + 1));
  float *want = malloc(sizeof(float) * (size_t)(nc + 1)), *got = malloc(sizeof(float) * (size_t)(nc + 1));
  float *bias = test_random_array(p->n);
  CHECK(a16 && b16 && a && b && want && got);
  for (int64_t i = 0; i < na; ++i) {
    a16[i] = hpvm_rt_tensor_to_half(test_random_value() * 3.0f, format);
    a[i] = hpvm_rt_tensor_from_half(a16[i], format);
  }
  for (int64_t i = 0; i < nb; ++i) {
    b16[i] = hpvm_rt_tensor_to_half(test_random_value(), format);
    b[i] = hpvm_rt_tensor_from_half(b16[i], format);
  }
  hpvm_rt_tensor_matmul_f32(a, b, with_bias ? bias : NULL, want, p->batch, p->m, p->n, p->k,
                            activation, 0.5);
  hpvm_rt_tensor_matmul_half(a16, b16, with_bias ? bias : NULL, got, p->batch, p->m, p->n, p->k,
                             activation, 0.5, format);
  for (int64_t i = 0; i < nc; ++i) {
    float rounded = hpvm_rt_tensor_from_half(hpvm_rt_tensor_to_half(want[i], format), format);
    if (memcmp(&rounded, &got[i], sizeof(float)) != 0) {
      fprintf(stderr, "matmul_half %lldx%lldx%lldx%lld format %lld: c[%lld] = %a, expected %a\n",
              (long long)p->batch, (long long)p->m, (long long)p->n, (long long)p->k,
              (long long)format, (long long)i, (double)got[i], (double)rounded);
      exit(1);
    }
  }
  free(a16), free(b16), free(a), free(b), free(want), free(got), free(bias);
}

static void run_products(void) {
  const product_t products[] = {{1, 1, 1, 1},     {1, 1, 300, 700}, {2, 7, 33, 19},
                                {1, 50, 70, 300}, {3, 13, 17, 5},   {1, 4, 1000, 1024},
                                {1, 0, 5, 5},     {1, 5, 5, 0}};
  for (size_t i = 0; i < sizeof(products) / sizeof(products[0]); ++i)
    for (size_t f = 0; f < 2; ++f)
      for (int64_t activation = 0; activation <= 2; ++activation)
        check_product(&products[i], formats[f], activation != 1, activation);
}

static void unknown_format_child(void *arg) {
  (void)arg;
  uint16_t a[4] = {0x3c00u, 0x3c00u, 0x3c00u, 0x3c00u};
  float c[4] = {7.0f, 7.0f, 7.0f, 7.0f};
  hpvm_rt_tensor_matmul_half(a, a, NULL, c, 1, 2, 2, 2, 0, 0.0, 3);
  _exit(c[0] == 7.0f && c[3] == 7.0f ? 0 : 3);
}

int main(void) {
  test_seed = 4242;
  char text[512];
  int code = test_run_child(unknown_format_child, NULL, text, sizeof(text));
  if (code != 0 || strncmp(text, "hpvm: warning: hpvm_rt_tensor_matmul_half: unknown format 3",
                           59) != 0 || strchr(text, '\n') != text + strlen(text) - 1) {
    fprintf(stderr, "unknown format: exit %d, stderr \"%s\" (expected one warning line)\n", code,
            text);
    return 1;
  }
  check_conversions();
  check_packing();
  run_products(); /* with the CPU's kernels */
  check_narrowing();
  hpvm_tensor_use_generic_kernels(1);
  run_products(); /* with the baseline ones */
  check_narrowing();
  hpvm_tensor_use_generic_kernels(0);
  hpvm_rt_shutdown();
  printf("half-precision products: all checks passed\n");
  return 0;
}
