/* cuda_libraries.h - cuDNN and cuBLAS, loaded with dlopen on first use by a CUDA tensor site,
 * and the library calls of hpvm_rt_tensor_library_call_t (X-macro symbol tables as in
 * cuda_symbols.h: the types are declared here, so neither cudnn.h nor cublas_v2.h is needed). */
#ifndef HPVM_DEVICE_CUDA_LIBRARIES_H
#define HPVM_DEVICE_CUDA_LIBRARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/cuda/cuda_symbols.h"
#include "device/device.h"

/* The cuDNN and cuBLAS API types we use (ABI of cudnn.h, cublas_v2.h). */
typedef int cudnnStatus_t;
typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;

/* cudnnConvolutionFwdAlgoPerf_t */
typedef struct hpvm_cudnn_fwd_algo_perf_t {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
} hpvm_cudnn_fwd_algo_perf_t;

#define HPVM_CUDNN_STATUS_SUCCESS 0
#define HPVM_CUDNN_TENSOR_NCHW 0
#define HPVM_CUDNN_DATA_FLOAT 0
#define HPVM_CUDNN_CROSS_CORRELATION 1
#define HPVM_CUDNN_FWD_ALGO_IMPLICIT_GEMM 0
#define HPVM_CUDNN_DEFAULT_MATH 0
#define HPVM_CUDNN_FMA_MATH 3 /* FMA kernels only: no TF32 tensor-core rounding */
#define HPVM_CUDNN_ACTIVATION_SIGMOID 0
#define HPVM_CUDNN_ACTIVATION_RELU 1
#define HPVM_CUDNN_ACTIVATION_TANH 2
#define HPVM_CUDNN_ACTIVATION_CLIPPED_RELU 3
#define HPVM_CUDNN_PROPAGATE_NAN 1
#define HPVM_CUBLAS_STATUS_SUCCESS 0
#define HPVM_CUBLAS_OP_N 0

/* X(field, exported symbol, required, return type, parameters). cudaStream_t is CUstream. */
#define HPVM_CUDNN_SYMBOLS(X)                                                                    \
  X(cudnnCreate, "cudnnCreate", 1, cudnnStatus_t, (cudnnHandle_t *))                            \
  X(cudnnDestroy, "cudnnDestroy", 1, cudnnStatus_t, (cudnnHandle_t))                            \
  X(cudnnSetStream, "cudnnSetStream", 1, cudnnStatus_t, (cudnnHandle_t, CUstream))              \
  X(cudnnGetErrorString, "cudnnGetErrorString", 1, const char *, (cudnnStatus_t))               \
  X(cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor", 1, cudnnStatus_t,               \
    (cudnnTensorDescriptor_t *))                                                                \
  X(cudnnSetTensor4dDescriptor, "cudnnSetTensor4dDescriptor", 1, cudnnStatus_t,                 \
    (cudnnTensorDescriptor_t, int, int, int, int, int, int))                                    \
  X(cudnnDestroyTensorDescriptor, "cudnnDestroyTensorDescriptor", 1, cudnnStatus_t,             \
    (cudnnTensorDescriptor_t))                                                                  \
  X(cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor", 1, cudnnStatus_t,               \
    (cudnnFilterDescriptor_t *))                                                                \
  X(cudnnSetFilter4dDescriptor, "cudnnSetFilter4dDescriptor", 1, cudnnStatus_t,                 \
    (cudnnFilterDescriptor_t, int, int, int, int, int, int))                                    \
  X(cudnnDestroyFilterDescriptor, "cudnnDestroyFilterDescriptor", 1, cudnnStatus_t,             \
    (cudnnFilterDescriptor_t))                                                                  \
  X(cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor", 1, cudnnStatus_t,     \
    (cudnnConvolutionDescriptor_t *))                                                           \
  X(cudnnSetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor", 1, cudnnStatus_t,       \
    (cudnnConvolutionDescriptor_t, int, int, int, int, int, int, int, int))                     \
  X(cudnnSetConvolutionGroupCount, "cudnnSetConvolutionGroupCount", 1, cudnnStatus_t,           \
    (cudnnConvolutionDescriptor_t, int))                                                        \
  X(cudnnSetConvolutionMathType, "cudnnSetConvolutionMathType", 0, cudnnStatus_t,               \
    (cudnnConvolutionDescriptor_t, int))                                                        \
  X(cudnnDestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor", 1, cudnnStatus_t,   \
    (cudnnConvolutionDescriptor_t))                                                             \
  X(cudnnGetConvolutionForwardAlgorithm_v7, "cudnnGetConvolutionForwardAlgorithm_v7", 0,        \
    cudnnStatus_t,                                                                              \
    (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                           \
     cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *,                         \
     hpvm_cudnn_fwd_algo_perf_t *))                                                             \
  X(cudnnGetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize", 1,      \
    cudnnStatus_t,                                                                              \
    (cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                           \
     cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, size_t *))                     \
  X(cudnnConvolutionForward, "cudnnConvolutionForward", 1, cudnnStatus_t,                       \
    (cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *,                        \
     cudnnFilterDescriptor_t, const void *, cudnnConvolutionDescriptor_t, int, void *, size_t,  \
     const void *, cudnnTensorDescriptor_t, void *))                                            \
  X(cudnnAddTensor, "cudnnAddTensor", 1, cudnnStatus_t,                                         \
    (cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *, const void *,          \
     cudnnTensorDescriptor_t, void *))                                                          \
  X(cudnnCreateActivationDescriptor, "cudnnCreateActivationDescriptor", 1, cudnnStatus_t,       \
    (cudnnActivationDescriptor_t *))                                                            \
  X(cudnnSetActivationDescriptor, "cudnnSetActivationDescriptor", 1, cudnnStatus_t,             \
    (cudnnActivationDescriptor_t, int, int, double))                                            \
  X(cudnnDestroyActivationDescriptor, "cudnnDestroyActivationDescriptor", 1, cudnnStatus_t,     \
    (cudnnActivationDescriptor_t))                                                              \
  X(cudnnActivationForward, "cudnnActivationForward", 1, cudnnStatus_t,                         \
    (cudnnHandle_t, cudnnActivationDescriptor_t, const void *, cudnnTensorDescriptor_t,         \
     const void *, const void *, cudnnTensorDescriptor_t, void *))

