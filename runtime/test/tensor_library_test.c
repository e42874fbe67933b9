/* tensor_library_test.c - tensor nodes' library calls (cuDNN, cuBLAS) in hpvm_rt_kernel_run,
 * against the fake libcuda, libcudnn and libcublas (argv: fake_cuda fake_cudnn fake_cublas
 * fake_cudnn_incomplete): the call runs instead of the generated kernel and computes the
 * reference's results, with the library in the trace; a missing or disabled library, one
 * lacking a required symbol, parameters that do not fit the call and a call failing before it
 * starts run the generated kernel (the fake's "tensor_fallback", which writes 42s); handles per
 * thread, nothing leaked. */
#include <dlfcn.h>
#include <math.h>

#include "kernel_run_test.h"

static const char *fake_cuda, *fake_cudnn, *fake_cublas, *fake_cudnn_incomplete;
static long (*cuda_launches)(void), (*cuda_module_loads)(void), (*cuda_live_objects)(void);
static long (*cudnn_convolutions)(void), (*cudnn_additions)(void), (*cudnn_activations)(void);
static long (*cudnn_live_objects)(void), (*cudnn_handles_created)(void);
static int (*cudnn_last_algorithm)(void);
static long (*cublas_products)(void), (*cublas_live_handles)(void);

static const char cubin[] = "FAKE-CUBIN tensor_library_test";
static const hpvm_rt_module_image_t image = {HPVM_RT_IMAGE_CUBIN, cubin, sizeof(cubin), NULL, 0};

/*===--- nodes: the parameters compiled tensor nodes pass --------------------===*/

/* The value parameters of one memref: offset, sizes, strides (rank <= 4). */
typedef struct memref_values_t {
  int64_t offset, sizes[4], strides[4];
} memref_values_t;

/* A node's parameters: the generated kernel's two values (tensor_fallback: which parameter is
 * the output, its element count), then each tensor as a memref (3 + 2 * rank parameters). */
typedef struct node_params_t {
  hpvm_rt_kernel_param_t params[64];
  memref_values_t values[6];
  int64_t fallback[2];
  uint32_t count, memrefs;
} node_params_t;

static void node_begin(node_params_t *node) {
  memset(node, 0, sizeof(*node));
  node->params[0] = VALUE(node->fallback[0]);
  node->params[1] = VALUE(node->fallback[1]);
  node->count = 2;
}

/* Appends `data` of `rank` sizes `sizes`; returns the index of its first parameter. */
static int32_t node_memref(node_params_t *node, float *data, int rank, const int64_t *sizes,
                           hpvm_rt_access_t access) {
  memref_values_t *values = &node->values[node->memrefs++];
  int64_t elements = 1;
  for (int d = rank - 1; d >= 0; --d) {
    values->sizes[d] = sizes[d];
    values->strides[d] = elements;
    elements *= sizes[d];
  }
  int32_t first = (int32_t)node->count;
  uint64_t bytes = (uint64_t)elements * sizeof(float);
  node->params[node->count++] = buffer_param(data, bytes, access);
  node->params[node->count++] = buffer_param(data, bytes, access);
  node->params[node->count++] = VALUE(values->offset);
  for (int d = 0; d < rank; ++d)
    node->params[node->count++] = VALUE(values->sizes[d]);
  for (int d = 0; d < rank; ++d)
    node->params[node->count++] = VALUE(values->strides[d]);
  return first;
}

static void node_output(node_params_t *node, int32_t first, int64_t elements) {
  node->fallback[0] = first + 1; /* the aligned pointer's parameter */
  node->fallback[1] = elements;
}

/*===--- a grouped, strided, padded convolution + bias + relu ---------------===*/

enum { CN = 2, CC = 4, CH = 7, CW = 6, CF = 6, CK = 3, GROUPS = 2, PAD = 1, STRIDE = 2 };
enum { OH = (CH + 2 * PAD - CK) / STRIDE + 1, OW = (CW + 2 * PAD - CK) / STRIDE + 1 };
static float conv_x[CN * CC * CH * CW], conv_w[CF * (CC / GROUPS) * CK * CK], conv_bias[CF];
static float conv_out[CN * CF * OH * OW], conv_ref[CN * CF * OH * OW];
/* The node's scalar output (HPVM-C's byte count of its tensor), a constant. */
static const int64_t conv_bytes = 0;
static int64_t conv_scalars = -1;

