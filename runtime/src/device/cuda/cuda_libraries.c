/* cuda_libraries.c - cuDNN and cuBLAS through dlopen: the library calls of tensor nodes
 * (hpvm_rt_tensor_library_call_t) on the runtime's CUDA device. */
#define _GNU_SOURCE
#include "device/cuda/cuda_libraries.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/trace.h"
#include "device/cuda/cuda_device.h"

/* The handles of one device and thread. */
typedef struct handles_t {
  struct handles_t *next;
  hpvm_device_t *device;
  pthread_t thread;
  cudnnHandle_t cudnn;
  cublasHandle_t cublas;
} handles_t;

/* One library's loading: tried once per runtime, its failure kept. */
typedef struct load_state_t {
  bool tried;
  hpvm_status_t failure;
} load_state_t;

struct hpvm_cuda_libraries_t {
  hpvm_allocator_t allocator;
  pthread_mutex_t mutex; /* guards everything below */
  bool disabled;         /* HPVM_TENSOR_LIBRARIES=0 (read on first use) */
  bool read_env;
  load_state_t dnn_state, blas_state;
  hpvm_cudnn_symbols_t dnn;
  hpvm_cublas_symbols_t blas;
  handles_t *handles;
};

hpvm_status_t hpvm_cuda_libraries_create(hpvm_allocator_t allocator,
                                         hpvm_cuda_libraries_t **out_libraries) {
  hpvm_cuda_libraries_t *libraries;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*libraries), (void **)&libraries));
  libraries->allocator = allocator;
  pthread_mutex_init(&libraries->mutex, NULL);
  *out_libraries = libraries;
  return NULL;
}

void hpvm_cuda_libraries_destroy(hpvm_cuda_libraries_t *libraries) {
  if (!libraries)
    return;
  for (handles_t *entry = libraries->handles; entry;) {
    handles_t *next = entry->next;
    hpvm_status_t status = hpvm_cuda_device_enter(entry->device);
    if (!status) {
      if (entry->cudnn)
        libraries->dnn.cudnnDestroy(entry->cudnn);
      if (entry->cublas)
        libraries->blas.cublasDestroy(entry->cublas);
      hpvm_cuda_device_leave(entry->device);
    }
    hpvm_status_free(status);
    hpvm_allocator_free(libraries->allocator, entry);
    entry = next;
  }
  hpvm_status_free(libraries->dnn_state.failure);
  hpvm_status_free(libraries->blas_state.failure);
  pthread_mutex_destroy(&libraries->mutex);
  hpvm_allocator_free(libraries->allocator, libraries);
}

/*===--- loading ------------------------------------------------------------===*/

static hpvm_status_t load_cudnn(hpvm_cudnn_symbols_t *dnn) {
  static const char *const names[] = {"libcudnn.so.9", "libcudnn.so.8", NULL};
  const char *path;
  HPVM_RETURN_IF_ERROR(
      hpvm_device_open_driver("HPVM_CUDNN_LIBRARY", names, "cuDNN", &dnn->library, &path));
#define HPVM_LIBRARY_LOAD(field, symbol, required, result, params)                              \
  *(void **)&dnn->field = dlsym(dnn->library, symbol);                                          \
  if ((required) && !dnn->field)                                                                \
    return HPVM_STATUS(FAILED_PRECONDITION, "cuDNN library %s lacks %s", path, symbol);
  HPVM_CUDNN_SYMBOLS(HPVM_LIBRARY_LOAD)
#undef HPVM_LIBRARY_LOAD
  return NULL;
}

static hpvm_status_t load_cublas(hpvm_cublas_symbols_t *blas) {
  static const char *const names[] = {"libcublas.so.12", "libcublas.so.11", NULL};
  const char *path;
  HPVM_RETURN_IF_ERROR(
      hpvm_device_open_driver("HPVM_CUBLAS_LIBRARY", names, "cuBLAS", &blas->library, &path));
#define HPVM_LIBRARY_LOAD(field, symbol, required, result, params)                              \
  *(void **)&blas->field = dlsym(blas->library, symbol);                                        \
  if ((required) && !blas->field)                                                               \
    return HPVM_STATUS(FAILED_PRECONDITION, "cuBLAS library %s lacks %s", path, symbol);
  HPVM_CUBLAS_SYMBOLS(HPVM_LIBRARY_LOAD)
#undef HPVM_LIBRARY_LOAD
  return NULL;
}

/* Loads one library on its first use (mutex held); whether it loaded. A library that loads but
 * lacks a symbol is warned about once (a broken installation); a missing one is the ordinary
 * case (its reason kept for debuggers, never printed). */
