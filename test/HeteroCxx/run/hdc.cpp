// hdc.cpp - every HDC intrinsic of hdc.h in a task, and the stage markers and loops,
// each checked against a plain C++ loop computed in main; prints one line per check.
#include <heterocc.h>
#include <hpvm_hdc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 37, M = 11, P = 5 };
typedef __hypervector__<N, float> hv;
typedef __hypermatrix__<M, N, float> hm;

static float element(size_t i) { return (float)((i * 7919) % 23) - 11.0f; }
static float row_element(size_t i) { return (float)((i * 104729) % 19) - 9.0f + 0.25f; }
static float from_table(const float *table, size_t i) { return table[i]; }

// Offsets of the results in `out`.
enum {
  SUM = 0, SUB = SUM + N, MUL = SUB + N, DIV = MUL + N, ABS = DIV + N, SIGN = ABS + N,
  FLIP = SIGN + N, COS = FLIP + N, SHIFT = COS + N, SHIFT_BACK = SHIFT + N, SHUFFLE = SHIFT_BACK + N,
  MATMUL = SHUFFLE + N, TMATMUL = MATMUL + M, COSSIM = TMATMUL + M, HAMMING = COSSIM + M,
  NORMS = HAMMING + M, SCALARS = NORMS + M, ROW = SCALARS + 6, TRANSPOSE = ROW + N,
  HMHM = TRANSPOSE + M * N, COSHM = HMHM + P * M, HAMHM = COSHM + P * M, ARGROWS = HAMHM + P * M,
  SEARCH = ARGROWS + 2 * P, CAST = SEARCH + N, SETROW = CAST + N, OUT_SIZE = SETROW + M * N
};