static hpvm_rt_tensor_library_call_t conv_call = {
    HPVM_RT_TENSOR_LIBRARY_CONV2D, HPVM_RT_TENSOR_LIBRARY_RELU, 0.0,
    {CN, CC, CH, CW}, {CF, CK, CK}, {PAD, PAD}, {STRIDE, STRIDE}, GROUPS,
    {CN, CF, OH, OW}, {1, CF, 1, 1}, 0, 0, 0, 0, -1, &conv_bytes, sizeof(conv_bytes)};
static hpvm_rt_kernel_site_t conv_site = {"conv", "tensor_fallback", &image, NULL, NULL,
                                          &conv_call};

static void conv_reference(void) {
  for (int i = 0; i < (int)(sizeof(conv_x) / sizeof(float)); ++i)
    conv_x[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
  for (int i = 0; i < (int)(sizeof(conv_w) / sizeof(float)); ++i)
    conv_w[i] = (float)((i * 17) % 13) / 6.0f - 1.0f;
  for (int f = 0; f < CF; ++f)
    conv_bias[f] = 0.25f * (float)(f - 2);
  int cg = CC / GROUPS, fg = CF / GROUPS;
  for (int n = 0; n < CN; ++n)
    for (int f = 0; f < CF; ++f)
      for (int i = 0; i < OH; ++i)
        for (int j = 0; j < OW; ++j) {
          double sum = conv_bias[f];
          for (int c = 0; c < cg; ++c)
            for (int r = 0; r < CK; ++r)
              for (int s = 0; s < CK; ++s) {
                int y = i * STRIDE - PAD + r, x = j * STRIDE - PAD + s;
                if (y >= 0 && y < CH && x >= 0 && x < CW)
                  sum += (double)conv_x[((n * CC + (f / fg) * cg + c) * CH + y) * CW + x] *
                         conv_w[((f * cg + c) * CK + r) * CK + s];
              }
          conv_ref[((n * CF + f) * OH + i) * OW + j] = sum > 0 ? (float)sum : 0.0f;
        }
}

static void conv_params(node_params_t *node) {
  node_begin(node);
  conv_call.x_param = node_memref(node, conv_x, 4, (const int64_t[]){CN, CC, CH, CW},
                                  HPVM_RT_ACCESS_IN);
  conv_call.bias_param = node_memref(node, conv_bias, 4, (const int64_t[]){1, CF, 1, 1},
                                     HPVM_RT_ACCESS_IN);
  conv_call.w_param = node_memref(node, conv_w, 4, (const int64_t[]){CF, CC / GROUPS, CK, CK},
                                  HPVM_RT_ACCESS_IN);
  conv_call.output_param =
      node_memref(node, conv_out, 4, (const int64_t[]){CN, CF, OH, OW},
                  HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL);
  node_output(node, conv_call.output_param, CN * CF * OH * OW);
  conv_call.scalars_param = (int32_t)node->count;
  node->params[node->count++] = buffer_param(&conv_scalars, sizeof(conv_scalars),
                                             HPVM_RT_ACCESS_OUT);
}

/*===--- a batched product + bias + tanh, and a plain 2-D one --------------===*/

enum { MB = 3, MM = 4, MN = 5, MK = 6 };
static float mm_a[MB * MM * MK], mm_b[MB * MK * MN], mm_bias[MN], mm_out[MB * MM * MN],
    mm_ref[MB * MM * MN], plain_ref[MM * MN];

static hpvm_rt_tensor_library_call_t mm_call = {
    HPVM_RT_TENSOR_LIBRARY_MATMUL, HPVM_RT_TENSOR_LIBRARY_TANH, 0.0,
    {MB, MM, MN, MK}, {0, 0, 0}, {0, 0}, {0, 0}, 0,
    {1, MB, MM, MN}, {1, 1, 1, MN}, 0, 0, 0, 0, -1, NULL, 0};
static hpvm_rt_kernel_site_t mm_site = {"dense", "tensor_fallback", &image, NULL, NULL, &mm_call};
static hpvm_rt_tensor_library_call_t plain_call = {
    HPVM_RT_TENSOR_LIBRARY_MATMUL, HPVM_RT_TENSOR_LIBRARY_IDENTITY, 0.0,
    {1, MM, MN, MK}, {0, 0, 0}, {0, 0}, {0, 0}, 0,
    {1, 1, MM, MN}, {0, 0, 0, 0}, 0, 0, -1, 0, -1, NULL, 0};
static hpvm_rt_kernel_site_t plain_site = {"plain", "tensor_fallback", &image, NULL, NULL,
                                           &plain_call};

static void mm_reference(void) {
  for (int i = 0; i < MB * MM * MK; ++i)
    mm_a[i] = (float)((i * 29) % 17) / 8.0f - 1.0f;
  for (int i = 0; i < MB * MK * MN; ++i)
    mm_b[i] = (float)((i * 13) % 11) / 5.0f - 1.0f;
  for (int j = 0; j < MN; ++j)
    mm_bias[j] = 0.1f * (float)j - 0.2f;
  for (int b = 0; b < MB; ++b)
    for (int i = 0; i < MM; ++i)
      for (int j = 0; j < MN; ++j) {
        double sum = 0;
        for (int l = 0; l < MK; ++l)
          sum += (double)mm_a[(b * MM + i) * MK + l] * mm_b[(b * MK + l) * MN + j];
        mm_ref[(b * MM + i) * MN + j] = tanhf((float)(sum + mm_bias[j]));
        if (b == 0)
          plain_ref[i * MN + j] = (float)sum;
      }
}

static void mm_params(node_params_t *node) {
  node_begin(node);
  mm_call.x_param = node_memref(node, mm_a, 3, (const int64_t[]){MB, MM, MK}, HPVM_RT_ACCESS_IN);
  mm_call.w_param = node_memref(node, mm_b, 3, (const int64_t[]){MB, MK, MN}, HPVM_RT_ACCESS_IN);
  mm_call.bias_param = node_memref(node, mm_bias, 3, (const int64_t[]){1, 1, MN},
                                   HPVM_RT_ACCESS_IN);
  mm_call.output_param = node_memref(node, mm_out, 3, (const int64_t[]){MB, MM, MN},
                                     HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL);
  node_output(node, mm_call.output_param, MB * MM * MN);
}

static void plain_params(node_params_t *node) {
  node_begin(node);
  plain_call.x_param = node_memref(node, mm_a, 2, (const int64_t[]){MM, MK}, HPVM_RT_ACCESS_IN);
  plain_call.w_param = node_memref(node, mm_b, 2, (const int64_t[]){MK, MN}, HPVM_RT_ACCESS_IN);
  plain_call.output_param = node_memref(node, mm_out, 2, (const int64_t[]){MM, MN},
                                        HPVM_RT_ACCESS_OUT | HPVM_RT_PARAM_WRITES_ALL);
  node_output(node, plain_call.output_param, MM * MN);
}

/*===--- checks -------------------------------------------------------------===*/

static void check_close(const float *actual, const float *expected, int count) {
  for (int i = 0; i < count; ++i)
    if (fabsf(actual[i] - expected[i]) > 1e-5f * (1.0f + fabsf(expected[i]))) {
      fprintf(stderr, "element %d: %g, expected %g\n", i, actual[i], expected[i]);
      exit(1);
    }
}

static void check_fallback_output(const float *actual, int count) {
  for (int i = 0; i < count; ++i)
    CHECK(actual[i] == 42.0f);
}

/* Runs `site` with `node`'s parameters; returns the captured stderr (trace on). */
static void run_traced(hpvm_rt_kernel_site_t *site, node_params_t *node, char *text,
                       size_t size) {
  capture_t capture;
  capture_begin(&capture, true);
  CHECK_EQ_INT(run_site(site, 1, 1, 1, node->params, node->count), 1);
  capture_end(&capture, text, size);
}

/* A fresh runtime reading the library variables again. */
static void restart(const char *cudnn, const char *cublas, const char *enabled) {
  hpvm_rt_shutdown();
  setenv("HPVM_CUDNN_LIBRARY", cudnn, 1);
  setenv("HPVM_CUBLAS_LIBRARY", cublas, 1);
  if (enabled)
    setenv("HPVM_TENSOR_LIBRARIES", enabled, 1);
  else
    unsetenv("HPVM_TENSOR_LIBRARIES");
}

/*===--- the tests ----------------------------------------------------------===*/

/* With the libraries: each node is one call (no module is even loaded), exact results. */
static void test_library_calls(void) {
  restart(fake_cudnn, fake_cublas, NULL);
  long launches = cuda_launches(), loads = cuda_module_loads();
  long convolutions = cudnn_convolutions(), additions = cudnn_additions();
  long activations = cudnn_activations(), products = cublas_products();
  node_params_t node;
  char text[4096];
  conv_params(&node);
  memset(conv_out, 0, sizeof(conv_out));
  run_traced(&conv_site, &node, text, sizeof(text));
  CHECK(strcmp(text, "hpvm-trace: conv on cuda:0 (cudnn)\n") == 0);
  check_close(conv_out, conv_ref, CN * CF * OH * OW);
  CHECK_EQ_INT(conv_scalars, 0);
  CHECK_EQ_INT(cudnn_convolutions(), convolutions + 1);
  CHECK_EQ_INT(cudnn_last_algorithm(), 1); /* the first candidate without tensor-op math */

  mm_params(&node);
  run_traced(&mm_site, &node, text, sizeof(text));
  CHECK(strcmp(text, "hpvm-trace: dense on cuda:0 (cublas)\n") == 0);
  check_close(mm_out, mm_ref, MB * MM * MN);

  plain_params(&node);
  run_traced(&plain_site, &node, text, sizeof(text));
  CHECK(strcmp(text, "hpvm-trace: plain on cuda:0 (cublas)\n") == 0);
  check_close(mm_out, plain_ref, MM * MN);

  CHECK_EQ_INT(cublas_products(), products + 2);
  CHECK_EQ_INT(cudnn_additions(), additions + 2);   /* conv's and dense's bias */
  CHECK_EQ_INT(cudnn_activations(), activations + 2); /* relu, tanh */
  CHECK_EQ_INT(cuda_launches(), launches);
  CHECK_EQ_INT(cuda_module_loads(), loads);
  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device));
  CHECK_EQ_INT(hpvm_buffer_registry_count(&device->buffers), 0); /* workspace, temporaries */
}

