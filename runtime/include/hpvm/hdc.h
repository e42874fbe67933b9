/*===- hdc.h - Hetero-C++'s hyperdimensional-computing intrinsics -----------===*
 *
 * The types and intrinsics of HPVM's HDC extension of Hetero-C++ (`__hetero_hdc_*`),
 * as plain C++ templates: hypervectors of N elements, hypermatrices of M rows of N
 * elements (row-major, no padding: `sizeof` is the elements' size, so a pointer to
 * one is the buffer a task declares), and the operations on them. Each intrinsic is
 * ordinary code that compiles into the node that calls it: in a task it runs on the
 * node's target, in host code on the host, and the sequential build
 * (-fhetero-sequential) runs the very same code, so both builds compute the same
 * bits. Sums run in index order (independent partial sums across outputs, never a
 * reassociated reduction) and without contraction into fused multiply-adds.
 *
 * The stage markers (__hetero_hdc_encoding, _training, _inference, ...) call their
 * function with the arguments they list; the loops (__hetero_hdc_encoding_loop,
 * _training_loop, _inference_loop) launch their root once per data point (or once,
 * over the whole data set, when its buffer holds every data point). hpvm-cc inlines
 * every intrinsic where it is called, so that the function a loop or stage marker names
 * is a constant there: a graph that is launched, or a section that a task holds
 * (docs/HeteroCxx.md, "HDC intrinsics").
 *===----------------------------------------------------------------------===*/
#ifndef HPVM_HDC_H
#define HPVM_HDC_H

#ifndef __cplusplus
#error "hdc.h: the HDC intrinsics are C++ templates; compile the program as C++"
#endif

#include "hetero.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include <type_traits>

namespace hpvm::hdc {

template <int N, typename T> struct hypervector {
  static_assert(N > 0, "a hypervector has at least one element");
  T elements[N];
  /* As clang's matrix types, which HPVM's hypervectors were (one row of N): v[0][i]. */
  __attribute__((always_inline)) T *operator[](size_t row) noexcept { return elements + row * N; }
  __attribute__((always_inline)) const T *operator[](size_t row) const noexcept {
    return elements + row * N;
  }
};

template <int M, int N, typename T> struct hypermatrix {
  static_assert(M > 0 && N > 0, "a hypermatrix has at least one row and one column");
  T elements[(size_t)M * N];
  __attribute__((always_inline)) T *row(size_t r) noexcept { return elements + r * N; }
  __attribute__((always_inline)) const T *row(size_t r) const noexcept { return elements + r * N; }
  /* m[r][c], as clang's matrix types. */
  __attribute__((always_inline)) T *operator[](size_t r) noexcept { return row(r); }
  __attribute__((always_inline)) const T *operator[](size_t r) const noexcept { return row(r); }
};

/* Every intrinsic: hpvm-cc inlines them where they are called (a loop's or stage marker's
 * function is then a constant there; a node's temporaries stay in its own code, as an
 * OpenCL kernel needs of its private memory). */
#define HPVM_HDC_INLINE __attribute__((always_inline)) inline

} // namespace hpvm::hdc

/* Rows [0, count) of an intrinsic's loop, each row independent of the others (its own
 * outputs, its sums in their own order): `body(context, begin, end)` runs rows [begin, end).
 * hpvm-cc rewrites each call: in the graph build, rows run on the runtime's threads
 * (hpvm_rt_parallel_for) in the host's code and in CPU nodes, else (the sequential build,
 * nodes hinted to a device) body(context, 0, count) runs them all in order. The same rows
 * compute the same bits either way. Never defined. */
extern "C" void __hetero_hdc_rows(size_t count, void (*body)(void *, size_t, size_t),
                                  void *context) noexcept;

