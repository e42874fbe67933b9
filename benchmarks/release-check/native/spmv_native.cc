// spmv_native.cc - the release's parboil spmv (src/hpvm/main.cpp, unchanged) run natively.
//
// Built with -I <release>/parboil/benchmarks/spmv/src/hpvm and -I .../common_src/convert-dataset;
// the release's main runs as it is. Graph (release's internal nodes): spmvLvl3 (one instance)
// -> spmvLvl2, dim_X2 instances -> spmvLvl1, dim_X2 instances in each -> spmv_jds, dim_X1
// instances in each. Every binding passes argument i to port i (the leaf gets the root's first
// 15 arguments). Lvl2 replicates the whole computation dim_X2 times (its instances cannot
// differ: each writes the same values), and so does this driver. The leaf reads its own id and
// its parent's (the Lvl1 instance); level 2 of the frame is the Lvl2 instance.
#include "main.cpp"

#include "hpvm_native.h"

#include <cstdio>
#include <cstdlib>

static void run_spmv(void *argsp, void *) {
  const RootIn *a = static_cast<const RootIn *>(argsp);
  for (size_t g2 = 0; g2 < a->dim_X2; g2++) {
    hpvm_native_set(2, g2, 0, 0, a->dim_X2, 1, 1);
    for (size_t gx = 0; gx < a->dim_X2; gx++) {
      hpvm_native_set(1, gx, 0, 0, a->dim_X2, 1, 1);
      for (size_t lx = 0; lx < a->dim_X1; lx++) {
        hpvm_native_set(0, lx, 0, 0, a->dim_X1, 1, 1);
        spmv_jds(a->dst_vector, a->bytes_dst_vector, a->d_data, a->bytes_d_data, a->d_index,
                 a->bytes_d_index, a->d_perm, a->bytes_d_perm, a->x_vec, a->bytes_x_vec, a->dim,
                 a->jds_ptr_int, a->bytes_jds_ptr_int, a->sh_zcnt_int, a->bytes_sh_zcnt_int);
      }
    }
  }
}

/* The graph __hpvm__launch runs (hpvm_native.c). */
const hpvm_native_program hpvm_native_root = {
    "spmv", reinterpret_cast<const void *>(&spmvLvl3), 0, run_spmv, 0};
