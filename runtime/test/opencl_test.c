/* opencl_test.c - runs real SPIR-V kernels on the OpenCL device (PoCL here) and checks every
 * element; SKIPPED (exit 77) only when no OpenCL platform is present. */
#include <math.h>

#include "test_util.h"

/* saxpy through explicit device buffers: y = a*x + y for n not a multiple of the group size. */
static void run_saxpy(hpvm_rt_device_t *device, hpvm_rt_module_t *module) {
  enum { N = 1000, GROUP = 64 };
  static float x[N], y[N], result[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = (float)(N - i);
  }
  hpvm_rt_kernel_t *kernel, *same;
  CHECK_OK(hpvm_rt_kernel_get(module, "saxpy", &kernel));
  CHECK_OK(hpvm_rt_kernel_get(module, "saxpy", &same));
  CHECK(kernel == same);
  uint64_t x_buffer, y_buffer;
  CHECK_OK(hpvm_rt_device_alloc(device, sizeof(x), &x_buffer));
  CHECK_OK(hpvm_rt_device_alloc(device, sizeof(y), &y_buffer));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, x_buffer, 0, x, sizeof(x)));
  CHECK_OK(hpvm_rt_device_copy_to_device(device, y_buffer, 0, y, sizeof(y)));
  float a = 3.0f;
  uint32_t n = N;
  hpvm_rt_kernel_arg_t args[4] = {{8, &x_buffer}, {8, &y_buffer}, {4, &a}, {4, &n}};
  hpvm_rt_launch_dims_t dims = {{(N + GROUP - 1) / GROUP, 1, 1}, {GROUP, 1, 1}, 0};
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 4));
  CHECK_OK(hpvm_rt_device_copy_to_host(device, result, y_buffer, 0, sizeof(result)));
  for (int i = 0; i < N; ++i)
    if (result[i] != 3.0f * x[i] + y[i]) {
      fprintf(stderr, "saxpy[%d] = %f, expected %f\n", i, result[i], 3.0f * x[i] + y[i]);
      exit(1);
    }
  /* Partial copy with an offset. */
  float middle[10];
  CHECK_OK(hpvm_rt_device_copy_to_host(device, middle, y_buffer, 500 * sizeof(float), sizeof(middle)));
  for (int i = 0; i < 10; ++i)
    CHECK(middle[i] == result[500 + i]);
  /* A wrong argument is an error status from the driver, not a crash. */
  uint16_t short_value = 1;
  hpvm_rt_kernel_arg_t bad[4] = {{8, &x_buffer}, {8, &y_buffer}, {2, &short_value}, {4, &n}};
  CHECK_CODE(hpvm_rt_kernel_launch(kernel, &dims, bad, 4), HPVM_STATUS_INVALID_ARGUMENT);
  /* Copies leaving the buffer and stale handles are refused before OpenCL sees them. */
  CHECK_CODE(hpvm_rt_device_copy_to_device(device, x_buffer, 8, x, sizeof(x)),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_CODE(hpvm_rt_device_copy_to_host(device, result, y_buffer, SIZE_MAX - 4, 8),
             HPVM_STATUS_OUT_OF_RANGE);
  CHECK_OK(hpvm_rt_device_free(device, x_buffer));
  CHECK_OK(hpvm_rt_device_free(device, y_buffer));
  CHECK_CODE(hpvm_rt_device_free(device, y_buffer), HPVM_STATUS_NOT_FOUND);
  CHECK_CODE(hpvm_rt_device_copy_to_device(device, x_buffer, 0, x, 4), HPVM_STATUS_NOT_FOUND);
}

