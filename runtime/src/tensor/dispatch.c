/* The tensor kernels' dispatch: which ISA's inner loops this process runs (chosen once: the
 * AVX-512 ones where the CPU has them, the AVX2+FMA ones when it has both, else the baseline
 * ones; HPVM_TENSOR_ISA narrows the choice), how work is cut into tasks for the runtime's
 * thread pool and run on it, and the argument checks every entry point shares. */
#include "kernels.h"

#include "base/trace.h"
#include "hpvm/hpvm_rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const hpvm_tensor_kernels_t generic_kernels = {
    .micro = hpvm_tensor_micro_kernel_generic,
    .micro_mr = HPVM_TENSOR_MR,
    .micro_nr = HPVM_TENSOR_NR,
    .depthwise = hpvm_tensor_depthwise_generic,
    .direct = hpvm_tensor_conv_direct_generic,
    .direct_nr = HPVM_TENSOR_NR,
    .filters = hpvm_tensor_conv_filters_generic,
    .filters_pb = HPVM_TENSOR_PB,
    .taps_filters = hpvm_tensor_conv_taps_filters_generic,
    .taps_pb = HPVM_TENSOR_PB,
    .taps_direct = hpvm_tensor_conv_taps_direct_generic,
    .pack_half = hpvm_tensor_pack_half_generic,
    .narrow_half = hpvm_tensor_narrow_half_generic,
    .widen_half = hpvm_tensor_widen_half_generic,
    .pool_plane = hpvm_tensor_pool_plane_generic,
    .skinny = hpvm_tensor_skinny_generic,
    .activate = hpvm_tensor_activate_generic,
    .contract_fused = hpvm_tensor_contract_fused_generic,
    .contract_unfused = hpvm_tensor_contract_unfused_generic,
    .contract_fused_narrow = hpvm_tensor_contract_fused_generic,
    .contract_unfused_narrow = hpvm_tensor_contract_unfused_generic,
    .contract_mr = HPVM_TENSOR_MR,
    .contract_nr = HPVM_TENSOR_NR};

static hpvm_tensor_kernels_t select_kernels(void) {
  hpvm_tensor_kernels_t k = generic_kernels;
  const char *isa = getenv("HPVM_TENSOR_ISA");
  if (isa && *isa && strcmp(isa, "generic") && strcmp(isa, "avx2") && strcmp(isa, "avx512")) {
    hpvm_warning("HPVM_TENSOR_ISA=%s: expected generic, avx2 or avx512; using the CPU's best "
                 "kernels",
                 isa);
    isa = NULL;
  }
  if (isa && strcmp(isa, "generic") == 0)
    return k;
#ifdef HPVM_TENSOR_HAVE_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    k.micro = hpvm_tensor_micro_kernel_avx2;
    k.depthwise = hpvm_tensor_depthwise_avx2;
    k.direct = hpvm_tensor_conv_direct_avx2;
    k.filters = hpvm_tensor_conv_filters_avx2;
    k.taps_filters = hpvm_tensor_conv_taps_filters_avx2;
    k.taps_direct = hpvm_tensor_conv_taps_direct_avx2;
    k.pool_plane = hpvm_tensor_pool_plane_avx2;
    k.skinny = hpvm_tensor_skinny_avx2;
    k.activate = hpvm_tensor_activate_avx2;
    k.contract_fused = hpvm_tensor_contract_fused_avx2;
    k.contract_unfused = hpvm_tensor_contract_unfused_avx2;
    k.contract_fused_narrow = hpvm_tensor_contract_fused_avx2;
    k.contract_unfused_narrow = hpvm_tensor_contract_unfused_avx2;
    /* vcvtph2ps: every AVX2 CPU has F16C, but ask. */
    if (__builtin_cpu_supports("f16c")) {
      k.pack_half = hpvm_tensor_pack_half_avx2;
      k.narrow_half = hpvm_tensor_narrow_half_avx2;
      k.widen_half = hpvm_tensor_widen_half_avx2;
    }
#ifdef HPVM_TENSOR_HAVE_AVX512
    if (__builtin_cpu_supports("avx512f") && !(isa && strcmp(isa, "avx2") == 0)) {
      k.micro = hpvm_tensor_micro_kernel_avx512;
      k.micro_mr = HPVM_TENSOR_CONTRACT_MR_WIDE;
      k.micro_nr = HPVM_TENSOR_CONTRACT_NR_WIDE;
      k.direct = hpvm_tensor_conv_direct_avx512;
      k.direct_nr = HPVM_TENSOR_NR_WIDE;
      k.direct_wide = hpvm_tensor_conv_direct_wide_avx512;
      k.filters = hpvm_tensor_conv_filters_avx512;
      k.filters_pb = HPVM_TENSOR_PB_WIDE;
      k.filters_wide = hpvm_tensor_conv_filters_wide_avx512;
      k.filters_short = hpvm_tensor_conv_filters_short_avx512;
      k.depthwise = hpvm_tensor_depthwise_avx512;
      k.depthwise_lanes = hpvm_tensor_depthwise_lanes_avx512;
      k.taps_filters = hpvm_tensor_conv_taps_filters_avx512;
      k.taps_pb = HPVM_TENSOR_PB_WIDE;
      k.contract_fused = hpvm_tensor_contract_fused_avx512;
      k.contract_unfused = hpvm_tensor_contract_unfused_avx512;
      k.contract_mr = HPVM_TENSOR_CONTRACT_MR_WIDE;
      k.contract_nr = HPVM_TENSOR_CONTRACT_NR_WIDE;
      k.activate = hpvm_tensor_activate_avx512;
      k.scatter_tile = hpvm_tensor_scatter_tile_avx512;
      k.pool_plane = hpvm_tensor_pool_plane_avx512;
    }
#endif
  }