static bool ensure_loaded(load_state_t *state, hpvm_status_t (*load)(void *), void *symbols) {
  if (!state->tried) {
    state->tried = true;
    state->failure = load(symbols);
    if (state->failure && hpvm_status_code(state->failure) == HPVM_STATUS_FAILED_PRECONDITION)
      hpvm_warning("%s; tensor nodes run their generated kernels instead",
                   hpvm_status_message(state->failure));
  }
  return state->failure == NULL;
}

static hpvm_status_t load_cudnn_any(void *symbols) { return load_cudnn(symbols); }
static hpvm_status_t load_cublas_any(void *symbols) { return load_cublas(symbols); }

static bool needs_cudnn(const hpvm_rt_tensor_library_call_t *call) {
  return call->op == HPVM_RT_TENSOR_LIBRARY_CONV2D || call->bias_param >= 0 ||
         call->activation != HPVM_RT_TENSOR_LIBRARY_IDENTITY;
}

const char *hpvm_cuda_library_name(const hpvm_rt_tensor_library_call_t *call) {
  return call->op == HPVM_RT_TENSOR_LIBRARY_CONV2D ? "cudnn" : "cublas";
}

bool hpvm_cuda_libraries_available(hpvm_cuda_libraries_t *libraries,
                                    const hpvm_rt_tensor_library_call_t *call) {
  if (call->op != HPVM_RT_TENSOR_LIBRARY_CONV2D && call->op != HPVM_RT_TENSOR_LIBRARY_MATMUL)
    return false;
  pthread_mutex_lock(&libraries->mutex);
  if (!libraries->read_env) {
    libraries->read_env = true;
    const char *text = getenv("HPVM_TENSOR_LIBRARIES");
    libraries->disabled = text && strcmp(text, "0") == 0;
  }
  bool available = !libraries->disabled;
  if (available && call->op == HPVM_RT_TENSOR_LIBRARY_MATMUL)
    available = ensure_loaded(&libraries->blas_state, load_cublas_any, &libraries->blas);
  if (available && needs_cudnn(call))
    available = ensure_loaded(&libraries->dnn_state, load_cudnn_any, &libraries->dnn);
  pthread_mutex_unlock(&libraries->mutex);
  return available;
}

/*===--- handles ------------------------------------------------------------===*/

static hpvm_status_t dnn_status(const hpvm_cudnn_symbols_t *dnn, cudnnStatus_t result,
                                const char *what) {
  if (result == HPVM_CUDNN_STATUS_SUCCESS)
    return NULL;
  const char *text = dnn->cudnnGetErrorString ? dnn->cudnnGetErrorString(result) : NULL;
  return HPVM_STATUS(UNKNOWN, "%s failed: %s (%d)", what, text ? text : "cuDNN error", result);
}

static hpvm_status_t blas_status(cublasStatus_t result, const char *what) {
  if (result == HPVM_CUBLAS_STATUS_SUCCESS)
    return NULL;
  return HPVM_STATUS(UNKNOWN, "%s failed: cuBLAS status %d", what, result);
}

/* The calling thread's handles on `device`, created on first use (the device's context is
 * current), each bound to the thread's per-thread stream. */
static hpvm_status_t thread_handles(hpvm_cuda_libraries_t *libraries, hpvm_device_t *device,
                                    bool dnn, bool blas, handles_t **out_entry) {
  pthread_t self = pthread_self();
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&libraries->mutex);
  handles_t *entry = libraries->handles;
  while (entry && !(entry->device == device && pthread_equal(entry->thread, self)))
    entry = entry->next;
  if (!entry) {
    status = hpvm_allocator_calloc(libraries->allocator, sizeof(*entry), (void **)&entry);
    if (!status) {
      entry->device = device;
      entry->thread = self;
      entry->next = libraries->handles;
      libraries->handles = entry;
    }
  }
  if (!status && dnn && !entry->cudnn) {
    cudnnHandle_t handle = NULL;
    status = dnn_status(&libraries->dnn, libraries->dnn.cudnnCreate(&handle), "cudnnCreate");
    if (!status) {
      entry->cudnn = handle;
      status = dnn_status(&libraries->dnn,
                          libraries->dnn.cudnnSetStream(handle, HPVM_CU_STREAM_PER_THREAD),
                          "cudnnSetStream");
    }
  }
  if (!status && blas && !entry->cublas) {
    cublasHandle_t handle = NULL;
    status = blas_status(libraries->blas.cublasCreate(&handle), "cublasCreate_v2");
    if (!status) {
      entry->cublas = handle;
      status = blas_status(libraries->blas.cublasSetStream(handle, HPVM_CU_STREAM_PER_THREAD),
                           "cublasSetStream_v2");
    }
  }
  pthread_mutex_unlock(&libraries->mutex);
  *out_entry = entry;
  return status;
}

