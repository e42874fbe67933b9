// hdc_rows.cpp - the HDC intrinsics whose rows the graph build runs on the runtime's threads
// (sizes above hdc.h's threshold), in a CPU task, each result compared bit for bit with a
// plain C++ loop of the same sums in the same order. Prints one line per intrinsic.
#include <heterocc.h>
#include <hpvm_hdc.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 512, M = 1024, P = 96 };
typedef __hypervector__<N, float> hv;
typedef __hypermatrix__<M, N, float> hm;
typedef __hypermatrix__<P, N, float> hq;

// Offsets of the results in `out`.
enum {
  MATMUL = 0, COSSIM = MATMUL + M, NORMS = COSSIM + M, HMHM = NORMS + M, COSHM = HMHM + P * M,
  HAMHM = COSHM + P * M, OUT_SIZE = HAMHM + P * M
};

void rows(hv *a, size_t na, hm *m, size_t nm, hq *q, size_t nq, hq *signs, size_t nsigns,
          hm *msigns, size_t nmsigns, float *out, size_t nout) {
  void *section = __hetero_section_begin();
  void *task = __hetero_task_begin(6, a, na, m, nm, q, nq, signs, nsigns, msigns, nmsigns, out,
                                   nout, 1, out, nout, "rows");
  *(__hypervector__<M, float> *)(out + MATMUL) = __hetero_hdc_matmul<M, N, float>(*a, *m);
  *(__hypervector__<M, float> *)(out + COSSIM) = __hetero_hdc_cossim<M, N, float>(*a, *m);
  *(__hypervector__<M, float> *)(out + NORMS) = __hetero_hdc_l2norm<M, N, float>(*m);
  *(__hypermatrix__<P, M, float> *)(out + HMHM) =
      __hetero_hdc_matmul_hm_hm<P, N, M, float>(*q, *m, P, N, M);
  *(__hypermatrix__<P, M, float> *)(out + COSHM) =
      __hetero_hdc_cossim_hm_hm<P, M, N, float>(*q, *m, P, M, N);
  *(__hypermatrix__<P, M, float> *)(out + HAMHM) =
      __hetero_hdc_hamming_distance_hm_hm<P, M, N, float>(*signs, *msigns, P, M, N);
  __hetero_task_end(task);
  __hetero_section_end(section);
}

#pragma clang fp contract(off)
static float dot(const float *x, const float *y) {
  float acc = 0;
  for (int j = 0; j < N; ++j)
    acc += x[j] * y[j];
  return acc;
}
static float norm(const float *x) { return (float)sqrt((double)dot(x, x)); }
static float cosine(const float *x, const float *y) {
  float d = dot(x, y), norms = norm(x) * norm(y);
  return norms == 0 ? 0 : d / norms;
}
static float hamming(const float *x, const float *y) {
  float count = 0;
  for (int j = 0; j < N; ++j)
    count += x[j] != y[j] ? 1 : 0;
  return count;
}

static int wrong = 0;
static void check(const char *what, const float *got, const float *want, int count) {
  int bad = 0;
  double sum = 0;
  for (int i = 0; i < count; ++i) {
    bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    sum += got[i];
  }
  wrong += bad;
  printf("hdc rows: %-10s %6d values sum=%.4f wrong=%d\n", what, count, sum, bad);
}

static hv a;
static hm m, msigns;
static hq q, signs;
static float out[OUT_SIZE], want[P * M];

int main() {
  for (int j = 0; j < N; ++j)
    a.elements[j] = (float)((j * 7919) % 23) - 11.0f + 0.125f;
  for (int i = 0; i < M * N; ++i) {
    m.elements[i] = (float)((i * 104729) % 19) - 9.0f + 0.25f;
    msigns.elements[i] = m.elements[i] < 0 ? -1.0f : 1.0f;
  }
  for (int i = 0; i < P * N; ++i) {
    q.elements[i] = (float)((i * 7907) % 29) - 14.0f + 0.5f;
    signs.elements[i] = q.elements[i] < 0 ? -1.0f : 1.0f;
  }
  void *graph = __hetero_launch((void *)rows, 6, &a, sizeof(a), &m, sizeof(m), &q, sizeof(q),
                                &signs, sizeof(signs), &msigns, sizeof(msigns), out,
                                sizeof(out), 1, out, sizeof(out));
  __hetero_wait(graph);
  for (int r = 0; r < M; ++r)
    want[r] = dot(a.elements, m.row(r));
  check("matmul", out + MATMUL, want, M);
  for (int r = 0; r < M; ++r)
    want[r] = cosine(a.elements, m.row(r));
  check("cossim", out + COSSIM, want, M);
  for (int r = 0; r < M; ++r)
    want[r] = norm(m.row(r));
  check("l2norm", out + NORMS, want, M);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k)
      want[i * M + k] = dot(q.row(i), m.row(k));
  check("matmul hm", out + HMHM, want, P * M);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k)
      want[i * M + k] = cosine(q.row(i), m.row(k));
  check("cossim hm", out + COSHM, want, P * M);
  for (int i = 0; i < P; ++i)
    for (int k = 0; k < M; ++k)
      want[i * M + k] = hamming(signs.row(i), msigns.row(k));
  check("hamming hm", out + HAMHM, want, P * M);
  printf("hdc rows: %s\n", wrong ? "MISMATCH" : "all match");
  return wrong != 0;
}
