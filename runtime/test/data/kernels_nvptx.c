/* kernels_nvptx.c - C kernels compiled to PTX (clang --target=nvptx64-nvidia-cuda) at build time
 * for cuda_device_test: the CUDA twins of kernels.cl, a kernel that faults, and one that uses
 * dynamic shared memory and a barrier. */
#define KERNEL __attribute__((nvptx_kernel))
#define SHARED __attribute__((address_space(3)))

static unsigned global_x(void) {
  return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}

static unsigned global_y(void) {
  return __nvvm_read_ptx_sreg_ctaid_y() * __nvvm_read_ptx_sreg_ntid_y() +
         __nvvm_read_ptx_sreg_tid_y();
}

KERNEL void saxpy(const float *x, float *y, float a, unsigned n) {
  unsigned i = global_x();
  if (i < n)
    y[i] = a * x[i] + y[i];
}

KERNEL void matrix_add(float *c, const float *a, const float *b, unsigned width,
                       unsigned height) {
  unsigned column = global_x(), row = global_y();
  if (column < width && row < height)
    c[row * width + column] = a[row * width + column] + b[row * width + column];
}

/* Each block sums its part of `x` through dynamic shared memory (one float per thread). */
extern SHARED float partial[];

KERNEL void block_sum(const float *x, float *sums, unsigned n) {
  unsigned t = __nvvm_read_ptx_sreg_tid_x(), i = global_x();
  partial[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = __nvvm_read_ptx_sreg_ntid_x() / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0)
    sums[__nvvm_read_ptx_sreg_ctaid_x()] = partial[0];
}

/* Writes through the pointer it is given: a null one faults on the device. */
KERNEL void store_through(float *p) {
  p[global_x()] = 1.0f;
}