void ops(hv *a, size_t na, hv *b, size_t nb, hm *m, size_t nm, __hypermatrix__<P, N, float> *q,
         size_t nq, float *out, size_t nout) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(5, a, na, b, nb, m, nm, q, nq, out, nout, 1, out, nout, "ops");
  __hetero_hint(DEVICE); // a kernel with --target=opencl and DEVICE=GPU_TARGET
  {
    hv *v = (hv *)out;
    v[0] = __hetero_hdc_sum<N, float>(*a, *b);
    *(hv *)(out + SUB) = __hetero_hdc_sub<N, float>(*a, *b);
    *(hv *)(out + MUL) = __hetero_hdc_mul<N, float>(*a, *b);
    *(hv *)(out + DIV) = __hetero_hdc_div<N, float>(*a, *b);
    *(hv *)(out + ABS) = __hetero_hdc_absolute_value<N, float>(*a);
    *(hv *)(out + SIGN) = __hetero_hdc_sign<N, float>(*a);
    *(hv *)(out + FLIP) = __hetero_hdc_sign_flip<N, float>(*a);
    *(hv *)(out + COS) = __hetero_hdc_cosine<N, float>(*a);
    *(hv *)(out + SHIFT) = __hetero_hdc_wrap_shift<N, float>(*a, 5);
    *(hv *)(out + SHIFT_BACK) =
        __hetero_hdc_wrap_shift<N, float>(__hetero_hdc_wrap_shift<N, float>(*a, 5), -5);
    *(hv *)(out + SHUFFLE) = __hetero_hdc_shuffle<N, float>(*a, 42);
    *(__hypervector__<M, float> *)(out + MATMUL) = __hetero_hdc_matmul<M, N, float>(*a, *m);
    *(__hypervector__<M, float> *)(out + TMATMUL) =
        __hetero_hdc_transposed_matmul<M, N, float>(*a, *m);
    *(__hypervector__<M, float> *)(out + COSSIM) = __hetero_hdc_cossim<M, N, float>(*a, *m);
    *(__hypervector__<M, float> *)(out + HAMMING) =
        __hetero_hdc_hamming_distance<M, N, float>(__hetero_hdc_sign<N, float>(*a),
                                                   __hetero_hdc_sign(*m));
    *(__hypervector__<M, float> *)(out + NORMS) = __hetero_hdc_l2norm<M, N, float>(*m);
    out[SCALARS + 0] = __hetero_hdc_cossim<N, float>(*a, *b);
    out[SCALARS + 1] = __hetero_hdc_l2norm<N, float>(*a);
    out[SCALARS + 2] = __hetero_hdc_hamming_distance<N, float>(*a, *b);
    out[SCALARS + 3] = (float)__hetero_hdc_arg_max<N, float>(*a);
    out[SCALARS + 4] = (float)__hetero_hdc_arg_min<N, float>(*a);
    out[SCALARS + 5] = (float)__hetero_hdc_arg_max<M, float>(__hetero_hdc_matmul<M, N, float>(*a, *m));
    *(hv *)(out + ROW) = __hetero_hdc_get_matrix_row<M, N, float>(*m, M, N, 3);
    *(__hypermatrix__<N, M, float> *)(out + TRANSPOSE) =
        __hetero_hdc_matrix_transpose<M, N, float>(*m, M, N);
    *(__hypermatrix__<P, M, float> *)(out + HMHM) =
        __hetero_hdc_matmul_hm_hm<P, N, M, float>(*q, *m, P, N, M);
    __hypermatrix__<P, M, float> similarities =
        __hetero_hdc_cossim_hm_hm<P, M, N, float>(*q, *m, P, M, N);
    *(__hypermatrix__<P, M, float> *)(out + COSHM) = similarities;
    __hypermatrix__<P, M, float> distances = __hetero_hdc_hamming_distance_hm_hm<P, M, N, float>(
        __hetero_hdc_sign_hm<P, N, float>(*q), __hetero_hdc_sign(*m), P, M, N);
    *(__hypermatrix__<P, M, float> *)(out + HAMHM) = distances;
    int labels[2 * P];
    __hetero_hdc_arg_max_row<P, M, float>(similarities, labels, P, M);
    __hetero_hdc_arg_min_row<P, M, float>(distances, labels + P, P, M);
    for (int i = 0; i < 2 * P; ++i)
      out[ARGROWS + i] = (float)labels[i];
    *(hv *)(out + SEARCH) = __hetero_hdc_search<M, N, float>(*b, *m);
    __hypervector__<N, int> truncated = __hetero_hdc_type_cast<N, float, int>(*a);
    *(hv *)(out + CAST) = __hetero_hdc_type_cast<N, int, float>(truncated);
    hm copy = *m;
    __hetero_hdc_set_matrix_row<M, N, float>(copy, *a, 7);
    *(hm *)(out + SETROW) = copy;
  }
  __hetero_task_end(task);
  __hetero_section_end(section);
}

static int failures = 0;
static void check(const char *what, const float *got, const float *want, int count) {
  int wrong = 0;
  for (int i = 0; i < count; ++i)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i]))))
      ++wrong;
  double sum = 0;
  for (int i = 0; i < count; ++i)
    sum += got[i];
  printf("hdc: %-12s %3d values sum=%.4f wrong=%d\n", what, count, sum, wrong);
  failures += wrong;
}

static float dot(const float *x, const float *y, int n) {
  float acc = 0;
  for (int j = 0; j < n; ++j)
    acc += x[j] * y[j];
  return acc;
}
static float norm(const float *x, int n) { return (float)sqrt((double)dot(x, x, n)); }
static float cosine(const float *x, const float *y, int n) {
  return dot(x, y, n) / (norm(x, n) * norm(y, n));
}
static float bipolar(float x) { return x < 0 ? -1.0f : 1.0f; }

// The encoding / inference / training loops: per data point, a root with a task.
enum { POINTS = 6, FEATURES = 9, STRIDE = 12, DIM = 16, CLASSES = 3 };
typedef __hypermatrix__<DIM, FEATURES, float> projection;

void encode_point(projection *rp, size_t nrp, __hypervector__<FEATURES, float> *x, size_t nx,
                  __hypervector__<DIM, float> *y, size_t ny) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(3, rp, nrp, x, nx, y, ny, 1, y, ny, "encode_point");
  *y = __hetero_hdc_sign<DIM, float>(__hetero_hdc_matmul<DIM, FEATURES, float>(*x, *rp));
  __hetero_task_end(task);
  __hetero_section_end(section);
}

