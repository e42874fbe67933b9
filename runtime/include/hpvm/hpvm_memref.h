/* hpvm_memref.h - C views of MLIR memref descriptors, for host code that calls compiled HPVM
 * functions through their C interface: a public `func.func @f(memref<?xf32>, index)` is called
 * from C as `_mlir_ciface_f(hpvm_memref_f32_1d_t *, int64_t)`. */
#ifndef HPVM_MEMREF_H
#define HPVM_MEMREF_H

#include <stdint.h>

/* The layout MLIR uses for a ranked memref: the allocated and aligned pointers, the offset
 * (in elements) of the first element, and per dimension its size and stride (in elements). */
#define HPVM_MEMREF_DEFINE(NAME, T, RANK)                                                     \
  typedef struct NAME {                                                                        \
    T *allocated;                                                                              \
    T *aligned;                                                                                \
    int64_t offset;                                                                            \
    int64_t sizes[RANK];                                                                       \
    int64_t strides[RANK];                                                                     \
  } NAME

HPVM_MEMREF_DEFINE(hpvm_memref_f32_1d_t, float, 1);
HPVM_MEMREF_DEFINE(hpvm_memref_f32_2d_t, float, 2);
HPVM_MEMREF_DEFINE(hpvm_memref_f32_3d_t, float, 3);
HPVM_MEMREF_DEFINE(hpvm_memref_i32_1d_t, int32_t, 1);
HPVM_MEMREF_DEFINE(hpvm_memref_i64_1d_t, int64_t, 1);
HPVM_MEMREF_DEFINE(hpvm_memref_u8_1d_t, uint8_t, 1);

/* Contiguous row-major views of existing arrays (the last dimension is the fastest). */
static inline hpvm_memref_f32_1d_t hpvm_memref_f32_1d(float *data, int64_t n) {
  hpvm_memref_f32_1d_t m = {data, data, 0, {n}, {1}};
  return m;
}
static inline hpvm_memref_f32_2d_t hpvm_memref_f32_2d(float *data, int64_t rows, int64_t cols) {
  hpvm_memref_f32_2d_t m = {data, data, 0, {rows, cols}, {cols, 1}};
  return m;
}
static inline hpvm_memref_f32_3d_t hpvm_memref_f32_3d(float *data, int64_t d0, int64_t d1,
                                                      int64_t d2) {
  hpvm_memref_f32_3d_t m = {data, data, 0, {d0, d1, d2}, {d1 * d2, d2, 1}};
  return m;
}
static inline hpvm_memref_i32_1d_t hpvm_memref_i32_1d(int32_t *data, int64_t n) {
  hpvm_memref_i32_1d_t m = {data, data, 0, {n}, {1}};
  return m;
}
static inline hpvm_memref_i64_1d_t hpvm_memref_i64_1d(int64_t *data, int64_t n) {
  hpvm_memref_i64_1d_t m = {data, data, 0, {n}, {1}};
  return m;
}
static inline hpvm_memref_u8_1d_t hpvm_memref_u8_1d(uint8_t *data, int64_t n) {
  hpvm_memref_u8_1d_t m = {data, data, 0, {n}, {1}};
  return m;
}

#endif /* HPVM_MEMREF_H */
