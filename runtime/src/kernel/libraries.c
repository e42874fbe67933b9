/* libraries.c - a kernel site's library call (cuDNN, cuBLAS): whether its parameters fit the
 * call, the refusal kept per site, the buffers it is given. */
#include "kernel/libraries.h"

#include "base/trace.h"
#include "device/cuda/cuda_device.h"

void hpvm_kernel_library_refuse(hpvm_kernel_site_state_t *state, hpvm_status_t reason) {
  hpvm_status_t expected = NULL;
  if (!atomic_compare_exchange_strong(&state->library_failure, &expected, reason)) {
    hpvm_status_free(reason);
    return;
  }
  const hpvm_rt_kernel_site_t *site = state->site;
  hpvm_warning("node '%s': its %s call cannot run, so its kernel runs instead (warned once per "
               "node): %s: %s",
               hpvm_kernel_node_name(site), hpvm_cuda_library_name(site->library),
               hpvm_status_code_name(hpvm_status_code(reason)), hpvm_status_message(reason));
}

static int64_t product(const int64_t *values, int count) {
  int64_t result = 1;
  for (int i = 0; i < count; ++i)
    result =
        values[i] < 0 || (values[i] && result > INT64_MAX / values[i]) ? -1 : result * values[i];
  return result;
}

/* Why the memref whose parameters start at `first` cannot be the call's `what` (`elements` f32
 * values at offset 0, written when `written`), or NULL. */
static hpvm_status_t check_library_memref(const hpvm_rt_kernel_param_t *params, uint32_t count,
                                          int32_t first, int64_t elements, const char *what,
                                          bool written) {
  if (first < 0 || (uint64_t)first + 3 > count || elements < 0 ||
      (uint64_t)elements > UINT64_MAX / 4)
    return HPVM_STATUS(INVALID_ARGUMENT, "the %s is not among the %u parameters", what, count);
  const hpvm_rt_kernel_param_t *data = &params[first + 1], *offset = &params[first + 2];
  if (data->kind != HPVM_RT_PARAM_BUFFER || !data->host ||
      (data->size && data->size < (uint64_t)elements * 4) ||
      (written && data->access == HPVM_RT_ACCESS_IN))
    return HPVM_STATUS(INVALID_ARGUMENT, "parameter %d is not the %s (a buffer of %lld floats%s)",
                       first + 1, what, (long long)elements, written ? " it writes" : "");
  if (offset->kind != HPVM_RT_PARAM_VALUE || offset->size != sizeof(int64_t) ||
      *(const int64_t *)offset->value != 0)
    return HPVM_STATUS(INVALID_ARGUMENT, "parameter %d is not the %s's offset 0", first + 2, what);
  return NULL;
}

/* Why the parameters do not fit the site's library call, or NULL. */
static hpvm_status_t check_library_params(const hpvm_rt_tensor_library_call_t *call,
                                          const hpvm_rt_kernel_param_t *params, uint32_t count) {
  const int64_t *s = call->sizes;
  bool conv = call->op == HPVM_RT_TENSOR_LIBRARY_CONV2D;
  int64_t groups = call->groups > 0 ? call->groups : 1;
  int64_t x = conv ? product(s, 4) : product((const int64_t[]){s[0], s[1], s[3]}, 3);
  int64_t w = conv ? product((const int64_t[]){call->filter[0], s[1] / groups, call->filter[1],
                                               call->filter[2]},
                             4)
                   : product((const int64_t[]){s[0], s[3], s[2]}, 3);
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->x_param, x, "input", false));
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->w_param, w, "weights", false));
  if (call->bias_param >= 0)
    HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->bias_param,
                                              product(call->bias, 4), "bias", false));
  HPVM_RETURN_IF_ERROR(check_library_memref(params, count, call->output_param,
                                            product(call->output, 4), "output", true));
  if (call->scalars_param >= 0) {
    const hpvm_rt_kernel_param_t *scalars =
        (uint32_t)call->scalars_param < count ? &params[call->scalars_param] : NULL;
    if (!scalars || scalars->kind != HPVM_RT_PARAM_BUFFER || !scalars->host || !call->scalars ||
        scalars->size < call->scalars_size)
      return HPVM_STATUS(INVALID_ARGUMENT,
                         "parameter %d is not the struct of the %llu bytes of scalar outputs",
                         call->scalars_param, (unsigned long long)call->scalars_size);
  }
  return NULL;
}

bool hpvm_kernel_library_usable(hpvm_kernel_cache_t *cache, hpvm_kernel_site_state_t *state,
                                hpvm_device_t *device, const hpvm_rt_kernel_param_t *params,
                                uint32_t count) {
  const hpvm_rt_kernel_site_t *site = state->site;
  if (!site->library || !hpvm_cuda_device_is(device) || atomic_load(&state->library_failure))
    return false;
  if (!hpvm_cuda_libraries_available(cache->libraries, site->library))
    return false;
  hpvm_status_t status = check_library_params(site->library, params, count);
  if (status) {
    hpvm_kernel_library_refuse(state, status);
    return false;
  }
  return true;
}

void hpvm_kernel_library_buffers(const hpvm_kernel_buffers_t *run,
                                 const hpvm_rt_tensor_library_call_t *call,
                                 hpvm_cuda_library_buffers_t *out) {
  out->x = run->slots[call->x_param + 1].value;
  out->w = run->slots[call->w_param + 1].value;
  out->bias = call->bias_param >= 0 ? run->slots[call->bias_param + 1].value : 0;
  out->output = run->slots[call->output_param + 1].value;
}
