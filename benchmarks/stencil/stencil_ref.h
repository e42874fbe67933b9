/* stencil_ref.h - reference Parboil-style 3-D 7-point Jacobi stencil that HPVM's stencil is checked against. */
#ifndef HPVM_STENCIL_REF_H
#define HPVM_STENCIL_REF_H

/* Parboil's constants, spelled exactly as Parboil computes them (in float). */
#define STENCIL_C0 (1.0f / 6.0f)
#define STENCIL_C1 (1.0f / 6.0f / 6.0f)

/* Grid layout: x fastest, index = i + nx*(j + ny*k). */
#define STENCIL_IDX(nx, ny, i, j, k) ((long)(i) + (long)(nx) * ((long)(j) + (long)(ny) * (long)(k)))

/* Deterministic input in [0, 1): a hash of the linear index, so any process can regenerate it. */
void stencil_init(float *A, int nx, int ny, int nz);

/* One HPVM leaf instance: the new value of point (i, j, k) computed from `in`. */
float stencil_point(const float *in, int nx, int ny, int nz, int i, int j, int k);

/* One Jacobi sweep in -> out over the whole grid (boundary copied). */
void stencil_step_seq(const float *in, float *out, int nx, int ny, int nz);
void stencil_step_omp(const float *in, float *out, int nx, int ny, int nz);

/*
 * `iterations` sweeps ping-ponging a -> b -> a ...; `a` holds the input on entry and `b` needs no
 * initialisation. Returns the buffer holding the result: a if iterations is even, else b.
 */
float *stencil_seq(float *a, float *b, int nx, int ny, int nz, int iterations);
float *stencil_omp(float *a, float *b, int nx, int ny, int nz, int iterations);

/* Number of points with |out - ref| > tolerance * max(|ref|, 1); NaN always counts. */
int stencil_check(const float *out, const float *ref, long n, float tolerance);

#endif