/* Runs `site` expecting its generated kernel (42s written) and returns the stderr. */
static void run_expecting_kernel(hpvm_rt_kernel_site_t *site, void (*params)(node_params_t *),
                                 float *output, int count, char *text, size_t size) {
  node_params_t node;
  params(&node);
  long launches = cuda_launches();
  run_traced(site, &node, text, size);
  CHECK_EQ_INT(cuda_launches(), launches + 1);
  check_fallback_output(output, count);
  char line[128];
  snprintf(line, sizeof(line), "hpvm-trace: %s on cuda:0\n", site->node);
  CHECK_CONTAINS(text, line);
}

/* No library, or libraries switched off: the generated kernel, silently. A product without
 * epilogue needs no cuDNN. */
static void test_without_libraries(void) {
  char text[4096];
  restart("/nonexistent/libcudnn.so.9", fake_cublas, NULL);
  run_expecting_kernel(&conv_site, conv_params, conv_out, CN * CF * OH * OW, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0);
  /* The product's bias and tanh need cuDNN too. */
  run_expecting_kernel(&mm_site, mm_params, mm_out, MB * MM * MN, text, sizeof(text));
  node_params_t node;
  plain_params(&node);
  run_traced(&plain_site, &node, text, sizeof(text));
  CHECK(strcmp(text, "hpvm-trace: plain on cuda:0 (cublas)\n") == 0);
  check_close(mm_out, plain_ref, MM * MN);

  restart(fake_cudnn, "/nonexistent/libcublas.so.12", NULL);
  run_expecting_kernel(&plain_site, plain_params, mm_out, MM * MN, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0);

  restart(fake_cudnn, fake_cublas, "0");
  long convolutions = cudnn_convolutions();
  run_expecting_kernel(&conv_site, conv_params, conv_out, CN * CF * OH * OW, text, sizeof(text));
  run_expecting_kernel(&plain_site, plain_params, mm_out, MM * MN, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0);
  CHECK_EQ_INT(cudnn_convolutions(), convolutions);
}

