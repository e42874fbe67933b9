// stencil (HPVM-C): the Parboil 7-point 3-D Jacobi step,
//   Anext = c1 * (6 neighbours) - c0 * A0 on the interior,
// as a 3-D leaf hinted GPU_TARGET over the (nx-2) x (ny-2) x (nz-2) interior, created by a
// root internal node that __hpvm__launch starts (the runtime picks 8x8x4 work-groups). One
// untimed warm-up step, then RUNS timed steps, each one __hpvm__launch + __hpvm__wait, the
// two tracked buffers swapped between steps (both stay on the device). The result comes
// back with llvm_hpvm_request_mem after the runs (not timed).
// Usage: stencil_hpvm NX NY NZ RUNS
#include <hpvm/hpvm.h>
#include "bench_common.h"

#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))

typedef struct __attribute__((__packed__)) {
  float c0, c1;
  float *A0;
  size_t bytes_A0;
  float *Anext;
  size_t bytes_Anext;
  int nx, ny, nz;
} RootIn;

void stencil_leaf(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                  size_t bytes_Anext, int nx, int ny, int nz) {
  __hpvm__hint(GPU_TARGET);
  __hpvm__attributes(1, A0, 1, Anext);
  void *self = __hpvm__getNode();
  int i = __hpvm__getNodeInstanceID_x(self) + 1;
  int j = __hpvm__getNodeInstanceID_y(self) + 1;
  int k = __hpvm__getNodeInstanceID_z(self) + 1;
  Anext[Index3D(nx, ny, i, j, k)] =
      c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
            A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
            A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
      A0[Index3D(nx, ny, i, j, k)] * c0;
}

void stencil_root(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                  size_t bytes_Anext, int nx, int ny, int nz) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, A0, 1, Anext);
  void *leaf = __hpvm__createNodeND(3, stencil_leaf, (long)(nx - 2), (long)(ny - 2),
                                    (long)(nz - 2));
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(leaf, p, p, 0);
}

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 128, ny = argc > 2 ? atoi(argv[2]) : 128,
      nz = argc > 3 ? atoi(argv[3]) : 32, runs = argc > 4 ? atoi(argv[4]) : 5;
  size_t size = (size_t)nx * ny * nz, bytes = size * sizeof(float);
  float *A0 = malloc(bytes), *Anext = malloc(bytes);
  stencil_init(A0, Anext, nx, ny, nz);
  float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;
  __hpvm__init();
  llvm_hpvm_track_mem(A0, bytes);
  llvm_hpvm_track_mem(Anext, bytes);
  RootIn *args = malloc(sizeof(RootIn));
  double *times = malloc(runs * sizeof(double));
  for (int r = -1; r < runs; ++r) { // r = -1: the warm-up step
    args->c0 = c0;
    args->c1 = c1;
    args->A0 = A0;
    args->bytes_A0 = bytes;
    args->Anext = Anext;
    args->bytes_Anext = bytes;
    args->nx = nx;
    args->ny = ny;
    args->nz = nz;
    double t0 = bench_now_ms();
    void *dfg = __hpvm__launch(0, stencil_root, (void *)args);
    __hpvm__wait(dfg);
    if (r >= 0)
      times[r] = bench_now_ms() - t0;
    float *t = A0;
    A0 = Anext;
    Anext = t;
  }
  // The last step's result is in A0 (swapped after it).
  llvm_hpvm_request_mem(A0, bytes);
  char name[64];
  snprintf(name, sizeof name, "stencil %dx%dx%d", nx, ny, nz);
  bench_report(name, "hpvm", times, runs, bench_checksum(A0, size));
  llvm_hpvm_untrack_mem(A0);
  llvm_hpvm_untrack_mem(Anext);
  __hpvm__cleanup();
  return 0;
}