// A stage marker in a task: the function it names holds the task's graph.
void encode_stage(projection *rp, size_t nrp, __hypervector__<FEATURES, float> *x, size_t nx,
                  __hypervector__<DIM, float> *y, size_t ny) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(3, rp, nrp, x, nx, y, ny, 1, y, ny, "encode_stage");
  __hetero_hdc_encoding(6, (void *)encode_point, rp, nrp, x, nx, y, ny);
  __hetero_task_end(task);
  __hetero_section_end(section);
}

void infer_point(projection *rp, size_t nrp, __hypervector__<FEATURES, float> *x, size_t nx,
                 __hypermatrix__<CLASSES, DIM, float> *classes, size_t nc, int *label, size_t nl,
                 __hypervector__<DIM, float> *scratch, size_t ns) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(5, rp, nrp, x, nx, classes, nc, label, nl, scratch, ns, 1,
                                   label, nl, "infer_point");
  __hetero_hint(DEVICE);
  // The scratch vector is declared only as an input: written, then read back here.
  *scratch = __hetero_hdc_matmul<DIM, FEATURES, float>(*x, *rp);
  *label = __hetero_hdc_arg_max<CLASSES, float>(
      __hetero_hdc_cossim<CLASSES, DIM, float>(*scratch, *classes));
  __hetero_task_end(task);
  __hetero_section_end(section);
}

void train_point(projection *rp, size_t nrp, __hypervector__<FEATURES, float> *x, size_t nx,
                 __hypermatrix__<CLASSES, DIM, float> *classes, size_t nc, int label,
                 __hypervector__<DIM, float> *scratch, size_t ns) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(5, rp, nrp, x, nx, classes, nc, label, scratch, ns, 1, classes,
                                   nc, "train_point");
  *scratch = __hetero_hdc_matmul<DIM, FEATURES, float>(*x, *rp);
  __hypervector__<DIM, float> row =
      __hetero_hdc_get_matrix_row<CLASSES, DIM, float>(*classes, CLASSES, DIM, label);
  __hetero_hdc_set_matrix_row<CLASSES, DIM, float>(
      *classes, __hetero_hdc_sum<DIM, float>(row, *scratch), label);
  __hetero_task_end(task);
  __hetero_section_end(section);
}

static int loops() {
  static float data[POINTS * STRIDE];
  for (int i = 0; i < POINTS * STRIDE; ++i)
    data[i] = (float)((i * 31) % 17) - 8.0f;
  projection rp = __hetero_hdc_create_hypermatrix<DIM, FEATURES, float>(0, (void *)row_element);
  __hypermatrix__<POINTS, DIM, float> encoded = __hetero_hdc_hypermatrix<POINTS, DIM, float>();
  __hetero_hdc_encoding_loop(0, (void *)encode_stage, POINTS, CLASSES, FEATURES, STRIDE, &rp,
                             sizeof rp, data, FEATURES * sizeof(float),
                             __hetero_hdc_get_handle(encoded), DIM * sizeof(float));
  float want[POINTS * DIM];
  for (int p = 0; p < POINTS; ++p)
    for (int d = 0; d < DIM; ++d)
      want[p * DIM + d] = bipolar(dot(data + p * STRIDE, rp.elements + d * FEATURES, FEATURES));
  check("encode loop", encoded.elements, want, POINTS * DIM);

  __hypermatrix__<CLASSES, DIM, float> classes = __hetero_hdc_hypermatrix<CLASSES, DIM, float>();
  __hypervector__<DIM, float> scratch = __hetero_hdc_hypervector<DIM, float>();
  int truth[POINTS] = {0, 1, 2, 1, 0, 2};
  __hetero_hdc_training_loop(14, (void *)train_point, 2, POINTS, FEATURES, STRIDE, &rp, sizeof rp,
                             data, FEATURES * sizeof(float), &classes, sizeof classes, truth,
                             sizeof truth, &scratch, sizeof scratch);
  float trained[CLASSES * DIM] = {};
  for (int epoch = 0; epoch < 2; ++epoch)
    for (int p = 0; p < POINTS; ++p)
      for (int d = 0; d < DIM; ++d)
        trained[truth[p] * DIM + d] += dot(data + p * STRIDE, rp.elements + d * FEATURES, FEATURES);
  check("train loop", classes.elements, trained, CLASSES * DIM);

  int labels[POINTS];
  __hetero_hdc_inference_loop(12, (void *)infer_point, POINTS, FEATURES, STRIDE, &rp, sizeof rp,
                              data, FEATURES * sizeof(float), &classes, sizeof classes, labels,
                              sizeof labels, &scratch, sizeof scratch);
  float got[POINTS], expected[POINTS];
  for (int p = 0; p < POINTS; ++p) {
    float projected[DIM], best = -2;
    for (int d = 0; d < DIM; ++d)
      projected[d] = dot(data + p * STRIDE, rp.elements + d * FEATURES, FEATURES);
    expected[p] = 0;
    for (int c = 0; c < CLASSES; ++c)
      if (float s = cosine(projected, trained + c * DIM, DIM); s > best)
        best = s, expected[p] = (float)c;
    got[p] = (float)labels[p];
  }
  check("infer loop", got, expected, POINTS);
  return 0;
}

