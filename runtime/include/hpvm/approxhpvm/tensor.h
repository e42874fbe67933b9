/* tensor.h - ApproxHPVM's tensor objects, as HPVM's runtime keeps them.
 *
 * The host API of ApproxHPVM's DNN programs (tensorUtils.h, tensor_runtime.h) passes tensors
 * as `void *` handles to a `struct Tensor`: its sizes, element type, layout and placement,
 * and its data in host memory. The field names are the release's, so code that reads them
 * (`t->host_data`, `t->dims.dim_sizes[1]`) compiles; the layout is this runtime's (there are
 * no cuDNN descriptors), and HPVM's compiled graphs read a tensor's data in place.
 * See docs/HPVM-C.md, "ApproxHPVM's host API". */
#ifndef HPVM_APPROXHPVM_TENSOR_H
#define HPVM_APPROXHPVM_TENSOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct Dimension {
  int num_dims;
  size_t *dim_sizes;
};

enum data_location_t { HOST, DEVICE };

/* Layouts: only NCHW is computed on (as in the release). */
enum Tensor_format_t { nchw, nhwc };

/* Element types, numbered as cuDNN's (the release's values): only float_type is supported. */
enum Tensor_type_t { float_type = 0, double_type = 1, half_type = 2, int_type = 3,
                     float2_type = 4, half2_type = 5 };

struct Tensor {
  int data_type;
  int cur_type;
  int data_format;
  enum data_location_t data_placement;
  void *host_data;      /* row-major float data */
  size_t num_elems;     /* the product of the sizes */
  size_t size_in_bytes; /* num_elems * 4 */
  struct Dimension dims;
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HPVM_APPROXHPVM_TENSOR_H */