#endif
  return k;
}

static hpvm_tensor_kernels_t chosen_kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static int generic_only;

static void choose_kernels(void) { chosen_kernels = select_kernels(); }

const hpvm_tensor_kernels_t *hpvm_tensor_kernels(void) {
  if (generic_only)
    return &generic_kernels;
  pthread_once(&kernels_once, choose_kernels);
  return &chosen_kernels;
}

void hpvm_tensor_use_generic_kernels(int on) { generic_only = on; }

#define ceil_div hpvm_tensor_ceil_div

void hpvm_tensor_task_shape(int64_t problems, int64_t m, int64_t n, int64_t mr, int64_t nr,
                            int64_t *rows, int64_t *cols) {
  int64_t threads = hpvm_rt_thread_count();
  while (*cols > nr && problems * ceil_div(m, *rows) * ceil_div(n, *cols) < 4 * threads)
    *cols = ceil_div(*cols / nr, 2) * nr;
  while (*rows > mr && problems * ceil_div(m, *rows) * ceil_div(n, *cols) < 4 * threads)
    *rows -= mr;
}

/* body over the whole grid on the calling thread. */
static void run_here(uint32_t rank, const int64_t extents[2], hpvm_rt_parallel_for_fn_t body,
                     void *context) {
  hpvm_rt_instance_range_t all = {{0, 0, 0}, {extents[0], rank > 1 ? extents[1] : 1, 1},
                                  {extents[0], rank > 1 ? extents[1] : 1, 1}, rank, 0};
  body(context, &all);
}

void hpvm_tensor_run_grid(uint32_t rank, const int64_t extents[2],
                          hpvm_rt_parallel_for_fn_t body, void *context) {
  hpvm_status_t status = hpvm_rt_parallel_for(rank, extents, body, context);
  if (status) {
    /* No pool (threads could not start): the caller runs everything. */
    hpvm_status_free(status);
    run_here(rank, extents, body, context);
  }
}

void hpvm_tensor_run_sized(uint32_t rank, const int64_t extents[2],
                           hpvm_rt_parallel_for_fn_t body, void *context, double work) {
  if (work >= HPVM_TENSOR_SERIAL_WORK)
    hpvm_tensor_run_grid(rank, extents, body, context);
  else if (extents[0] > 0 && (rank < 2 || extents[1] > 0))
    run_here(rank, extents, body, context);
}

int hpvm_tensor_sizes_valid(const char *what, int count, const int64_t *values) {
  for (int i = 0; i < count; ++i)
    if (values[i] < 0) {
      hpvm_warning("%s: negative size %lld; nothing computed", what, (long long)values[i]);
      return 0;
    }
  return 1;
}

int hpvm_tensor_activation_valid(const char *what, int64_t activation) {
  if (activation < HPVM_RT_TENSOR_IDENTITY || activation > HPVM_RT_TENSOR_HARDSWISH) {
    hpvm_warning("%s: unknown activation %lld (expected 0: identity, 1: relu, 2: clipped "
                 "relu, 3: sigmoid, 4: silu, 5: hardswish); nothing computed", what,
                 (long long)activation);
    return 0;
  }
  return 1;
}
