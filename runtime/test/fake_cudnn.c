/* fake_cudnn.c - a stand-in libcudnn over host memory (the fake libcuda's device pointers are
 * host addresses): the entry points the runtime loads, with real arithmetic (naive
 * convolution, broadcast add, activations), call counters, and failures on request
 * (FAKE_CUDNN_FAIL=<entry point>: it returns CUDNN_STATUS_NOT_SUPPORTED). Built a second time
 * with FAKE_CUDNN_INCOMPLETE, without cudnnAddTensor (a library lacking a required symbol). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The runtime's own declarations, so that calls through its table match these definitions. */
#include "device/cuda/cuda_libraries.h"

#define EXPORT __attribute__((visibility("default")))

enum {
  SUCCESS = 0,
  NOT_INITIALIZED = 1,
  BAD_PARAM = 3,
  EXECUTION_FAILED = 8,
  NOT_SUPPORTED = 9,
  TENSOR_OP_MATH = 1,
};

static _Atomic long live_objects; /* handles and descriptors */
static _Atomic long handles_created;
static _Atomic long convolutions, additions, activations;
static _Atomic int last_algorithm = -1;

EXPORT long fake_cudnn_live_objects(void) { return atomic_load(&live_objects); }
EXPORT long fake_cudnn_handles_created(void) { return atomic_load(&handles_created); }
EXPORT long fake_cudnn_convolutions(void) { return atomic_load(&convolutions); }
EXPORT long fake_cudnn_additions(void) { return atomic_load(&additions); }
EXPORT long fake_cudnn_activations(void) { return atomic_load(&activations); }
EXPORT int fake_cudnn_last_algorithm(void) { return atomic_load(&last_algorithm); }

/* Whether the test asked `name` to fail. */
static int failing(const char *name) {
  const char *text = getenv("FAKE_CUDNN_FAIL");
  return text && strcmp(text, name) == 0;
}
#define MAYBE_FAIL(name)                                                                         \
  do {                                                                                           \
    if (failing(name))                                                                           \
      return NOT_SUPPORTED;                                                                      \
  } while (0)

/* Work needs the device's context current: asked of the fake libcuda (HPVM_CUDA_LIBRARY). */
static int context_current(void) {
  const char *path = getenv("HPVM_CUDA_LIBRARY");
  void *library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!library)
    return 1;
  int (*depth)(void);
  *(void **)&depth = dlsym(library, "fake_cuda_context_depth");
  int current = !depth || depth() > 0;
  dlclose(library);
  return current;
}

struct cudnnContext {
  int magic;
  CUstream stream;
};
struct cudnnTensorStruct {
  int n, c, h, w;
};
struct cudnnFilterStruct {
  int k, c, h, w;
};
struct cudnnConvolutionStruct {
  int pad_h, pad_w, u, v, dilation_h, dilation_w, mode, groups, math;
};
struct cudnnActivationStruct {
  int mode;
  double coef;
};

static void *make(size_t size) {
  atomic_fetch_add(&live_objects, 1);
  return calloc(1, size);
}
static cudnnStatus_t drop(void *object) {
  if (!object)
    return BAD_PARAM;
  atomic_fetch_sub(&live_objects, 1);
  free(object);
  return SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  MAYBE_FAIL("cudnnCreate");
  if (!context_current())
    return NOT_INITIALIZED;
  *handle = make(sizeof(**handle));
  (*handle)->magic = 7;
  atomic_fetch_add(&handles_created, 1);
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  return handle && handle->magic == 7 ? drop(handle) : BAD_PARAM;
}
EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, CUstream stream) {
  handle->stream = stream;
  return SUCCESS;
}
EXPORT const char *cudnnGetErrorString(cudnnStatus_t status) {
  return status == SUCCESS ? "CUDNN_STATUS_SUCCESS"
         : status == NOT_SUPPORTED ? "CUDNN_STATUS_NOT_SUPPORTED"
                                   : "CUDNN_STATUS_BAD_PARAM";
}

EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *desc) {
  *desc = make(sizeof(**desc));
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t desc, int format,
                                                int type, int n, int c, int h, int w) {
  if (format != 0 || type != 0 || n < 1 || c < 1 || h < 1 || w < 1)
    return BAD_PARAM;
  desc->n = n, desc->c = c, desc->h = h, desc->w = w;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t desc) {
  return drop(desc);
}
EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *desc) {
  *desc = make(sizeof(**desc));
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t desc, int type,
                                                int format, int k, int c, int h, int w) {
  if (format != 0 || type != 0 || k < 1 || c < 1 || h < 1 || w < 1)
    return BAD_PARAM;
  desc->k = k, desc->c = c, desc->h = h, desc->w = w;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t desc) {
  return drop(desc);
}
EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *desc) {
  *desc = make(sizeof(**desc));
  (*desc)->groups = 1;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t desc, int pad_h,
                                                     int pad_w, int u, int v, int dilation_h,
                                                     int dilation_w, int mode, int type) {
  if (pad_h < 0 || pad_w < 0 || u < 1 || v < 1 || dilation_h < 1 || dilation_w < 1 ||
      (mode != 0 && mode != 1) || type != 0)
    return BAD_PARAM;
  desc->pad_h = pad_h, desc->pad_w = pad_w, desc->u = u, desc->v = v;
  desc->dilation_h = dilation_h, desc->dilation_w = dilation_w, desc->mode = mode;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int groups) {
  if (groups < 1)
    return BAD_PARAM;
  desc->groups = groups;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t desc, int math) {
  desc->math = math;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t desc) {
  return drop(desc);
}

/* Two candidates: a tensor-op algorithm first (which the runtime must pass over: TF32), then
 * IMPLICIT_PRECOMP_GEMM (1), which wants a workspace. */
EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested, int *returned,
    hpvm_cudnn_fwd_algo_perf_t *perf) {
  (void)handle, (void)x, (void)w, (void)conv, (void)y;
  MAYBE_FAIL("cudnnGetConvolutionForwardAlgorithm_v7");
  if (requested < 2)
    return BAD_PARAM;
  memset(perf, 0, 2 * sizeof(*perf));
  perf[0].algo = 6, perf[0].math_type = TENSOR_OP_MATH;
  perf[1].algo = 1, perf[1].memory = 1024;
  *returned = 2;
  return SUCCESS;
}

static size_t workspace_bytes(int algo) { return algo == 1 ? 1024 : 0; }

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo, size_t *bytes) {
  (void)handle, (void)x, (void)w, (void)conv, (void)y;
  MAYBE_FAIL("cudnnGetConvolutionForwardWorkspaceSize");
  *bytes = workspace_bytes(algo);
  return SUCCESS;
}

/* Launched work must go to the per-thread stream of a current context. */
static int can_launch(cudnnHandle_t handle) {
  return handle && handle->magic == 7 && (uintptr_t)handle->stream == 0x2 && context_current();
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                             cudnnTensorDescriptor_t xd, const void *x,
                                             cudnnFilterDescriptor_t wd, const void *w,
                                             cudnnConvolutionDescriptor_t cd, int algo,
                                             void *workspace, size_t workspace_size,
                                             const void *beta, cudnnTensorDescriptor_t yd,
                                             void *y) {
  MAYBE_FAIL("cudnnConvolutionForward");
  if (!can_launch(handle))
    return EXECUTION_FAILED;
  int g = cd->groups, cg = xd->c / g, fg = wd->k / g;
  int oh = (xd->h + 2 * cd->pad_h - ((wd->h - 1) * cd->dilation_h + 1)) / cd->u + 1;
  int ow = (xd->w + 2 * cd->pad_w - ((wd->w - 1) * cd->dilation_w + 1)) / cd->v + 1;
  if (xd->c % g || wd->k % g || wd->c != cg || yd->n != xd->n || yd->c != wd->k || yd->h != oh ||
      yd->w != ow || workspace_size < workspace_bytes(algo) || (workspace_bytes(algo) && !workspace))
    return BAD_PARAM;
  atomic_store(&last_algorithm, algo);
  float a = *(const float *)alpha, b = *(const float *)beta;
  const float *in = x, *filter = w;
  float *out = y;
  for (int n = 0; n < yd->n; ++n)
    for (int f = 0; f < yd->c; ++f)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double sum = 0;
          for (int c = 0; c < cg; ++c)
            for (int r = 0; r < wd->h; ++r)
              for (int s = 0; s < wd->w; ++s) {
                int yy = i * cd->u - cd->pad_h + r * cd->dilation_h;
                int xx = j * cd->v - cd->pad_w + s * cd->dilation_w;
                if (yy < 0 || yy >= xd->h || xx < 0 || xx >= xd->w)
                  continue;
                /* CUDNN_CONVOLUTION (0) flips the filter; CROSS_CORRELATION (1) does not. */
                int rr = cd->mode == 0 ? wd->h - 1 - r : r, ss = cd->mode == 0 ? wd->w - 1 - s : s;
                int channel = (f / fg) * cg + c;
                sum += (double)in[((n * xd->c + channel) * xd->h + yy) * xd->w + xx] *
                       filter[((f * wd->c + c) * wd->h + rr) * wd->w + ss];
              }
          float *o = &out[((n * yd->c + f) * oh + i) * ow + j];
          *o = a * (float)sum + (b != 0.0f ? b * *o : 0.0f);
        }
  atomic_fetch_add(&convolutions, 1);
  return SUCCESS;
}

