// Ported in the style of the Parboil stencil of the HPVM release: a 7-point
// 3-D Jacobi stencil, Anext = c1 * (6 neighbours) - c0 * A0 on the interior,
// as a root with a 3-D grid of 3-D blocks (instance ids of the leaf and its
// parent), pointer/size pairs, __hpvm__hint(DEVICE), __hpvm__attributes, and
// the graph launched once per iteration with the buffers swapped between
// launches, as the benchmark's host does.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + (_nx) * ((_j) + (_ny) * (_k)))

typedef struct __attribute__((__packed__)) {
  float c0, c1;
  float *A0;
  size_t bytes_A0;
  float *Anext;
  size_t bytes_Anext;
  int nx, ny, nz;
  long blockDimX, blockDimY, blockDimZ;
  long gridDimX, gridDimY, gridDimZ;
} RootIn;

void naive_kernel(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                  size_t bytes_Anext, int nx, int ny, int nz) {
  __hpvm__hint(DEVICE);
  __hpvm__attributes(2, A0, Anext, 1, Anext);

  void *thisNode = __hpvm__getNode();
  void *parentNode = __hpvm__getParentNode(thisNode);
  int lx = __hpvm__getNodeInstanceID_x(thisNode);
  int ly = __hpvm__getNodeInstanceID_y(thisNode);
  int lz = __hpvm__getNodeInstanceID_z(thisNode);
  int gx = __hpvm__getNodeInstanceID_x(parentNode);
  int gy = __hpvm__getNodeInstanceID_y(parentNode);
  int gz = __hpvm__getNodeInstanceID_z(parentNode);
  int dimx = __hpvm__getNumNodeInstances_x(thisNode);
  int dimy = __hpvm__getNumNodeInstances_y(thisNode);
  int dimz = __hpvm__getNumNodeInstances_z(thisNode);

  int i = gx * dimx + lx + 1;
  int j = gy * dimy + ly + 1;
  int k = gz * dimz + lz + 1;
  if (i < nx - 1 && j < ny - 1 && k < nz - 1) {
    Anext[Index3D(nx, ny, i, j, k)] =
        c1 * (A0[Index3D(nx, ny, i, j, k + 1)] + A0[Index3D(nx, ny, i, j, k - 1)] +
              A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)] +
              A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) -
        A0[Index3D(nx, ny, i, j, k)] * c0;
  }
}

void stencilLvl1(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                 size_t bytes_Anext, int nx, int ny, int nz, long blockDimX, long blockDimY,
                 long blockDimZ) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A0, Anext, 1, Anext);
  void *stencil_node =
      __hpvm__createNodeND(3, naive_kernel, blockDimX, blockDimY, blockDimZ);
  for (int p = 0; p < 9; ++p)
    __hpvm__bindIn(stencil_node, p, p, 0);
}

void stencilLvl2(float c0, float c1, float *A0, size_t bytes_A0, float *Anext,
                 size_t bytes_Anext, int nx, int ny, int nz, long blockDimX, long blockDimY,
                 long blockDimZ, long gridDimX, long gridDimY, long gridDimZ) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(2, A0, Anext, 1, Anext);
  void *stencil_node = __hpvm__createNodeND(3, stencilLvl1, gridDimX, gridDimY, gridDimZ);
  for (int p = 0; p < 12; ++p)
    __hpvm__bindIn(stencil_node, p, p, 0);
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

static int run(int nx, int ny, int nz, int iteration) {
  size_t size = (size_t)nx * ny * nz;
  size_t bytes = size * sizeof(float);
  float *h_A0 = malloc(bytes), *h_Anext = malloc(bytes);
  float *r_A0 = malloc(bytes), *r_Anext = malloc(bytes);
  for (size_t i = 0; i < size; ++i)
    h_A0[i] = h_Anext[i] = r_A0[i] = r_Anext[i] = (float)((i * 31) % 97) / 16.0f;
  float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;

  llvm_hpvm_track_mem(h_A0, bytes);
  llvm_hpvm_track_mem(h_Anext, bytes);
  long block_x = 8, block_y = 4, block_z = 2;
  RootIn *args = (RootIn *)malloc(sizeof(RootIn));
  for (int t = 0; t < iteration; t++) {
    args->c0 = c0;
    args->c1 = c1;
    args->A0 = h_A0;
    args->bytes_A0 = bytes;
    args->Anext = h_Anext;
    args->bytes_Anext = bytes;
    args->nx = nx;
    args->ny = ny;
    args->nz = nz;
    args->blockDimX = block_x;
    args->blockDimY = block_y;
    args->blockDimZ = block_z;
    args->gridDimX = (nx - 2 + block_x - 1) / block_x;
    args->gridDimY = (ny - 2 + block_y - 1) / block_y;
    args->gridDimZ = (nz - 2 + block_z - 1) / block_z;
    void *stencilDFG = __hpvm__launch(0, stencilLvl2, (void *)args);
    __hpvm__wait(stencilDFG);
    float *temp = h_A0;
    h_A0 = h_Anext;
    h_Anext = temp;
  }
  float *temp = h_A0;
  h_A0 = h_Anext;
  h_Anext = temp;
  llvm_hpvm_request_mem(h_Anext, bytes);
  for (int t = 0; t < iteration; t++) {
    reference(c0, c1, r_A0, r_Anext, nx, ny, nz);
    float *swap = r_A0;
    r_A0 = r_Anext;
    r_Anext = swap;
  }
  // After the loops, the last result is in h_Anext and in r_A0.
  long wrong = 0;
  double sum = 0;
  for (size_t i = 0; i < size; ++i) {
    wrong += h_Anext[i] != r_A0[i];
    sum += h_Anext[i];
  }
  printf("stencil: %dx%dx%d iterations=%d sum=%.4f wrong=%ld\n", nx, ny, nz, iteration, sum,
         wrong);
  llvm_hpvm_untrack_mem(h_A0);
  llvm_hpvm_untrack_mem(h_Anext);
  free(h_A0);
  free(h_Anext);
  free(r_A0);
  free(r_Anext);
  free(args);
  return wrong != 0;
}

int main(void) {
  __hpvm__init();
  int failed = run(34, 18, 10, 5) + run(19, 13, 7, 4) + run(3, 3, 3, 1);
  __hpvm__cleanup();
  return failed;
}
