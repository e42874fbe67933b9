/* sgemm_ref.h - reference C = A x B (float, row-major) that HPVM's sgemm output is checked against. */
#ifndef HPVM_SGEMM_REF_H
#define HPVM_SGEMM_REF_H

/* Fills A (M x K) and B (K x N); every value is a multiple of 1/16, see sgemm_ref.c. */
void sgemm_init(float *A, float *B, int M, int N, int K);

/* One HPVM leaf instance: C[row][col] = sum_{k=0..K-1} A[row][k]*B[k][col], ascending k. */
float sgemm_element(const float *A, const float *B, int N, int K, int row, int col);

void sgemm_seq(const float *A, const float *B, float *C, int M, int N, int K);
void sgemm_omp(const float *A, const float *B, float *C, int M, int N, int K);

/* Number of elements with |C - ref| > tolerance * max(|ref|, 1); NaN always counts. */
int sgemm_check(const float *C, const float *ref, int M, int N, float tolerance);

#endif