#ifndef FAKE_CUDNN_INCOMPLETE
/* C = alpha * A + beta * C, A broadcast along its size-1 dimensions. */
EXPORT cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha,
                                    cudnnTensorDescriptor_t ad, const void *a_data,
                                    const void *beta, cudnnTensorDescriptor_t cd, void *c_data) {
  MAYBE_FAIL("cudnnAddTensor");
  if (!can_launch(handle))
    return EXECUTION_FAILED;
  const int adims[4] = {ad->n, ad->c, ad->h, ad->w}, cdims[4] = {cd->n, cd->c, cd->h, cd->w};
  for (int d = 0; d < 4; ++d)
    if (adims[d] != 1 && adims[d] != cdims[d])
      return BAD_PARAM;
  float alpha_value = *(const float *)alpha, beta_value = *(const float *)beta;
  const float *a = a_data;
  float *c = c_data;
  for (int n = 0; n < cd->n; ++n)
    for (int k = 0; k < cd->c; ++k)
      for (int i = 0; i < cd->h; ++i)
        for (int j = 0; j < cd->w; ++j) {
          int an = ad->n == 1 ? 0 : n, ak = ad->c == 1 ? 0 : k, ai = ad->h == 1 ? 0 : i,
              aj = ad->w == 1 ? 0 : j;
          float *element = &c[((n * cd->c + k) * cd->h + i) * cd->w + j];
          *element = alpha_value * a[((an * ad->c + ak) * ad->h + ai) * ad->w + aj] +
                     beta_value * *element;
        }
  atomic_fetch_add(&additions, 1);
  return SUCCESS;
}
#endif

EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *desc) {
  *desc = make(sizeof(**desc));
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t desc, int mode,
                                                  int nan, double coef) {
  if (mode < 0 || mode > 5 || (nan != 0 && nan != 1))
    return BAD_PARAM;
  desc->mode = mode, desc->coef = coef;
  return SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t desc) {
  return drop(desc);
}

/* y = alpha * act(x) + beta * y, in place allowed. */
EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t act,
                                            const void *alpha, cudnnTensorDescriptor_t xd,
                                            const void *x_data, const void *beta,
                                            cudnnTensorDescriptor_t yd, void *y_data) {
  MAYBE_FAIL("cudnnActivationForward");
  if (!can_launch(handle))
    return EXECUTION_FAILED;
  long count = (long)xd->n * xd->c * xd->h * xd->w;
  if (count != (long)yd->n * yd->c * yd->h * yd->w)
    return BAD_PARAM;
  float a = *(const float *)alpha, b = *(const float *)beta;
  const float *x = x_data;
  float *y = y_data;
  for (long i = 0; i < count; ++i) {
    float v = x[i], r;
    switch (act->mode) {
    case 0: r = 1.0f / (1.0f + expf(-v)); break;
    case 1: r = v > 0.0f ? v : 0.0f; break;
    case 2: r = tanhf(v); break;
    case 3: r = v > 0.0f ? (v < (float)act->coef ? v : (float)act->coef) : 0.0f; break;
    default: return BAD_PARAM;
    }
    y[i] = a * r + (b != 0.0f ? b * y[i] : 0.0f);
  }
  atomic_fetch_add(&activations, 1);
  return SUCCESS;
}