/*===--- the calls ----------------------------------------------------------===*/

static bool fits_int(const int64_t *values, int count) {
  for (int i = 0; i < count; ++i)
    if (values[i] < 0 || values[i] > INT_MAX)
      return false;
  return true;
}

static hpvm_status_t tensor_descriptor(const hpvm_cudnn_symbols_t *dnn, const int64_t dims[4],
                                       cudnnTensorDescriptor_t *out) {
  *out = NULL;
  if (!fits_int(dims, 4))
    return HPVM_STATUS(OUT_OF_RANGE, "tensor sizes beyond cuDNN's int");
  HPVM_RETURN_IF_ERROR(
      dnn_status(dnn, dnn->cudnnCreateTensorDescriptor(out), "cudnnCreateTensorDescriptor"));
  return dnn_status(dnn,
                    dnn->cudnnSetTensor4dDescriptor(*out, HPVM_CUDNN_TENSOR_NCHW,
                                                    HPVM_CUDNN_DATA_FLOAT, (int)dims[0],
                                                    (int)dims[1], (int)dims[2], (int)dims[3]),
                    "cudnnSetTensor4dDescriptor");
}

/* The descriptors of a convolution. */
typedef struct conv_t {
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
} conv_t;

static hpvm_status_t conv_describe(const hpvm_cudnn_symbols_t *dnn,
                                   const hpvm_rt_tensor_library_call_t *call, conv_t *c) {
  const int64_t *s = call->sizes;
  if (call->groups < 1 || s[1] % call->groups != 0 || !fits_int(call->filter, 3) ||
      !fits_int(call->padding, 2) || !fits_int(call->strides, 2) || call->groups > INT_MAX)
    return HPVM_STATUS(INVALID_ARGUMENT, "malformed convolution");
  HPVM_RETURN_IF_ERROR(tensor_descriptor(dnn, call->sizes, &c->x));
  HPVM_RETURN_IF_ERROR(tensor_descriptor(dnn, call->output, &c->y));
  HPVM_RETURN_IF_ERROR(
      dnn_status(dnn, dnn->cudnnCreateFilterDescriptor(&c->w), "cudnnCreateFilterDescriptor"));
  HPVM_RETURN_IF_ERROR(dnn_status(
      dnn,
      dnn->cudnnSetFilter4dDescriptor(c->w, HPVM_CUDNN_DATA_FLOAT, HPVM_CUDNN_TENSOR_NCHW,
                                      (int)call->filter[0], (int)(s[1] / call->groups),
                                      (int)call->filter[1], (int)call->filter[2]),
      "cudnnSetFilter4dDescriptor"));
  HPVM_RETURN_IF_ERROR(dnn_status(dnn, dnn->cudnnCreateConvolutionDescriptor(&c->conv),
                                  "cudnnCreateConvolutionDescriptor"));
  HPVM_RETURN_IF_ERROR(dnn_status(
      dnn,
      dnn->cudnnSetConvolution2dDescriptor(c->conv, (int)call->padding[0], (int)call->padding[1],
                                           (int)call->strides[0], (int)call->strides[1], 1, 1,
                                           HPVM_CUDNN_CROSS_CORRELATION, HPVM_CUDNN_DATA_FLOAT),
      "cudnnSetConvolution2dDescriptor"));
  if (call->groups > 1)
    HPVM_RETURN_IF_ERROR(dnn_status(dnn,
                                    dnn->cudnnSetConvolutionGroupCount(c->conv, (int)call->groups),
                                    "cudnnSetConvolutionGroupCount"));
  /* f32 results as the generated kernel and the CPU compute them: no TF32 tensor cores. */
  if (dnn->cudnnSetConvolutionMathType)
    HPVM_RETURN_IF_ERROR(dnn_status(
        dnn, dnn->cudnnSetConvolutionMathType(c->conv, HPVM_CUDNN_FMA_MATH),
        "cudnnSetConvolutionMathType"));
  return NULL;
}

static void conv_free(const hpvm_cudnn_symbols_t *dnn, conv_t *c) {
  if (c->x)
    dnn->cudnnDestroyTensorDescriptor(c->x);
  if (c->y)
    dnn->cudnnDestroyTensorDescriptor(c->y);
  if (c->w)
    dnn->cudnnDestroyFilterDescriptor(c->w);
  if (c->conv)
    dnn->cudnnDestroyConvolutionDescriptor(c->conv);
}

