// lbm_native.cc - the release's parboil lbm (src/hpvm/main.cpp, unchanged) run natively.
//
// Built with -I <release>/parboil/benchmarks/lbm/src/hpvm; the release's main runs as it is
// (lbm.cpp is compiled as it is). Graph (release's internal nodes): lbmLvl3 (one instance) ->
// lbmLvl2 (one instance) -> lbmLvl1, a dim_X2 x dim_Y2 grid -> performStreamCollide_kernel, a
// dim_X1 x 1 grid; every binding passes argument i to port i (the leaf gets srcG, bytes_srcG,
// dstG, bytes_dstG). The leaf reads its own x id and its parent's x and y ids.
#include "main.cpp"

#include "hpvm_native.h"

#include <cstdio>
#include <cstdlib>

static void run_lbm(void *argsp, void *) {
  const RootIn *a = static_cast<const RootIn *>(argsp);
  for (size_t gy = 0; gy < a->dim_Y2; gy++)
    for (size_t gx = 0; gx < a->dim_X2; gx++) {
      hpvm_native_set(1, gx, gy, 0, a->dim_X2, a->dim_Y2, 1);
      for (size_t lx = 0; lx < a->dim_X1; lx++) {
        hpvm_native_set(0, lx, 0, 0, a->dim_X1, 1, 1);
        performStreamCollide_kernel(a->srcG, a->bytes_srcG, a->dstG, a->bytes_dstG);
      }
    }
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "lbm", reinterpret_cast<const void *>(&lbmLvl3), 0, run_lbm, 0};
