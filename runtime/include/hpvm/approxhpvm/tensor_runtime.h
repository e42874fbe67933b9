/* tensor_runtime.h - the host side of ApproxHPVM's tensor runtime, as HPVM implements it.
 *
 * Tensor objects (struct Tensor, tensor.h) made by these calls are what an ApproxHPVM program
 * stores in its launch's argument struct: the compiler reads their shapes from these calls
 * where the sizes are constants, and each launch checks the objects it receives against them.
 * The graph's tensor outputs come back as tensor objects too. Errors (a missing or short
 * file, an unsupported element type) print what was expected and found, and exit(1).
 *
 * Environment (for checks and benchmarks; docs/HPVM-C.md):
 *   HPVM_TENSOR_DUMP=<file>   each batch's result (llvm_hpvm_invokeRtControl or
 *                              computeAccuracy3) is appended to <file> as raw float32;
 *   HPVM_TENSOR_BATCHES=<n>   the program ends (exit(0)) after its n-th batch (n: decimal
 *                              digits, from 1; anything else is an error);
 *   HPVM_TENSOR_STATS=1       one line per batch on stderr: "hpvm-tensor: batch <i>: <ms> ms",
 *                              the time from readInputBatch's return to the result's use. */
#ifndef HPVM_APPROXHPVM_TENSOR_RUNTIME_H
#define HPVM_APPROXHPVM_TENSOR_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#if defined(__GNUC__)
#define HPVM_TENSOR_EXPORT __attribute__((visibility("default")))
#else
#define HPVM_TENSOR_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor objects. Sizes must be > 0; data_type must be float_type. */
HPVM_TENSOR_EXPORT void *create4DTensor(int data_type, int data_format, size_t dim1_size,
                                        size_t dim2_size, size_t dim3_size, size_t dim4_size);
HPVM_TENSOR_EXPORT void *create3DTensor(int data_type, size_t dim1_size, size_t dim2_size,
                                        size_t dim3_size);
HPVM_TENSOR_EXPORT void *create2DTensor(int data_type, size_t dim1_size, size_t dim2_size);
/* Copies size_in_bytes bytes (at most the tensor's size) of `data` into the tensor. */
HPVM_TENSOR_EXPORT void initTensorData(void *tensor, void *data, size_t size_in_bytes);
/* Frees one tensor object (and its data). The handle is dead afterwards: given to a launch
 * or any call here (freeTensor included), it is an error naming the call that freed it.
 * docs/HPVM-C.md, "Tensor objects' lifetime". */
HPVM_TENSOR_EXPORT void freeTensor(void *tensor);
/* The data are on the host already: nothing to move. */
HPVM_TENSOR_EXPORT void hpvm_request_tensor(void *tensor, int destination);

/* Batches: tensors made after startMemTracking (by these calls or as a graph's outputs,
 * weights read after it too) are freed by the next freeBatchMemory, as freeTensor frees. */
HPVM_TENSOR_EXPORT void startMemTracking(void);
HPVM_TENSOR_EXPORT void freeBatchMemory(void);
HPVM_TENSOR_EXPORT void clearTensorMap(void);

/* The release's runtime controller (approximation configurations): HPVM's knobs are chosen
 * at compile time (docs/Approximation.md), so the configuration file is only checked to
 * exist; llvm_hpvm_invokeRtControl prints the batch's accuracy against labels_file (uint32
 * labels, images start..end-1). */
HPVM_TENSOR_EXPORT void llvm_hpvm_initializeRuntimeController(const char *config_file);
HPVM_TENSOR_EXPORT void llvm_hpvm_clearRuntimeController(void);
HPVM_TENSOR_EXPORT void llvm_hpvm_invokeRtControl(void *result, const char *labels_file,
                                                  int start, int end);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HPVM_APPROXHPVM_TENSOR_RUNTIME_H */