#define HPVM_CUBLAS_SYMBOLS(X)                                                                   \
  X(cublasCreate, "cublasCreate_v2", 1, cublasStatus_t, (cublasHandle_t *))                     \
  X(cublasDestroy, "cublasDestroy_v2", 1, cublasStatus_t, (cublasHandle_t))                     \
  X(cublasSetStream, "cublasSetStream_v2", 1, cublasStatus_t, (cublasHandle_t, CUstream))       \
  X(cublasSgemm, "cublasSgemm_v2", 1, cublasStatus_t,                                           \
    (cublasHandle_t, int, int, int, int, int, const float *, const float *, int, const float *, \
     int, const float *, float *, int))                                                         \
  X(cublasSgemmStridedBatched, "cublasSgemmStridedBatched", 1, cublasStatus_t,                  \
    (cublasHandle_t, int, int, int, int, int, const float *, const float *, int, long long,     \
     const float *, int, long long, const float *, float *, int, long long, int))

typedef struct hpvm_cudnn_symbols_t {
  void *library;
#define HPVM_LIBRARY_DECLARE(field, symbol, required, result, params) result (*field) params;
  HPVM_CUDNN_SYMBOLS(HPVM_LIBRARY_DECLARE)
} hpvm_cudnn_symbols_t;

typedef struct hpvm_cublas_symbols_t {
  void *library;
  HPVM_CUBLAS_SYMBOLS(HPVM_LIBRARY_DECLARE)
#undef HPVM_LIBRARY_DECLARE
} hpvm_cublas_symbols_t;

/* The libraries of one runtime: loaded on first use (HPVM_TENSOR_LIBRARIES=0: never), a cuDNN
 * and a cuBLAS handle per device and thread (created on the thread's first call there, on its
 * per-thread stream, destroyed with the libraries). */
typedef struct hpvm_cuda_libraries_t hpvm_cuda_libraries_t;

hpvm_status_t hpvm_cuda_libraries_create(hpvm_allocator_t allocator,
                                         hpvm_cuda_libraries_t **out_libraries);
/* Destroys every handle (in its device's context; the devices must still be open). The
 * libraries stay loaded. NULL is a no-op. */
void hpvm_cuda_libraries_destroy(hpvm_cuda_libraries_t *libraries);

/* Whether `call` can run through the libraries, loading them on first use: cuDNN for a
 * convolution, cuBLAS for a product, and cuDNN too for a product's bias or activation. Not when
 * they are disabled or not found (silently) or lack a required symbol (warned once per runtime
 * and library). */
bool hpvm_cuda_libraries_available(hpvm_cuda_libraries_t *libraries,
                                   const hpvm_rt_tensor_library_call_t *call);

/* "cudnn" or "cublas": the library that computes `call` (traces). */
const char *hpvm_cuda_library_name(const hpvm_rt_tensor_library_call_t *call);

/* The device addresses of a call's tensors (bias 0 without one). */
typedef struct hpvm_cuda_library_buffers_t {
  uint64_t x, w, bias, output;
} hpvm_cuda_library_buffers_t;

/* Runs `call` on the CUDA device `device` (hpvm_cuda_device_is) on the calling thread's
 * per-thread stream and waits for it. *out_started is set once the library calls returned
 * success and only the stream's completion is awaited: an error without it means the output
 * may be written in part but nothing else (the caller may run another version). */
hpvm_status_t hpvm_cuda_library_run(hpvm_cuda_libraries_t *libraries, hpvm_device_t *device,
                                    const hpvm_rt_tensor_library_call_t *call,
                                    const hpvm_cuda_library_buffers_t *buffers,
                                    bool *out_started);

#endif /* HPVM_DEVICE_CUDA_LIBRARIES_H */
