// Values per instance between replicated siblings: a 2-D leaf `measure`
// gives each of its instances' float, int, short and double results to the
// same instance of the 2-D leaf `combine` over one-to-one edges (values, not
// buffers), which writes them out. The grid (37 x 29) is no multiple of a
// work-group, so partial groups and the linear instance order (x fastest)
// both show.
#include <hpvm/hpvm.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct __attribute__((__packed__)) {
  float scaled;
  int parity;
  short row;
  double square;
} MeasureOut;

typedef struct __attribute__((__packed__)) {
  int *x;
  size_t bytes_x;
  double *out;
  size_t bytes_out;
  long nx;
  long ny;
} RootIn;

MeasureOut measure(int *x, size_t bytes_x, long nx) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 0);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  long j = __hpvm__getNodeInstanceID_y(self);
  int v = x[j * nx + i];
  __hpvm__return(4, (float)v * 0.5f, v & 1, (short)j, (double)v * (double)v);
}

void combine(float scaled, int parity, short row, double square, double *out,
             size_t bytes_out, long nx) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(0, 1, out);
  void *self = __hpvm__getNode();
  long i = __hpvm__getNodeInstanceID_x(self);
  long j = __hpvm__getNodeInstanceID_y(self);
  out[j * nx + i] = square + scaled * (parity ? -1.0 : 1.0) + row * 1000.0;
}

void instance_values_root(int *x, size_t bytes_x, double *out, size_t bytes_out,
                          long nx, long ny) {
  __hpvm__hint(CPU_TARGET);
  __hpvm__attributes(1, x, 1, out);
  void *m = __hpvm__createNodeND(2, measure, nx, ny);
  void *c = __hpvm__createNodeND(2, combine, nx, ny);
  __hpvm__bindIn(m, 0, 0, 0);
  __hpvm__bindIn(m, 1, 1, 0);
  __hpvm__bindIn(m, 4, 2, 0);
  for (int port = 0; port < 4; ++port)
    __hpvm__edge(m, c, HPVM_ONE_TO_ONE, port, port, 0);
  __hpvm__bindIn(c, 2, 4, 0);
  __hpvm__bindIn(c, 3, 5, 0);
  __hpvm__bindIn(c, 4, 6, 0);
}

int main(void) {
  long nx = 37, ny = 29, n = nx * ny;
  int *x = malloc(n * sizeof(int));
  double *out = malloc(n * sizeof(double));
  for (long k = 0; k < n; ++k) {
    x[k] = (int)((k * 7919) % 1013) - 400;
    out[k] = -1.0;
  }
  __hpvm__init();
  llvm_hpvm_track_mem(x, n * sizeof(int));
  llvm_hpvm_track_mem(out, n * sizeof(double));
  RootIn *args = malloc(sizeof(RootIn));
  *args = (RootIn){x, n * sizeof(int), out, n * sizeof(double), nx, ny};
  void *dfg = __hpvm__launch(0, instance_values_root, args);
  __hpvm__wait(dfg);
  llvm_hpvm_request_mem(out, n * sizeof(double));
  long wrong = 0;
  double sum = 0;
  for (long j = 0; j < ny; ++j)
    for (long i = 0; i < nx; ++i) {
      int v = x[j * nx + i];
      double expected = (double)v * v + (float)v * 0.5f * ((v & 1) ? -1.0 : 1.0) + j * 1000.0;
      wrong += out[j * nx + i] != expected;
      sum += out[j * nx + i];
    }
  llvm_hpvm_untrack_mem(x);
  llvm_hpvm_untrack_mem(out);
  __hpvm__cleanup();
  printf("instance_values: n=%ld sum=%.1f wrong=%ld\n", n, sum, wrong);
  free(x);
  free(out);
  free(args);
  return wrong != 0;
}