/* A cuDNN lacking a required entry point: the kernel, and one warning naming it. */
static void test_incomplete_library(void) {
  char text[4096];
  restart(fake_cudnn_incomplete, fake_cublas, NULL);
  run_expecting_kernel(&conv_site, conv_params, conv_out, CN * CF * OH * OW, text, sizeof(text));
  CHECK_CONTAINS(text, "hpvm: warning: cuDNN library ");
  CHECK_CONTAINS(text, " lacks cudnnAddTensor; tensor nodes run their generated kernels instead");
  run_expecting_kernel(&mm_site, mm_params, mm_out, MB * MM * MN, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0); /* once per runtime */
}

/* A call the library refuses before it starts: the kernel runs, the node is warned about once
 * and does not call the library again. */
static void test_failing_call(void) {
  char text[4096];
  restart(fake_cudnn, fake_cublas, NULL);
  setenv("FAKE_CUDNN_FAIL", "cudnnConvolutionForward", 1);
  run_expecting_kernel(&conv_site, conv_params, conv_out, CN * CF * OH * OW, text, sizeof(text));
  CHECK_CONTAINS(text, "hpvm: warning: node 'conv': its cudnn call cannot run, so its kernel "
                       "runs instead (warned once per node): ");
  CHECK_CONTAINS(text, "cudnnConvolutionForward failed: CUDNN_STATUS_NOT_SUPPORTED (9)");
  unsetenv("FAKE_CUDNN_FAIL");
  long convolutions = cudnn_convolutions();
  run_expecting_kernel(&conv_site, conv_params, conv_out, CN * CF * OH * OW, text, sizeof(text));
  CHECK_EQ_INT(count_occurrences(text, "warning"), 0);
  CHECK_EQ_INT(cudnn_convolutions(), convolutions);

  /* The epilogue failing after the product was queued: the same. */
  setenv("FAKE_CUDNN_FAIL", "cudnnActivationForward", 1);
  run_expecting_kernel(&mm_site, mm_params, mm_out, MB * MM * MN, text, sizeof(text));
  CHECK_CONTAINS(text, "node 'dense': its cublas call cannot run");
  unsetenv("FAKE_CUDNN_FAIL");
  setenv("FAKE_CUBLAS_FAIL", "cublasSgemm_v2", 1);
  run_expecting_kernel(&plain_site, plain_params, mm_out, MM * MN, text, sizeof(text));
  CHECK_CONTAINS(text, "cublasSgemm_v2 failed: cuBLAS status 15");
  unsetenv("FAKE_CUBLAS_FAIL");
  hpvm_rt_device_t *device;
  CHECK_OK(hpvm_rt_device_get(HPVM_RT_DEVICE_CUDA, &device));
  CHECK_EQ_INT(hpvm_buffer_registry_count(&device->buffers), 0);
}

