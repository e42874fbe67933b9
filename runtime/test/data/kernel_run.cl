// kernel_run.cl - OpenCL C kernels run through hpvm_rt_kernel_run by kernel_run_opencl_test
// (compiled to SPIR-V at build time).  Each guards the partial work-groups itself.
__kernel void saxpy(__global float *y, __global const float *x, float a, long n) {
  long i = get_global_id(0);
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// out[(z * ny + y) * nx + x] = x + 100 y + 10000 z inside nx x ny x nz.
__kernel void fill3d(__global int *out, long nx, long ny, long nz) {
  long x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x < nx && y < ny && z < nz)
    out[(z * ny + y) * nx + x] = (int)(x + 100 * y + 10000 * z);
}

// Doubles the even elements only: an "out" buffer written in part.
__kernel void scale_even(__global float *data, long n) {
  long i = get_global_id(0);
  if (i < n && i % 2 == 0)
    data[i] *= 2.0f;
}

// The signature of the fake CUDA driver's vector_add, so that one site runs on either.
__kernel void vector_add(__global const float *a, __global const float *b, __global float *c,
                         int n) {
  int i = get_global_id(0);
  if (i < n)
    c[i] = a[i] + b[i];
}
