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

// Per-work-group sums through two __local buffers whose sizes the host gives: each item copies
// its element (0 past n) and its lane, then item 0 adds the group up; a group whose lanes do
// not add up to 0 + 1 + ... + (size - 1) writes NaN (the buffers overlapped).
__kernel void tile_sums(__global const float *x, __global float *sums, long n,
                        __local float *scratch, __local int *lanes) {
  long lane = get_local_id(0), g = get_global_id(0);
  scratch[lane] = g < n ? x[g] : 0.0f;
  lanes[lane] = (int)lane;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lane == 0) {
    long size = get_local_size(0), total = 0;
    float sum = 0.0f;
    for (long k = 0; k < size; ++k) {
      sum += scratch[k];
      total += lanes[k];
    }
    sums[get_group_id(0)] = total == size * (size - 1) / 2 ? sum : NAN;
  }
}