/* Parameters that do not fit the call (a compiler and runtime out of step): the kernel. */
static void test_mismatched_params(void) {
  char text[4096];
  restart(fake_cudnn, fake_cublas, NULL);
  node_params_t node;
  conv_params(&node);
  int32_t saved = conv_call.w_param;
  conv_call.w_param = 500; /* past the parameters */
  long launches = cuda_launches();
  run_traced(&conv_site, &node, text, sizeof(text));
  conv_call.w_param = saved;
  CHECK_EQ_INT(cuda_launches(), launches + 1);
  CHECK_CONTAINS(text, "node 'conv': its cudnn call cannot run");
  CHECK_CONTAINS(text, "the weights is not among the");
  /* A bias smaller than the call says. */
  restart(fake_cudnn, fake_cublas, NULL);
  mm_call.bias[2] = MM;
  run_expecting_kernel(&mm_site, mm_params, mm_out, MB * MM * MN, text, sizeof(text));
  mm_call.bias[2] = 1;
  CHECK_CONTAINS(text, "is not the bias (a buffer of 20 floats)");
}

/* Two threads: one cuDNN handle each, both calls right. */
static node_params_t thread_node; /* built before the threads start; read only */
static float thread_out[2][CN * CF * OH * OW];
static int64_t thread_scalars[2];