namespace hpvm::hdc {
/* Below this many multiply-adds an intrinsic runs on its node's one thread. (Named as the
 * intrinsics are, so that hpvm-cc inlines it too: each call sits in the node it serves.) */
constexpr size_t kParallelWork = (size_t)1 << 18;

template <typename Context>
HPVM_HDC_INLINE void __hetero_hdc_for_rows(size_t count, size_t work,
                                           void (*body)(void *, size_t, size_t),
                                           Context *context) noexcept {
  if (count > 1 && work >= kParallelWork)
    __hetero_hdc_rows(count, body, context);
  else
    body(context, 0, count);
}

/* Dot product of n elements in index order, with 8 independent rows at once where the
 * caller asks for several (the order of each row's sum is the same either way). */
template <typename T>
HPVM_HDC_INLINE void dotRows(const T *x, const T *rows, size_t rowStride, size_t count, size_t n,
                    T *out) noexcept {
#pragma clang fp contract(off)
  size_t r = 0;
  for (; r + 8 <= count; r += 8) {
    T acc[8] = {};
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < 8; ++k)
        acc[k] += x[j] * rows[(r + k) * rowStride + j];
    for (size_t k = 0; k < 8; ++k)
      out[r + k] = acc[k];
  }
  for (; r < count; ++r) {
    T acc = T();
    for (size_t j = 0; j < n; ++j)
      acc += x[j] * rows[r * rowStride + j];
    out[r] = acc;
  }
}

template <typename T> HPVM_HDC_INLINE T sumOfSquares(const T *x, size_t n) noexcept {
#pragma clang fp contract(off)
  T acc = T();
  for (size_t j = 0; j < n; ++j)
    acc += x[j] * x[j];
  return acc;
}

template <typename T> HPVM_HDC_INLINE T norm(const T *x, size_t n) noexcept {
  return (T)sqrt((double)sumOfSquares(x, n));
}

template <typename T> HPVM_HDC_INLINE T cosineSimilarity(const T *a, const T *b, size_t n) noexcept {
#pragma clang fp contract(off)
  T dot;
  dotRows(a, b, n, 1, n, &dot);
  T norms = norm(a, n) * norm(b, n);
  return norms == T() ? T() : (T)(dot / norms);
}

template <typename T> HPVM_HDC_INLINE T hamming(const T *a, const T *b, size_t n) noexcept {
  T count = T();
  for (size_t j = 0; j < n; ++j)
    count += a[j] != b[j] ? T(1) : T();
  return count;
}

/* The first index of the largest (or smallest) element. */
template <typename T> HPVM_HDC_INLINE int argExtreme(const T *x, size_t n, bool largest) noexcept {
  size_t best = 0;
  for (size_t j = 1; j < n; ++j)
    if (largest ? x[j] > x[best] : x[j] < x[best])
      best = j;
  return (int)best;
}

/* A permutation of n indices from `seed` (Fisher-Yates driven by a 64-bit LCG), the
 * same in every build and on every host. */
HPVM_HDC_INLINE void permutation(size_t *order, size_t n, unsigned long long seed) noexcept {
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  unsigned long long state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (size_t i = n; i > 1; --i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t j = (size_t)((state >> 33) % i);
    size_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
}

template <typename T> HPVM_HDC_INLINE T signOf(T x) noexcept { return x < T() ? T(-1) : T(1); }
template <typename T> HPVM_HDC_INLINE T absoluteOf(T x) noexcept { return x < T() ? -x : x; }

/* Element `i` of a created hypervector or hypermatrix: `init(extra..., i)`. */
template <typename T, typename... Extra>
HPVM_HDC_INLINE void fill(T *out, size_t n, void *init, Extra... extra) noexcept {
  auto function = reinterpret_cast<T (*)(Extra..., size_t)>(init);
  for (size_t i = 0; i < n; ++i)
    out[i] = function(extra..., i);
}

HPVM_HDC_INLINE double uniformOpen() noexcept { return ((double)rand() + 1.0) / ((double)RAND_MAX + 2.0); }

template <typename T> HPVM_HDC_INLINE void fillRandom(T *out, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i)
    out[i] = rand() % 2 == 0 ? T(1) : T(-1);
}

template <typename T> HPVM_HDC_INLINE void fillGaussian(T *out, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i)
    out[i] = (T)(sqrt(-2.0 * log(uniformOpen())) * cos(6.283185307179586 * uniformOpen()));
}