/* The algorithm: cuDNN's first heuristic choice that ran without tensor-op math, else
 * IMPLICIT_GEMM (any configuration, no workspace). */
static int conv_algorithm(const hpvm_cudnn_symbols_t *dnn, cudnnHandle_t handle,
                          const conv_t *c) {
  if (!dnn->cudnnGetConvolutionForwardAlgorithm_v7)
    return HPVM_CUDNN_FWD_ALGO_IMPLICIT_GEMM;
  hpvm_cudnn_fwd_algo_perf_t perf[8];
  int count = 0;
  memset(perf, 0, sizeof(perf));
  if (dnn->cudnnGetConvolutionForwardAlgorithm_v7(handle, c->x, c->w, c->conv, c->y, 8, &count,
                                                  perf) != HPVM_CUDNN_STATUS_SUCCESS)
    return HPVM_CUDNN_FWD_ALGO_IMPLICIT_GEMM;
  for (int i = 0; i < count && i < 8; ++i)
    if (perf[i].status == HPVM_CUDNN_STATUS_SUCCESS &&
        (perf[i].math_type == HPVM_CUDNN_DEFAULT_MATH || perf[i].math_type == HPVM_CUDNN_FMA_MATH))
      return perf[i].algo;
  return HPVM_CUDNN_FWD_ALGO_IMPLICIT_GEMM;
}

/* cudnnConvolutionForward into the output; the workspace (device allocator) goes to
 * *out_workspace, freed by the caller once the stream is done. */
static hpvm_status_t run_conv(const hpvm_cudnn_symbols_t *dnn, cudnnHandle_t handle,
                              hpvm_device_t *device, const hpvm_rt_tensor_library_call_t *call,
                              const hpvm_cuda_library_buffers_t *buffers,
                              uint64_t *out_workspace) {
  conv_t c;
  memset(&c, 0, sizeof(c));
  hpvm_status_t status = conv_describe(dnn, call, &c);
  int algo = status ? 0 : conv_algorithm(dnn, handle, &c);
  size_t bytes = 0;
  if (!status)
    status = dnn_status(dnn,
                        dnn->cudnnGetConvolutionForwardWorkspaceSize(handle, c.x, c.w, c.conv,
                                                                     c.y, algo, &bytes),
                        "cudnnGetConvolutionForwardWorkspaceSize");
  if (!status && bytes)
    status = hpvm_device_buffer_alloc(device, bytes, HPVM_BUFFER_OWNER_KERNEL_RUN, out_workspace);
  const float one = 1.0f, zero = 0.0f;
  if (!status)
    status = dnn_status(
        dnn,
        dnn->cudnnConvolutionForward(handle, &one, c.x, (const void *)(uintptr_t)buffers->x, c.w,
                                     (const void *)(uintptr_t)buffers->w, c.conv, algo,
                                     (void *)(uintptr_t)*out_workspace, bytes, &zero, c.y,
                                     (void *)(uintptr_t)buffers->output),
        "cudnnConvolutionForward");
  conv_free(dnn, &c);
  return status;
}

/* The row-major product as cuBLAS's column-major one: C^T = B^T A^T, so B comes first. */
static hpvm_status_t run_matmul(const hpvm_cublas_symbols_t *blas, cublasHandle_t handle,
                                const hpvm_rt_tensor_library_call_t *call,
                                const hpvm_cuda_library_buffers_t *buffers) {
  const int64_t batch = call->sizes[0], m = call->sizes[1], n = call->sizes[2], k = call->sizes[3];
  if (!fits_int(call->sizes, 4) || m * k > INT_MAX || k * n > INT_MAX || m * n > INT_MAX)
    return HPVM_STATUS(OUT_OF_RANGE, "product sizes beyond cuBLAS's int");
  const float one = 1.0f, zero = 0.0f;
  const float *a = (const float *)(uintptr_t)buffers->x, *b = (const float *)(uintptr_t)buffers->w;
  float *c = (float *)(uintptr_t)buffers->output;
  if (batch == 1)
    return blas_status(blas->cublasSgemm(handle, HPVM_CUBLAS_OP_N, HPVM_CUBLAS_OP_N, (int)n, (int)m,
                                         (int)k, &one, b, (int)n, a, (int)k, &zero, c, (int)n),
                       "cublasSgemm_v2");
  return blas_status(blas->cublasSgemmStridedBatched(
                         handle, HPVM_CUBLAS_OP_N, HPVM_CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                         b, (int)n, (long long)(k * n), a, (int)k, (long long)(m * k), &zero, c,
                         (int)n, (long long)(m * n), (int)batch),
                     "cublasSgemmStridedBatched");
}