int main() {
  static float out[OUT_SIZE];
  hv a = __hetero_hdc_create_hypervector<N, float>(0, (void *)element);
  float table[N];
  for (int i = 0; i < N; ++i)
    table[i] = 0.5f + (float)((i * 13) % 7);
  hv b = __hetero_hdc_create_hypervector<N, float>(1, (void *)from_table, (const float *)table);
  hm m = __hetero_hdc_create_hypermatrix<M, N, float>(0, (void *)row_element);
  __hypermatrix__<P, N, float> q = __hetero_hdc_hypermatrix<P, N, float>();
  for (int r = 0; r < P; ++r)
    __hetero_hdc_set_matrix_row<P, N, float>(
        q, __hetero_hdc_get_matrix_row<M, N, float>(m, M, N, (size_t)(r * 2 + 1)), (size_t)r);
  q.elements[3] = -q.elements[3];
  void *graph = __hetero_launch((void *)ops, 5, __hetero_hdc_get_handle(a), sizeof a,
                                __hetero_hdc_get_handle(b), sizeof b, __hetero_hdc_get_handle(m),
                                sizeof m, __hetero_hdc_get_handle(q), sizeof q, out, sizeof out, 1,
                                out, sizeof out);
  __hetero_wait(graph);

  float want[M * N];
  for (int i = 0; i < N; ++i) want[i] = a[0][i] + b[0][i];
  check("sum", out + SUM, want, N);
  for (int i = 0; i < N; ++i) want[i] = a[0][i] - b[0][i];
  check("sub", out + SUB, want, N);
  for (int i = 0; i < N; ++i) want[i] = a[0][i] * b[0][i];
  check("mul", out + MUL, want, N);
  for (int i = 0; i < N; ++i) want[i] = a[0][i] / b[0][i];
  check("div", out + DIV, want, N);
  for (int i = 0; i < N; ++i) want[i] = fabsf(a[0][i]);
  check("abs", out + ABS, want, N);
  for (int i = 0; i < N; ++i) want[i] = bipolar(a[0][i]);
  check("sign", out + SIGN, want, N);
  for (int i = 0; i < N; ++i) want[i] = -a[0][i];
  check("sign_flip", out + FLIP, want, N);
  for (int i = 0; i < N; ++i) want[i] = (float)cos((double)a[0][i]);
  check("cosine", out + COS, want, N);
  for (int i = 0; i < N; ++i) want[(i + 5) % N] = a[0][i];
  check("wrap_shift", out + SHIFT, want, N);
  check("shift back", out + SHIFT_BACK, a.elements, N);
  float sorted[2][N];
  for (int k = 0; k < 2; ++k) // a permutation: the same multiset
    for (int i = 0; i < N; ++i) {
      float x = k ? out[SHUFFLE + i] : a[0][i];
      int j = i;
      for (; j > 0 && sorted[k][j - 1] > x; --j)
        sorted[k][j] = sorted[k][j - 1];
      sorted[k][j] = x;
    }
  check("shuffle", sorted[1], sorted[0], N);
  for (int r = 0; r < M; ++r) want[r] = dot(a.elements, m.elements + r * N, N);
  check("matmul", out + MATMUL, want, M);
  for (int r = 0; r < M; ++r) {
    want[r] = 0;
    for (int n = 0; n < N; ++n) want[r] += a[0][n] * m.elements[n * M + r];
  }
  check("transposed", out + TMATMUL, want, M);
  for (int r = 0; r < M; ++r) want[r] = cosine(a.elements, m.elements + r * N, N);
  check("cossim", out + COSSIM, want, M);
  for (int r = 0; r < M; ++r) {
    want[r] = 0;
    for (int n = 0; n < N; ++n) want[r] += bipolar(a[0][n]) != bipolar(m.elements[r * N + n]);
  }
  check("hamming", out + HAMMING, want, M);
  for (int r = 0; r < M; ++r) want[r] = norm(m.elements + r * N, N);
  check("l2norm rows", out + NORMS, want, M);
  want[0] = cosine(a.elements, b.elements, N);
  want[1] = norm(a.elements, N);
  want[2] = 0;
  for (int n = 0; n < N; ++n) want[2] += a[0][n] != b[0][n];
  int hi = 0, lo = 0, best = 0;
  for (int n = 1; n < N; ++n) {
    if (a[0][n] > a[0][hi]) hi = n;
    if (a[0][n] < a[0][lo]) lo = n;
  }
  for (int r = 1; r < M; ++r)
    if (out[MATMUL + r] > out[MATMUL + best]) best = r;
  want[3] = (float)hi, want[4] = (float)lo, want[5] = (float)best;
  check("scalars", out + SCALARS, want, 6);
  check("get row", out + ROW, m.elements + 3 * N, N);
  for (int r = 0; r < M; ++r)
    for (int n = 0; n < N; ++n) want[n * M + r] = m.elements[r * N + n];
  check("transpose", out + TRANSPOSE, want, M * N);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k) want[i * M + k] = dot(q.elements + i * N, m.elements + k * N, N);
  check("matmul hm", out + HMHM, want, P * M);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k) want[i * M + k] = cosine(q.elements + i * N, m.elements + k * N, N);
  check("cossim hm", out + COSHM, want, P * M);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k) {
      want[i * M + k] = 0;
      for (int n = 0; n < N; ++n)
        want[i * M + k] += bipolar(q.elements[i * N + n]) != bipolar(m.elements[k * N + n]);
    }
  check("hamming hm", out + HAMHM, want, P * M);
  for (int i = 0; i < P; ++i) {
    int most = 0, least = 0;
    for (int k = 1; k < M; ++k) {
      if (out[COSHM + i * M + k] > out[COSHM + i * M + most]) most = k;
      if (out[HAMHM + i * M + k] < out[HAMHM + i * M + least]) least = k;
    }
    want[i] = (float)most, want[P + i] = (float)least;
  }
  check("arg rows", out + ARGROWS, want, 2 * P);
  best = 0;
  for (int r = 1; r < M; ++r)
    if (cosine(b.elements, m.elements + r * N, N) > cosine(b.elements, m.elements + best * N, N))
      best = r;
  check("search", out + SEARCH, m.elements + best * N, N);
  for (int i = 0; i < N; ++i) want[i] = (float)(int)a[0][i];
  check("type_cast", out + CAST, want, N);
  for (int i = 0; i < M * N; ++i) want[i] = i / N == 7 ? a[0][i % N] : m.elements[i];
  check("set row", out + SETROW, want, M * N);

  srand(7);
  hv random = __hetero_hdc_random_hypervector<N, float>();
  int bipolars = 0;
  for (int i = 0; i < N; ++i) bipolars += random[0][i] == 1.0f || random[0][i] == -1.0f;
  hv gaussian = __hetero_hdc_gaussian_hypervector<N, float>();
  printf("hdc: random %d of %d bipolar, gaussian l2norm %.4f\n", bipolars, N,
         __hetero_hdc_l2norm<N, float>(gaussian));
  failures += bipolars != N;
  loops();
  printf("hdc: %s\n", failures ? "FAILED" : "all match");
  return failures != 0;
}