/* The row loops of the intrinsics that take long (__hetero_hdc_for_rows runs them): rows
 * [begin, end) of out (or r), from the sizes and buffers of the context. Inlined where they
 * are called directly (a kernel has no calls); the runtime's threads call them through their
 * address. */
template <typename T> struct RowsOfVector {
  const T *x, *rows; // x against rows of n elements
  T *out;
  size_t n;
};
template <typename T>
__attribute__((always_inline)) void dotRowsBody(void *context, size_t begin,
                                                size_t end) noexcept {
  auto *c = static_cast<RowsOfVector<T> *>(context);
  dotRows(c->x, c->rows + begin * c->n, c->n, end - begin, c->n, c->out + begin);
}
template <typename T>
__attribute__((always_inline)) void cossimRowsBody(void *context, size_t begin,
                                                   size_t end) noexcept {
  auto *c = static_cast<RowsOfVector<T> *>(context);
  for (size_t m = begin; m < end; ++m)
    c->out[m] = cosineSimilarity(c->x, c->rows + m * c->n, c->n);
}
template <typename T>
__attribute__((always_inline)) void normRowsBody(void *context, size_t begin,
                                                 size_t end) noexcept {
  auto *c = static_cast<RowsOfVector<T> *>(context);
  for (size_t m = begin; m < end; ++m)
    c->out[m] = norm(c->rows + m * c->n, c->n);
}

template <typename T> struct RowsOfMatrices {
  const T *a, *b; // rows of n elements each
  T *r;           // a's rows by b's k rows
  size_t n, k;
};
template <typename T>
__attribute__((always_inline)) void matmulRowsBody(void *context, size_t begin,
                                                   size_t end) noexcept {
  auto *c = static_cast<RowsOfMatrices<T> *>(context);
  for (size_t i = begin; i < end; ++i)
    dotRows(c->a + i * c->n, c->b, c->n, c->k, c->n, c->r + i * c->k);
}
template <typename T>
__attribute__((always_inline)) void cossimMatrixBody(void *context, size_t begin,
                                                     size_t end) noexcept {
  auto *c = static_cast<RowsOfMatrices<T> *>(context);
  for (size_t i = begin; i < end; ++i)
    for (size_t k = 0; k < c->k; ++k)
      c->r[i * c->k + k] = cosineSimilarity(c->a + i * c->n, c->b + k * c->n, c->n);
}
template <typename T>
__attribute__((always_inline)) void hammingMatrixBody(void *context, size_t begin,
                                                      size_t end) noexcept {
  auto *c = static_cast<RowsOfMatrices<T> *>(context);
  for (size_t i = begin; i < end; ++i)
    for (size_t k = 0; k < c->k; ++k)
      c->r[i * c->k + k] = hamming(c->a + i * c->n, c->b + k * c->n, c->n);
}

} // namespace hpvm::hdc

/* ---- the types ------------------------------------------------------------ */

template <int N, typename T> using __hypervector__ = hpvm::hdc::hypervector<N, T>;
template <int M, int N, typename T> using __hypermatrix__ = hpvm::hdc::hypermatrix<M, N, T>;

#define HPVM_HDC_VECTOR_MAP(NAME, EXPR)                                                        \
  template <int N, typename T>                                                                 \
  HPVM_HDC_INLINE __hypervector__<N, T> NAME(const __hypervector__<N, T> &a) noexcept {                 \
    __hypervector__<N, T> r;                                                                   \
    for (size_t i = 0; i < (size_t)N; ++i) {                                                   \
      T x = a.elements[i];                                                                     \
      r.elements[i] = (EXPR);                                                                  \
    }                                                                                          \
    return r;                                                                                  \
  }                                                                                            \
  template <int M, int N, typename T>                                                          \
  HPVM_HDC_INLINE __hypermatrix__<M, N, T> NAME(const __hypermatrix__<M, N, T> &a) noexcept {           \
    __hypermatrix__<M, N, T> r;                                                                \
    for (size_t i = 0; i < (size_t)M * N; ++i) {                                               \
      T x = a.elements[i];                                                                     \
      r.elements[i] = (EXPR);                                                                  \
    }                                                                                          \
    return r;                                                                                  \
  }

