// The 7-point 3-D Jacobi stencil of test/HPVMC/run/stencil.c in Hetero-C++: a
// parallel loop over the three loops of the interior, launched once per
// iteration with the buffers swapped (buffer pairs with the `false` flag some
// Hetero-C++ programs write after each pair). The output lines are the HPVM-C
// program's.
#include <hetero.h>
#include <stdio.h>
#include <stdlib.h>

#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))

void stencil(float c0, float c1, float *A0, size_t bytes_A0, float *Anext, size_t bytes_Anext,
             int nx, int ny, int nz) {
  void *section = __hetero_section_begin();
  for (int k = 1; k < nz - 1; ++k)
    for (int j = 1; j < ny - 1; ++j)
      for (int i = 1; i < nx - 1; ++i) {
        __hetero_parallel_loop(3, 6, c0, c1, A0, bytes_A0, Anext, bytes_Anext, nx, ny, 1,
                               Anext, bytes_Anext, "stencil_point");
        __hetero_hint(DEVICE);
        Anext[Index3D(nx, ny, i, j, k)] =
            c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
                  A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
                  A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
            A0[Index3D(nx, ny, i, j, k)] * c0;
      }
  __hetero_section_end(section);
}

static void reference(float c0, float c1, const float *A0, float *Anext, int nx, int ny,
                      int nz) {
  for (int k = 1; k < nz - 1; ++k)
    for (int j = 1; j < ny - 1; ++j)
      for (int i = 1; i < nx - 1; ++i)
        Anext[Index3D(nx, ny, i, j, k)] =
            c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
                  A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
                  A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
            A0[Index3D(nx, ny, i, j, k)] * c0;
}

static int run(int nx, int ny, int nz, int iterations) {
  size_t size = (size_t)nx * ny * nz, bytes = size * sizeof(float);
  float *A0 = (float *)malloc(bytes), *Anext = (float *)malloc(bytes);
  float *r_A0 = (float *)malloc(bytes), *r_Anext = (float *)malloc(bytes);
  for (size_t i = 0; i < size; ++i)
    A0[i] = Anext[i] = r_A0[i] = r_Anext[i] = (float)((i * 31) % 97) / 16.0f;
  float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;
  for (int t = 0; t < iterations; ++t) {
    void *graph = __hetero_launch((void *)stencil, 7, c0, c1, A0, bytes, false, Anext, bytes,
                                  false, nx, ny, nz, 1, Anext, bytes, false);
    __hetero_wait(graph);
    float *swap = A0;
    A0 = Anext;
    Anext = swap;
    reference(c0, c1, r_A0, r_Anext, nx, ny, nz);
    swap = r_A0;
    r_A0 = r_Anext;
    r_Anext = swap;
  }
  long wrong = 0;
  double sum = 0;
  for (size_t i = 0; i < size; ++i) {
    wrong += A0[i] != r_A0[i];
    sum += A0[i];
  }
  printf("stencil: %dx%dx%d iterations=%d sum=%.4f wrong=%ld\n", nx, ny, nz, iterations, sum,
         wrong);
  free(A0);
  free(Anext);
  free(r_A0);
  free(r_Anext);
  return wrong != 0;
}

int main() { return run(34, 18, 10, 5) + run(19, 13, 7, 4) + run(3, 3, 3, 1); }
