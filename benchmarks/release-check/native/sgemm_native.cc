// sgemm_native.cc - the release's parboil sgemm (src/hpvm/main.cc, unchanged) run natively.
//
// Built with -I <release>/parboil/benchmarks/sgemm/src/hpvm; the release's main runs as it is.
// Graph (release's internal nodes): basicSgemmLvl3 (one instance) -> basicSgemmLvl2 (one
// instance) -> basicSgemmLvl1, a dim_X2 x dim_Y2 grid -> mysgemmNT, a dim_X1 x dim_Y1 grid;
// every binding passes root argument i to port i, so the leaf gets the root's first 12
// arguments. The leaf reads its own ids and its parent's (the Lvl1 instance).
#include "main.cc"

#include "hpvm_native.h"

#include <cstdio>
#include <cstdlib>

static void run_sgemm(void *argsp, void *) {
  const RootIn *a = static_cast<const RootIn *>(argsp);
  for (size_t gy = 0; gy < a->dim_Y2; gy++)
    for (size_t gx = 0; gx < a->dim_X2; gx++) {
      hpvm_native_set(1, gx, gy, 0, a->dim_X2, a->dim_Y2, 1);
      for (size_t ly = 0; ly < a->dim_Y1; ly++)
        for (size_t lx = 0; lx < a->dim_X1; lx++) {
          hpvm_native_set(0, lx, ly, 0, a->dim_X1, a->dim_Y1, 1);
          mysgemmNT(a->A, a->bytes_A, a->lda, a->B, a->bytes_B, a->ldb, a->C, a->bytes_C,
                    a->ldc, a->k, a->alpha, a->beta);
        }
    }
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "sgemm", reinterpret_cast<const void *>(&basicSgemmLvl3), 0, run_sgemm, 0};
