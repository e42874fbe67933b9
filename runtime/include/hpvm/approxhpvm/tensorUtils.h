/* tensorUtils.h - ApproxHPVM's host helpers for DNN programs, as HPVM implements them.
 *
 * The release's DNN benchmarks include <tensorUtils.h> and <config.h> beside <hpvm.h>; with
 * hpvm-cc they compile unchanged (hpvm-cc puts this directory on the include path, after the
 * program's own). Files are the release's format: raw little-endian float32 values, no
 * header; labels are uint8 (readLabels) or uint32 (readLabels3, readLabelsBatch3). The
 * functions are in libhpvm_rt; see tensor_runtime.h for the objects and the environment. */
#ifndef HPVM_APPROXHPVM_TENSOR_UTILS_H
#define HPVM_APPROXHPVM_TENSOR_UTILS_H

#ifdef __cplusplus
/* What the release's header pulls in (<bits/stdc++.h>), and its programs rely on. */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>
#else
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif
#include <unistd.h>

#include "tensor.h"
#include "tensor_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor of dim1 x dim2 x dim3 x dim4 float32 values read from `file_name`. */
HPVM_TENSOR_EXPORT struct Tensor *readTrainedWeights(const char *file_name, int data_type,
                                                     long int dim1_size, long int dim2_size,
                                                     long int dim3_size, long int dim4_size);
/* Images start..end-1 of an NCHW float32 file of dim2 x dim3 x dim4 images: a tensor of
 * (end - start) x dim2 x dim3 x dim4. */
HPVM_TENSOR_EXPORT struct Tensor *readInputBatch(const char *file_name, long data_type,
                                                 long start, long end, long dim2_size,
                                                 long dim3_size, long dim4_size);
/* Labels (malloc'd; the program frees them). */
HPVM_TENSOR_EXPORT uint8_t *readLabels(const char *labels_file, int num_labels);
HPVM_TENSOR_EXPORT uint32_t *readLabels3(const char *labels_file, int num_labels);
HPVM_TENSOR_EXPORT uint32_t *readLabelsBatch3(const char *labels_file, int start, int end);
/* The percentage of rows of an N x classes result whose largest entry is the label. */
HPVM_TENSOR_EXPORT float computeAccuracy3(uint32_t *labels, void *result);
/* Printing and dumping. */
HPVM_TENSOR_EXPORT void printTensorDims(void *tensor);
HPVM_TENSOR_EXPORT void printTensorValues(void *tensor);
HPVM_TENSOR_EXPORT void dumpOutput(void *tensor, const char *file_name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HPVM_APPROXHPVM_TENSOR_UTILS_H */