static int activation_mode(uint32_t activation) {
  switch (activation) {
  case HPVM_RT_TENSOR_LIBRARY_RELU: return HPVM_CUDNN_ACTIVATION_RELU;
  case HPVM_RT_TENSOR_LIBRARY_CLIPPED_RELU: return HPVM_CUDNN_ACTIVATION_CLIPPED_RELU;
  case HPVM_RT_TENSOR_LIBRARY_TANH: return HPVM_CUDNN_ACTIVATION_TANH;
  case HPVM_RT_TENSOR_LIBRARY_SIGMOID: return HPVM_CUDNN_ACTIVATION_SIGMOID;
  default: return -1;
  }
}

/* The bias (cudnnAddTensor, broadcast over its size-1 dimensions) and the activation
 * (cudnnActivationForward in place) on the output. */
static hpvm_status_t run_epilogue(const hpvm_cudnn_symbols_t *dnn, cudnnHandle_t handle,
                                  const hpvm_rt_tensor_library_call_t *call,
                                  const hpvm_cuda_library_buffers_t *buffers) {
  const float one = 1.0f, zero = 0.0f;
  void *y = (void *)(uintptr_t)buffers->output;
  cudnnTensorDescriptor_t out = NULL, bias = NULL;
  cudnnActivationDescriptor_t activation = NULL;
  hpvm_status_t status = tensor_descriptor(dnn, call->output, &out);
  if (!status && call->bias_param >= 0) {
    status = tensor_descriptor(dnn, call->bias, &bias);
    if (!status)
      status = dnn_status(dnn,
                          dnn->cudnnAddTensor(handle, &one, bias,
                                              (const void *)(uintptr_t)buffers->bias, &one, out, y),
                          "cudnnAddTensor");
  }
  int mode = activation_mode(call->activation);
  if (!status && mode >= 0) {
    status = dnn_status(dnn, dnn->cudnnCreateActivationDescriptor(&activation),
                        "cudnnCreateActivationDescriptor");
    if (!status)
      status = dnn_status(dnn,
                          dnn->cudnnSetActivationDescriptor(activation, mode,
                                                            HPVM_CUDNN_PROPAGATE_NAN, call->clip),
                          "cudnnSetActivationDescriptor");
    if (!status)
      status = dnn_status(
          dnn, dnn->cudnnActivationForward(handle, activation, &one, out, y, &zero, out, y),
          "cudnnActivationForward");
  }
  if (activation)
    dnn->cudnnDestroyActivationDescriptor(activation);
  if (bias)
    dnn->cudnnDestroyTensorDescriptor(bias);
  if (out)
    dnn->cudnnDestroyTensorDescriptor(out);
  return status;
}

hpvm_status_t hpvm_cuda_library_run(hpvm_cuda_libraries_t *libraries, hpvm_device_t *device,
                                    const hpvm_rt_tensor_library_call_t *call,
                                    const hpvm_cuda_library_buffers_t *buffers,
                                    bool *out_started) {
  *out_started = false;
  bool conv = call->op == HPVM_RT_TENSOR_LIBRARY_CONV2D;
  bool epilogue = call->bias_param >= 0 || call->activation != HPVM_RT_TENSOR_LIBRARY_IDENTITY;
  HPVM_RETURN_IF_ERROR(hpvm_cuda_device_enter(device));
  handles_t *handles = NULL;
  hpvm_status_t status =
      thread_handles(libraries, device, conv || epilogue, !conv, &handles);
  uint64_t workspace = 0;
  if (!status)
    status = conv ? run_conv(&libraries->dnn, handles->cudnn, device, call, buffers, &workspace)
                  : run_matmul(&libraries->blas, handles->cublas, call, buffers);
  if (!status && epilogue)
    status = run_epilogue(&libraries->dnn, handles->cudnn, call, buffers);
  if (!status) {
    /* Everything is queued: what fails now is the computation itself. */
    *out_started = true;
    const hpvm_cuda_symbols_t *cu = hpvm_cuda_device_symbols(device);
    status = hpvm_cuda_status(cu, cu->cuStreamSynchronize(HPVM_CU_STREAM_PER_THREAD),
                              "cuStreamSynchronize");
  } else {
    /* Work queued before the failure finishes before its buffers go. */
    const hpvm_cuda_symbols_t *cu = hpvm_cuda_device_symbols(device);
    cu->cuStreamSynchronize(HPVM_CU_STREAM_PER_THREAD);
  }
  if (workspace)
    hpvm_status_free(hpvm_device_buffer_free(device, workspace, HPVM_BUFFER_OWNER_KERNEL_RUN));
  hpvm_cuda_device_leave(device);
  return status;
}