static void *conv_thread(void *arg) {
  float *out = arg;
  node_params_t node = thread_node;
  node.params[conv_call.output_param].host = out;
  node.params[conv_call.output_param + 1].host = out;
  node.params[conv_call.scalars_param].host = &thread_scalars[out == thread_out[0] ? 0 : 1];
  CHECK_EQ_INT(run_site(&conv_site, 1, 1, 1, node.params, node.count), 1);
  return NULL;
}

static void test_threads(void) {
  restart(fake_cudnn, fake_cublas, NULL);
  long handles = cudnn_handles_created();
  conv_params(&thread_node);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    CHECK(pthread_create(&threads[i], NULL, conv_thread, thread_out[i]) == 0);
  for (int i = 0; i < 2; ++i)
    CHECK(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < 2; ++i)
    check_close(thread_out[i], conv_ref, CN * CF * OH * OW);
  CHECK_EQ_INT(cudnn_handles_created(), handles + 2);
}

static void *symbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (!address) {
    fprintf(stderr, "missing %s\n", name);
    exit(1);
  }
  return address;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: tensor_library_test fake_cuda fake_cudnn fake_cublas "
                    "fake_cudnn_incomplete\n");
    return 2;
  }
  fake_cuda = argv[1], fake_cudnn = argv[2], fake_cublas = argv[3];
  fake_cudnn_incomplete = argv[4];
  void *cuda = dlopen(fake_cuda, RTLD_NOW), *dnn = dlopen(fake_cudnn, RTLD_NOW);
  void *blas = dlopen(fake_cublas, RTLD_NOW);
  CHECK(cuda && dnn && blas);
  *(void **)&cuda_launches = symbol(cuda, "fake_cuda_launches");
  *(void **)&cuda_module_loads = symbol(cuda, "fake_cuda_module_loads");
  *(void **)&cuda_live_objects = symbol(cuda, "fake_cuda_live_objects");
  *(void **)&cudnn_convolutions = symbol(dnn, "fake_cudnn_convolutions");
  *(void **)&cudnn_additions = symbol(dnn, "fake_cudnn_additions");
  *(void **)&cudnn_activations = symbol(dnn, "fake_cudnn_activations");
  *(void **)&cudnn_live_objects = symbol(dnn, "fake_cudnn_live_objects");
  *(void **)&cudnn_handles_created = symbol(dnn, "fake_cudnn_handles_created");
  *(void **)&cudnn_last_algorithm = symbol(dnn, "fake_cudnn_last_algorithm");
  *(void **)&cublas_products = symbol(blas, "fake_cublas_products");
  *(void **)&cublas_live_handles = symbol(blas, "fake_cublas_live_handles");
  unsetenv("HPVM_DEVICE");
  unsetenv("HPVM_TRACE");
  unsetenv("FAKE_CUDNN_FAIL");
  unsetenv("FAKE_CUBLAS_FAIL");
  setenv("HPVM_CUDA_LIBRARY", fake_cuda, 1);
  conv_reference();
  mm_reference();
  test_library_calls();
  test_without_libraries();
  test_incomplete_library();
  test_failing_call();
  test_mismatched_params();
  test_threads();
  hpvm_rt_shutdown();
  CHECK_EQ_INT(cudnn_live_objects(), 0); /* handles and descriptors */
  CHECK_EQ_INT(cublas_live_handles(), 0);
  CHECK_EQ_INT(cuda_live_objects(), 0);
  printf("tensor_library_test: OK\n");
  return 0;
}