/* A 2-D kernel fed through the memory tracker, as compiled code does it. */
static void run_matrix_add(hpvm_rt_device_t *device, hpvm_rt_module_t *module) {
  enum { W = 37, H = 23 };
  static float a[W * H], b[W * H], c[W * H];
  for (int i = 0; i < W * H; ++i) {
    a[i] = (float)i;
    b[i] = (float)(i % 7) * 0.25f;
    c[i] = -1.0f;
  }
  CHECK_OK(hpvm_rt_track(a, sizeof(a)));
  CHECK_OK(hpvm_rt_track(b, sizeof(b)));
  CHECK_OK(hpvm_rt_track(c, sizeof(c)));
  uint64_t ha, hb, hc;
  size_t offset;
  CHECK_OK(hpvm_rt_request_device(a, 0, device, HPVM_RT_ACCESS_IN, &ha, &offset));
  CHECK_EQ_INT(offset, 0);
  CHECK_OK(hpvm_rt_request_device(b, 0, device, HPVM_RT_ACCESS_IN, &hb, &offset));
  CHECK_OK(hpvm_rt_request_device(c, 0, device, HPVM_RT_ACCESS_OUT, &hc, &offset));
  hpvm_rt_kernel_t *kernel;
  CHECK_OK(hpvm_rt_kernel_get(module, "matrix_add", &kernel));
  uint32_t width = W, height = H;
  hpvm_rt_kernel_arg_t args[5] = {{8, &hc}, {8, &ha}, {8, &hb}, {4, &width}, {4, &height}};
  hpvm_rt_launch_dims_t dims = {{(W + 7) / 8, (H + 3) / 4, 1}, {8, 4, 1}, 0};
  CHECK_OK(hpvm_rt_kernel_launch(kernel, &dims, args, 5));
  CHECK(c[0] == -1.0f); /* the host copy is stale until requested */
  CHECK_OK(hpvm_rt_request_host(c, 0, HPVM_RT_ACCESS_IN));
  for (int i = 0; i < W * H; ++i)
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "matrix_add[%d] = %f, expected %f\n", i, c[i], a[i] + b[i]);
      exit(1);
    }
  CHECK_OK(hpvm_rt_untrack(a));
  CHECK_OK(hpvm_rt_untrack(b));
  CHECK_OK(hpvm_rt_untrack(c));
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: opencl_test kernels.spv kernels.spir.bc\n");
    return 2;
  }
  hpvm_rt_device_t *device;
  hpvm_status_t status = hpvm_rt_device_get(HPVM_RT_DEVICE_OPENCL, &device);
  if (hpvm_status_code(status) == HPVM_STATUS_UNAVAILABLE) {
    printf("SKIPPED: no OpenCL platform: %s\n", hpvm_status_message(status));
    hpvm_status_free(status);
    return TEST_SKIP_CODE;
  }
  CHECK_OK(status);
  printf("device: %s\n", hpvm_rt_device_name(device));
  size_t spirv_size, bitcode_size;
  void *spirv = test_read_file(argv[1], &spirv_size);
  void *bitcode = test_read_file(argv[2], &bitcode_size);

  /* 1. SPIR-V with a SPIR 1.2 fallback: IL first, then the bitcode. */
  hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_SPIRV, spirv, spirv_size, bitcode, bitcode_size};
  hpvm_rt_module_t *module;
  CHECK_OK(hpvm_rt_module_load(device, &image, &module));
  run_saxpy(device, module);
  run_matrix_add(device, module);
  hpvm_rt_kernel_t *kernel;
  CHECK_CODE(hpvm_rt_kernel_get(module, "no_such_kernel", &kernel), HPVM_STATUS_NOT_FOUND);
  hpvm_rt_module_unload(module);

  /* 2. SPIR 1.2 bitcode directly. */
  hpvm_rt_module_image_t spir = {HPVM_RT_IMAGE_SPIR_BITCODE, bitcode, bitcode_size, NULL, 0};
  CHECK_OK(hpvm_rt_module_load(device, &spir, &module));
  run_saxpy(device, module);
  hpvm_rt_module_unload(module);

  /* 3. SPIR-V alone: without IL support the runtime translates it with llvm-spirv. */
  hpvm_rt_module_image_t bare = {HPVM_RT_IMAGE_SPIRV, spirv, spirv_size, NULL, 0};
  status = hpvm_rt_module_load(device, &bare, &module);
  if (status) {
    /* Only acceptable reason: no translator installed; the message must say so. */
    CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_UNAVAILABLE);
    CHECK(strstr(hpvm_status_message(status), "llvm-spirv") != NULL);
    printf("note: SPIR-V-only load needs llvm-spirv: %s\n", hpvm_status_message(status));
    hpvm_status_free(status);
  } else {
    run_saxpy(device, module);
    hpvm_rt_module_unload(module);
  }

  /* Errors: wrong formats and broken images are statuses. */
  hpvm_rt_module_image_t ptx = {HPVM_RT_IMAGE_PTX, "// ptx", 7, NULL, 0};
  CHECK_CODE(hpvm_rt_module_load(device, &ptx, &module), HPVM_STATUS_INVALID_ARGUMENT);
  static const char garbage[] = "this is not bitcode";
  hpvm_rt_module_image_t broken = {HPVM_RT_IMAGE_SPIR_BITCODE, garbage, sizeof(garbage), NULL, 0};
  status = hpvm_rt_module_load(device, &broken, &module);
  CHECK(status != NULL);
  hpvm_status_free(status);
  free(spirv);
  free(bitcode);
  hpvm_rt_shutdown();
  printf("opencl_test: OK\n");
  return 0;
}
