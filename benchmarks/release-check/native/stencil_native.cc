// stencil_native.cc - the release's parboil stencil (src/hpvm/stencil.cpp, unchanged) run
// natively.
//
// Built with -I <release>/parboil/benchmarks/stencil/src/hpvm; the release's main runs as it is.
// Graph (release's internal nodes): stencilLvl3 (one instance) -> stencilLvl2 (one instance)
// -> stencilLvl1, a dim_X2 x dim_Y2 x dim_Z2 grid -> naive_kernel, a dim_X1 x dim_Y1 x dim_Z1
// grid; every binding passes argument i to port i, so the leaf gets the root's first 9
// arguments. The leaf reads its own ids and its parent's (the Lvl1 instance).
#include "stencil.cpp"

#include "hpvm_native.h"

#include <cstdio>
#include <cstdlib>

static void run_stencil(void *argsp, void *) {
  const RootIn *a = static_cast<const RootIn *>(argsp);
  for (size_t gz = 0; gz < a->dim_Z2; gz++)
    for (size_t gy = 0; gy < a->dim_Y2; gy++)
      for (size_t gx = 0; gx < a->dim_X2; gx++) {
        hpvm_native_set(1, gx, gy, gz, a->dim_X2, a->dim_Y2, a->dim_Z2);
        for (size_t lz = 0; lz < a->dim_Z1; lz++)
          for (size_t ly = 0; ly < a->dim_Y1; ly++)
            for (size_t lx = 0; lx < a->dim_X1; lx++) {
              hpvm_native_set(0, lx, ly, lz, a->dim_X1, a->dim_Y1, a->dim_Z1);
              naive_kernel(a->c0, a->c1, a->A0, a->bytes_A0, a->Anext, a->bytes_Anext, a->nx,
                           a->ny, a->nz);
            }
      }
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "stencil", reinterpret_cast<const void *>(&stencilLvl3), 0, run_stencil, 0};
