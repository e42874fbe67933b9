// kernels.cl - OpenCL C kernels compiled to SPIR-V at build time for opencl_test.
__kernel void saxpy(__global const float *x, __global float *y, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__kernel void matrix_add(__global float *c, __global const float *a, __global const float *b,
                         uint width, uint height) {
  size_t column = get_global_id(0);
  size_t row = get_global_id(1);
  if (column < width && row < height)
    c[row * width + column] = a[row * width + column] + b[row * width + column];
}