#define HPVM_HDC_VECTOR_ZIP(NAME, OP)                                                          \
  template <int N, typename T>                                                                 \
  HPVM_HDC_INLINE __hypervector__<N, T> NAME(const __hypervector__<N, T> &a,                            \
                                    const __hypervector__<N, T> &b) noexcept {                 \
    __hypervector__<N, T> r;                                                                   \
    for (size_t i = 0; i < (size_t)N; ++i)                                                     \
      r.elements[i] = a.elements[i] OP b.elements[i];                                          \
    return r;                                                                                  \
  }                                                                                            \
  template <int M, int N, typename T>                                                          \
  HPVM_HDC_INLINE __hypermatrix__<M, N, T> NAME(const __hypermatrix__<M, N, T> &a,                      \
                                       const __hypermatrix__<M, N, T> &b) noexcept {           \
    __hypermatrix__<M, N, T> r;                                                                \
    for (size_t i = 0; i < (size_t)M * N; ++i)                                                 \
      r.elements[i] = a.elements[i] OP b.elements[i];                                          \
    return r;                                                                                  \
  }

/* ---- creating hypervectors and hypermatrices ------------------------------ */

/* Zeros (HPVM's "uninitialized": zeros here, so that every build reads the same). */
template <int N, typename T> HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_hypervector() noexcept {
  return __hypervector__<N, T>{};
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_hypermatrix() noexcept {
  return __hypermatrix__<M, N, T>{};
}

/* Element i is init(extra..., i): `T init(size_t)` with no extra argument, `T init(T *, size_t)`
 * with one, ...; the first argument (HPVM's count of extra arguments) is not needed. The
 * elements of a hypermatrix are numbered row after row. */
template <int N, typename T, typename... Extra>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_create_hypervector(int, void *init,
                                                             Extra... extra) noexcept {
  __hypervector__<N, T> r;
  hpvm::hdc::fill<T>(r.elements, N, init, extra...);
  return r;
}
template <int M, int N, typename T, typename... Extra>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_create_hypermatrix(int, void *init,
                                                                Extra... extra) noexcept {
  __hypermatrix__<M, N, T> r;
  hpvm::hdc::fill<T>(r.elements, (size_t)M * N, init, extra...);
  return r;
}

/* +1 or -1 from rand() (srand seeds it); Gaussian: Box-Muller over rand(). */
template <int N, typename T> HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_random_hypervector() noexcept {
  __hypervector__<N, T> r;
  hpvm::hdc::fillRandom(r.elements, N);
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_random_hypermatrix() noexcept {
  __hypermatrix__<M, N, T> r;
  hpvm::hdc::fillRandom(r.elements, (size_t)M * N);
  return r;
}
template <int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_gaussian_hypervector() noexcept {
  __hypervector__<N, T> r;
  hpvm::hdc::fillGaussian(r.elements, N);
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_gaussian_hypermatrix() noexcept {
  __hypermatrix__<M, N, T> r;
  hpvm::hdc::fillGaussian(r.elements, (size_t)M * N);
  return r;
}

/* The buffer of a hypervector or hypermatrix, for task and launch lists. */
template <int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> *__hetero_hdc_get_handle(__hypervector__<N, T> &v) noexcept {
  return &v;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> *__hetero_hdc_get_handle(__hypermatrix__<M, N, T> &m) noexcept {
  return &m;
}

/* ---- element by element (hypervectors, and each element of hypermatrices) -- */

HPVM_HDC_VECTOR_ZIP(__hetero_hdc_sum, +)
HPVM_HDC_VECTOR_ZIP(__hetero_hdc_sub, -)
HPVM_HDC_VECTOR_ZIP(__hetero_hdc_mul, *)
HPVM_HDC_VECTOR_ZIP(__hetero_hdc_div, /)
HPVM_HDC_VECTOR_MAP(__hetero_hdc_absolute_value, hpvm::hdc::absoluteOf(x))
/* Bipolar: -1 below zero, +1 from zero on. */
HPVM_HDC_VECTOR_MAP(__hetero_hdc_sign, hpvm::hdc::signOf(x))
HPVM_HDC_VECTOR_MAP(__hetero_hdc_sign_flip, (T)-x)
HPVM_HDC_VECTOR_MAP(__hetero_hdc_cosine, (T)cos((double)x))

template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_sign_hm(const __hypermatrix__<M, N, T> &a) noexcept {
  return __hetero_hdc_sign(a);
}

template <int N, typename From, typename To>
HPVM_HDC_INLINE __hypervector__<N, To> __hetero_hdc_type_cast(const __hypervector__<N, From> &a) noexcept {
  __hypervector__<N, To> r;
  for (size_t i = 0; i < (size_t)N; ++i)
    r.elements[i] = (To)a.elements[i];
  return r;
}

/* Rotation: element i moves to (i + shift) mod N (a negative shift rotates the other way);
 * in a hypermatrix, each row rotates. */
template <typename T> HPVM_HDC_INLINE void hpvmHdcRotate(const T *a, T *r, size_t n, long long shift) noexcept {
  long long s = shift % (long long)n;
  if (s < 0)
    s += (long long)n;
  for (size_t i = 0; i < n; ++i)
    r[(i + (size_t)s) % n] = a[i];
}
template <int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_wrap_shift(const __hypervector__<N, T> &a,
                                                     long long shift) noexcept {
  __hypervector__<N, T> r;
  hpvmHdcRotate(a.elements, r.elements, N, shift);
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_wrap_shift(const __hypermatrix__<M, N, T> &a,
                                                        long long shift) noexcept {
  __hypermatrix__<M, N, T> r;
  for (size_t row = 0; row < (size_t)M; ++row)
    hpvmHdcRotate(a.row(row), r.row(row), N, shift);
  return r;
}

/* A permutation of the elements chosen by `seed` (of each row's, the same for every row). */
template <int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_shuffle(const __hypervector__<N, T> &a,
                                                  int seed) noexcept {
  size_t order[N];
  hpvm::hdc::permutation(order, N, (unsigned long long)seed);
  __hypervector__<N, T> r;
  for (size_t i = 0; i < (size_t)N; ++i)
    r.elements[i] = a.elements[order[i]];
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> __hetero_hdc_shuffle(const __hypermatrix__<M, N, T> &a,
                                                     int seed) noexcept {
  size_t order[N];
  hpvm::hdc::permutation(order, N, (unsigned long long)seed);
  __hypermatrix__<M, N, T> r;
  for (size_t row = 0; row < (size_t)M; ++row)
    for (size_t i = 0; i < (size_t)N; ++i)
      r.row(row)[i] = a.row(row)[order[i]];
  return r;
}

/* ---- reductions ------------------------------------------------------------ */

template <int N, typename T>
HPVM_HDC_INLINE T __hetero_hdc_cossim(const __hypervector__<N, T> &a,
                             const __hypervector__<N, T> &b) noexcept {
  return hpvm::hdc::cosineSimilarity(a.elements, b.elements, N);
}
template <int N, typename T>
HPVM_HDC_INLINE T __hetero_hdc_hamming_distance(const __hypervector__<N, T> &a,
                                       const __hypervector__<N, T> &b) noexcept {
  return hpvm::hdc::hamming(a.elements, b.elements, N);
}
template <int N, typename T> HPVM_HDC_INLINE T __hetero_hdc_l2norm(const __hypervector__<N, T> &a) noexcept {
  return hpvm::hdc::norm(a.elements, N);
}
template <int N, typename T> HPVM_HDC_INLINE int __hetero_hdc_arg_max(const __hypervector__<N, T> &a) noexcept {
  return hpvm::hdc::argExtreme(a.elements, N, true);
}
template <int N, typename T> HPVM_HDC_INLINE int __hetero_hdc_arg_min(const __hypervector__<N, T> &a) noexcept {
  return hpvm::hdc::argExtreme(a.elements, N, false);
}

/* ---- a hypervector against each row of a hypermatrix ------------------------ */

/* r[m] = sum over n of v[n] * A[m][n]: the projection of v by A's rows. */
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<M, T> __hetero_hdc_matmul(const __hypervector__<N, T> &v,
                                                 const __hypermatrix__<M, N, T> &a) noexcept {
  __hypervector__<M, T> r;
  hpvm::hdc::RowsOfVector<T> rows{v.elements, a.elements, r.elements, (size_t)N};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * N, hpvm::hdc::dotRowsBody<T>, &rows);
  return r;
}

/* A holds the transpose (N rows of M): r[m] = sum over n of v[n] * A's element (n, m). */
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<M, T>
__hetero_hdc_transposed_matmul(const __hypervector__<N, T> &v,
                               const __hypermatrix__<M, N, T> &a) noexcept {
#pragma clang fp contract(off)
  __hypervector__<M, T> r{};
  for (size_t n = 0; n < (size_t)N; ++n)
    for (size_t m = 0; m < (size_t)M; ++m)
      r.elements[m] += v.elements[n] * a.elements[n * M + m];
  return r;
}

template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<M, T> __hetero_hdc_cossim(const __hypervector__<N, T> &v,
                                                 const __hypermatrix__<M, N, T> &a) noexcept {
  __hypervector__<M, T> r;
  hpvm::hdc::RowsOfVector<T> rows{v.elements, a.elements, r.elements, (size_t)N};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * N, hpvm::hdc::cossimRowsBody<T>, &rows);
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<M, T>
__hetero_hdc_hamming_distance(const __hypervector__<N, T> &v,
                              const __hypermatrix__<M, N, T> &a) noexcept {
  __hypervector__<M, T> r;
  for (size_t m = 0; m < (size_t)M; ++m)
    r.elements[m] = hpvm::hdc::hamming(v.elements, a.row(m), N);
  return r;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<M, T> __hetero_hdc_l2norm(const __hypermatrix__<M, N, T> &a) noexcept {
  __hypervector__<M, T> r;
  hpvm::hdc::RowsOfVector<T> rows{nullptr, a.elements, r.elements, (size_t)N};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * N, hpvm::hdc::normRowsBody<T>, &rows);
  return r;
}

/* The row of A most similar (cosine) to v; the first of equals. */
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_search(const __hypervector__<N, T> &v,
                                                 const __hypermatrix__<M, N, T> &a) noexcept {
  __hypervector__<M, T> scores = __hetero_hdc_cossim<M, N, T>(v, a);
  int best = hpvm::hdc::argExtreme(scores.elements, M, true);
  __hypervector__<N, T> r;
  for (size_t n = 0; n < (size_t)N; ++n)
    r.elements[n] = a.row(best)[n];
  return r;
}
/* Against one hypervector: that hypervector. */
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_search(const __hypervector__<N, T> &,
                                                 const __hypervector__<N, T> &a) noexcept {
  return a;
}

/* ---- hypermatrix against hypermatrix ---------------------------------------- */

/* r[i][k] = sum over j of A[i][j] * B[k][j] (B's rows are the projection's). */
template <int M, int N, int P, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, P, T> __hetero_hdc_matmul_hm_hm(const __hypermatrix__<M, N, T> &a,
                                                          const __hypermatrix__<P, N, T> &b,
                                                          size_t = M, size_t = N,
                                                          size_t = P) noexcept {
  __hypermatrix__<M, P, T> r;
  hpvm::hdc::RowsOfMatrices<T> rows{a.elements, b.elements, r.elements, (size_t)N, (size_t)P};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * N * P, hpvm::hdc::matmulRowsBody<T>, &rows);
  return r;
}
/* B given as N rows of P (the ordinary product, R[i][k] = sum over j of A[i][j] * B[j][k]),
 * as earlier programs write it; when N == P the form above (B's rows) is the one taken. */
template <int M, int N, int P, typename T, typename = std::enable_if_t<N != P>>
HPVM_HDC_INLINE __hypermatrix__<M, P, T> __hetero_hdc_matmul_hm_hm(const __hypermatrix__<M, N, T> &a,
                                                          const __hypermatrix__<N, P, T> &b,
                                                          size_t = M, size_t = N,
                                                          size_t = P) noexcept {
#pragma clang fp contract(off)
  __hypermatrix__<M, P, T> r{};
  for (size_t i = 0; i < (size_t)M; ++i)
    for (size_t j = 0; j < (size_t)N; ++j)
      for (size_t k = 0; k < (size_t)P; ++k)
        r.row(i)[k] += a.row(i)[j] * b.row(j)[k];
  return r;
}
template <int M, int K, int D, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, K, T> __hetero_hdc_cossim_hm_hm(const __hypermatrix__<M, D, T> &a,
                                                          const __hypermatrix__<K, D, T> &b,
                                                          size_t = M, size_t = K,
                                                          size_t = D) noexcept {
  __hypermatrix__<M, K, T> r;
  hpvm::hdc::RowsOfMatrices<T> rows{a.elements, b.elements, r.elements, (size_t)D, (size_t)K};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * K * D, hpvm::hdc::cossimMatrixBody<T>, &rows);
  return r;
}
template <int M, int K, int D, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, K, T>
__hetero_hdc_hamming_distance_hm_hm(const __hypermatrix__<M, D, T> &a,
                                    const __hypermatrix__<K, D, T> &b, size_t = M, size_t = K,
                                    size_t = D) noexcept {
  __hypermatrix__<M, K, T> r;
  hpvm::hdc::RowsOfMatrices<T> rows{a.elements, b.elements, r.elements, (size_t)D, (size_t)K};
  hpvm::hdc::__hetero_hdc_for_rows(M, (size_t)M * K * D, hpvm::hdc::hammingMatrixBody<T>, &rows);
  return r;
}
/* labels[i] = the index of row i's largest (smallest) element. */
template <int M, int K, typename T>
HPVM_HDC_INLINE void __hetero_hdc_arg_max_row(const __hypermatrix__<M, K, T> &a, int *labels,
                                     size_t = M, size_t = K) noexcept {
  for (size_t i = 0; i < (size_t)M; ++i)
    labels[i] = hpvm::hdc::argExtreme(a.row(i), K, true);
}
template <int M, int K, typename T>
HPVM_HDC_INLINE void __hetero_hdc_arg_min_row(const __hypermatrix__<M, K, T> &a, int *labels,
                                     size_t = M, size_t = K) noexcept {
  for (size_t i = 0; i < (size_t)M; ++i)
    labels[i] = hpvm::hdc::argExtreme(a.row(i), K, false);
}

/* ---- rows and transposes ------------------------------------------------------- */

template <int M, int N, typename T>
HPVM_HDC_INLINE __hypervector__<N, T> __hetero_hdc_get_matrix_row(const __hypermatrix__<M, N, T> &a,
                                                         size_t, size_t, size_t index) noexcept {
  __hypervector__<N, T> r;
  for (size_t n = 0; n < (size_t)N; ++n)
    r.elements[n] = a.row(index)[n];
  return r;
}
/* In place, as HPVM's programs use it (its result is often dropped); returns the matrix. */
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<M, N, T> &__hetero_hdc_set_matrix_row(__hypermatrix__<M, N, T> &a,
                                                             const __hypervector__<N, T> &v,
                                                             size_t index) noexcept {
  for (size_t n = 0; n < (size_t)N; ++n)
    a.row(index)[n] = v.elements[n];
  return a;
}
template <int M, int N, typename T>
HPVM_HDC_INLINE __hypermatrix__<N, M, T> __hetero_hdc_matrix_transpose(const __hypermatrix__<M, N, T> &a,
                                                              size_t = M, size_t = N) noexcept {
  __hypermatrix__<N, M, T> r;
  for (size_t m = 0; m < (size_t)M; ++m)
    for (size_t n = 0; n < (size_t)N; ++n)
      r.elements[n * M + m] = a.row(m)[n];
  return r;
}

/* An approximation hint for a similarity (sampled elements); the computation stays exact. */
template <typename V, typename... Rest> HPVM_HDC_INLINE void __hetero_hdc_sim_approx(V &, Rest...) noexcept {}

#include "hdc_stages.h"

#undef HPVM_HDC_VECTOR_MAP
#undef HPVM_HDC_VECTOR_ZIP

#endif /* HPVM_HDC_H */
