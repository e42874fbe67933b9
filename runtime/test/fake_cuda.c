/* fake_cuda.c - a stand-in libcuda.so.1 over host memory, so the CUDA backend and the mgpu*
 * wrappers are tested (dlopen, symbol table, error mapping, leaks) on machines without a GPU. */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The runtime's own declarations of the driver types, so that calls through its symbol table
 * match these definitions exactly (UBSan's -fsanitize=function checks this). */
#include "device/cuda/cuda_symbols.h"

#define EXPORT __attribute__((visibility("default")))

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  INVALID_PTX = 218,
  NOT_FOUND = 500,
  ILLEGAL_ADDRESS = 700,
  LAUNCH_OUT_OF_RESOURCES = 701,
  LAUNCH_FAILED = 719,
};

static _Atomic int initialized;
static _Atomic long live_objects; /* buffers + modules + streams + events */
static _Atomic long launches;
static _Atomic long module_loads;
static _Atomic long launch_calls; /* every cuLaunchKernel that got past its checks */
static _Thread_local int context_depth;
static _Thread_local CUresult pending_error; /* reported by the next synchronisation */
/* The last launch's grid and block (x, y, z each), for the tests of picked block sizes. */
static _Atomic unsigned last_launch[6];
static _Atomic unsigned last_shared; /* its dynamic shared memory bytes */
static int primary_context; /* its address is the context handle */
/* Work on the legacy default stream (NULL) runs one item at a time across all threads, as on a
 * GPU; per-thread and created streams run concurrently. */
static pthread_mutex_t legacy_stream = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local uintptr_t last_stream; /* the stream of this thread's last launch or copy */
static _Atomic int rendezvous_arrived;

EXPORT uintptr_t fake_cuda_last_stream(void) { return last_stream; }
EXPORT void fake_cuda_rendezvous_reset(void) { atomic_store(&rendezvous_arrived, 0); }

/* Runs the work of one launch or copy on `stream`. */
#define ON_STREAM(stream, work)                                                                  \
  do {                                                                                           \
    last_stream = (uintptr_t)(stream);                                                          \
    if (!(stream))                                                                               \
      pthread_mutex_lock(&legacy_stream);                                                        \
    work;                                                                                        \
    if (!(stream))                                                                               \
      pthread_mutex_unlock(&legacy_stream);                                                      \
  } while (0)

EXPORT long fake_cuda_live_objects(void) { return atomic_load(&live_objects); }
EXPORT long fake_cuda_launches(void) { return atomic_load(&launches); }
EXPORT int fake_cuda_context_depth(void) { return context_depth; }
EXPORT long fake_cuda_module_loads(void) { return atomic_load(&module_loads); }
EXPORT unsigned fake_cuda_last_shared(void) { return atomic_load(&last_shared); }
EXPORT void fake_cuda_last_launch(unsigned dims[6]) {
  for (int i = 0; i < 6; ++i)
    dims[i] = atomic_load(&last_launch[i]);
}

static int device_count(void) {
  const char *text = getenv("FAKE_CUDA_DEVICES");
  return text ? atoi(text) : 1;
}

EXPORT CUresult cuInit(unsigned flags) {
  if (flags)
    return INVALID_VALUE;
  atomic_store(&initialized, 1);
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  if (!atomic_load(&initialized))
    return NOT_INITIALIZED;
  *count = device_count();
  return SUCCESS;
}

EXPORT CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= device_count())
    return 101;
  *device = ordinal;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  strncpy(name, "Fake GPU", (size_t)length);
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, int device) {
  (void)device;
  *context = (CUcontext)&primary_context;
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  return SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  if ((void *)context != &primary_context)
    return INVALID_CONTEXT;
  ++context_depth;
  return SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  if (context_depth == 0)
    return INVALID_CONTEXT;
  --context_depth;
  if (context)
    *context = (CUcontext)&primary_context;
  return SUCCESS;
}

/* Every call that needs a context checks that the runtime made one current. */
#define NEED_CONTEXT()                                                                           \
  do {                                                                                           \
    if (context_depth == 0)                                                                      \
      return INVALID_CONTEXT;                                                                    \
  } while (0)

EXPORT CUresult cuCtxSynchronize(void) {
  NEED_CONTEXT();
  return SUCCESS;
}

static const char *error_name(CUresult result) {
  switch (result) {
  case SUCCESS: return "CUDA_SUCCESS";
  case INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
  case NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
  case INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
  case INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
  case NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
  case ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
  default: return "CUDA_ERROR_UNKNOWN";
  }
}

EXPORT CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = error_name(result);
  return SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == SUCCESS ? "no error" : "fake driver error";
  return SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) {
  NEED_CONTEXT();
  void *memory = calloc(1, size);
  if (!memory)
    return 2;
  atomic_fetch_add(&live_objects, 1);
  *pointer = (CUdeviceptr)(uintptr_t)memory;
  return SUCCESS;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t size, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(pointer, size);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  NEED_CONTEXT();
  if (!pointer)
    return INVALID_VALUE;
  atomic_fetch_sub(&live_objects, 1);
  free((void *)(uintptr_t)pointer);
  return SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t size,
                                     CUstream stream) {
  NEED_CONTEXT();
  ON_STREAM(stream, memcpy((void *)(uintptr_t)dst, src, size));
  return SUCCESS;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t size, CUstream stream) {
  NEED_CONTEXT();
  ON_STREAM(stream, memcpy(dst, (const void *)(uintptr_t)src, size));
  return SUCCESS;
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  (void)stream;
  NEED_CONTEXT();
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
  return SUCCESS;
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, CUstream stream) {
  (void)stream;
  NEED_CONTEXT();
  for (size_t i = 0; i < count; ++i)
    ((uint32_t *)(uintptr_t)dst)[i] = value;
  return SUCCESS;
}

EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                                 CUstream stream) {
  (void)stream;
  NEED_CONTEXT();
  for (size_t i = 0; i < count; ++i)
    ((uint16_t *)(uintptr_t)dst)[i] = value;
  return SUCCESS;
}

/* Images: "FAKE-CUBIN..." or PTX text starting with "// FAKE-PTX". */
typedef struct fake_module_t {
  int magic;
} fake_module_t;

static CUresult load(CUmodule *module, const void *image, const char *magic) {
  NEED_CONTEXT();
  if (!image || strncmp(image, magic, strlen(magic)) != 0)
    return magic[0] == '/' ? INVALID_PTX : INVALID_IMAGE;
  fake_module_t *loaded = malloc(sizeof(*loaded));
  loaded->magic = 42;
  atomic_fetch_add(&live_objects, 1);
  atomic_fetch_add(&module_loads, 1);
  *module = (CUmodule)loaded;
  return SUCCESS;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  return load(module, image, "FAKE-CUBIN");
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned count, int *options,
                                   void **values) {
  CUresult result = load(module, image, "// FAKE-PTX");
  for (unsigned i = 0; result != SUCCESS && i < count; ++i)
    if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */)
      strcpy(values[i], "fake ptxas: syntax error");
  return result;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  NEED_CONTEXT();
  fake_module_t *loaded = (fake_module_t *)module;
  if (!loaded || loaded->magic != 42)
    return INVALID_VALUE;
  loaded->magic = 0;
  atomic_fetch_sub(&live_objects, 1);
  free(loaded);
  return SUCCESS;
}

/* Kernels run on the host, one call per instance with its ids (as a GPU thread would). */
typedef struct fake_ids_t {
  long global[3]; /* block index * block size + thread index, per dimension */
} fake_ids_t;

typedef void (*fake_kernel_t)(void **params, const fake_ids_t *ids);

#define POINTER(type, index) ((type *)(uintptr_t) * (CUdeviceptr *)params[index])

/* c[i] = a[i] + b[i] for i < n (params: a, b, c device pointers, int n). */
static void vector_add(void **params, const fake_ids_t *ids) {
  long i = ids->global[0];
  if (i < *(int *)params[3])
    POINTER(float, 2)[i] = POINTER(float, 0)[i] + POINTER(float, 1)[i];
}

/* data[i] *= 2 for the even i < n only (params: data, long n): an "out" buffer written in
 * part, whose other elements must keep the host's values. */
static void scale_even(void **params, const fake_ids_t *ids) {
  long i = ids->global[0];
  if (i < *(long *)params[1] && i % 2 == 0)
    POINTER(float, 0)[i] *= 2.0f;
}

/* data[i] *= 3 for i < n (params: data, long n), and its 32-bit variant (the name + "__i32",
 * HPVM_RT_NARROW_KERNEL_SUFFIX), which does the same and counts its launches. */
static _Atomic long narrow_launches;
EXPORT long fake_cuda_narrow_launches(void) { return atomic_load(&narrow_launches); }
static void triple(void **params, const fake_ids_t *ids) {
  long i = ids->global[0];
  if (i < *(long *)params[1])
    POINTER(float, 0)[i] *= 3.0f;
}
static void triple_narrow(void **params, const fake_ids_t *ids) {
  if (ids->global[0] == 0 && ids->global[1] == 0 && ids->global[2] == 0)
    atomic_fetch_add(&narrow_launches, 1);
  triple(params, ids);
}

/* out[(z * ny + y) * nx + x] = x + 100 y + 10000 z inside nx x ny x nz (params: out, long nx,
 * ny, nz): the kernel guards the partial work-groups itself. */
static void fill3d(void **params, const fake_ids_t *ids) {
  long nx = *(long *)params[1], ny = *(long *)params[2], nz = *(long *)params[3];
  long x = ids->global[0], y = ids->global[1], z = ids->global[2];
  if (x < nx && y < ny && z < nz)
    POINTER(int, 0)[(z * ny + y) * nx + x] = (int)(x + 100 * y + 10000 * z);
}

/* out[0..2] = the device pointers it got (params: out, p0, p1, p2), from instance 0. */
static void pointers(void **params, const fake_ids_t *ids) {
  if (ids->global[0] == 0 && ids->global[1] == 0 && ids->global[2] == 0)
    for (int i = 0; i < 3; ++i)
      POINTER(uint64_t, 0)[i] = *(CUdeviceptr *)params[1 + i];
}

/* Writes data[0] = 1 (params: data), then fails asynchronously, as a faulting kernel does. */
static void fault(void **params, const fake_ids_t *ids) {
  if (ids->global[0] == 0)
    POINTER(float, 0)[0] = 1.0f;
  pending_error = LAUNCH_FAILED;
}

/* Waits (5 s at most) until two rendezvous kernels have started: it finishes only when the
 * launches of two threads run at the same time; otherwise it fails as a faulting kernel does. */
static void rendezvous(void **params, const fake_ids_t *ids) {
  (void)params;
  if (ids->global[0] || ids->global[1] || ids->global[2])
    return;
  atomic_fetch_add(&rendezvous_arrived, 1);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    if (atomic_load(&rendezvous_arrived) >= 2)
      return;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec - start.tv_sec < 5);
  pending_error = LAUNCH_FAILED;
}

/* The generated kernel of tensor_library_test's nodes: writes 42 to `count` floats of the buffer
 * parameter `index` (params: long index, long count, ...), from instance 0. */
static void tensor_fallback(void **params, const fake_ids_t *ids) {
  if (ids->global[0] || ids->global[1] || ids->global[2])
    return;
  long index = *(long *)params[0], count = *(long *)params[1];
  for (long i = 0; i < count; ++i)
    POINTER(float, index)[i] = 42.0f;
}

/* Never runs: the launch reports too many resources (a configuration error). */
static void no_resources(void **params, const fake_ids_t *ids) {
  (void)params;
  (void)ids;
}

static const struct {
  const char *name;
  fake_kernel_t kernel;
} kernels[] = {
    {"vector_add", vector_add}, {"scale_even", scale_even}, {"fill3d", fill3d},
    {"pointers", pointers},     {"fault", fault},           {"no_resources", no_resources},
    {"rendezvous", rendezvous}, {"tensor_fallback", tensor_fallback},
    {"triple", triple},         {"triple__i32", triple_narrow},
};

EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  NEED_CONTEXT();
  if (!module || ((fake_module_t *)module)->magic != 42)
    return INVALID_VALUE;
  for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); ++i) {
    if (strcmp(name, kernels[i].name) == 0) {
      *function = (CUfunction)(void *)kernels[i].kernel;
      return SUCCESS;
    }
  }
  return NOT_FOUND;
}

/* Every instance of a launch, one after the other. */
static void run_grid(fake_kernel_t kernel, void **params, unsigned nx, unsigned ny, unsigned nz) {
  fake_ids_t ids;
  for (unsigned z = 0; z < nz; ++z)
    for (unsigned y = 0; y < ny; ++y)
      for (unsigned x = 0; x < nx; ++x) {
        ids.global[0] = x;
        ids.global[1] = y;
        ids.global[2] = z;
        kernel(params, &ids);
      }
}

EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shared,
                               CUstream stream, void **params, void **extra) {
  (void)extra;
  NEED_CONTEXT();
  if (!function || !params || !gx || !gy || !gz || !bx || !by || !bz)
    return INVALID_VALUE;
  /* The real limits: a launch past them fails before anything runs. */
  if (gx > 2147483647u || gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 ||
      (unsigned long)bx * by * bz > 1024 || shared > 48 * 1024)
    return INVALID_VALUE;
  fake_kernel_t kernel = (fake_kernel_t)(void *)function;
  if (kernel == no_resources)
    return LAUNCH_OUT_OF_RESOURCES;
  const unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  for (int i = 0; i < 6; ++i)
    atomic_store(&last_launch[i], dims[i]);
  atomic_store(&last_shared, shared);
  ON_STREAM(stream, run_grid(kernel, params, gx * bx, gy * by, gz * bz));
  atomic_fetch_add(&launches, 1);
  /* FAKE_CUDA_FAIL_LAUNCH=N (tests only): the Nth launch of the process runs, then reports an
   * illegal address at the next synchronisation, as a kernel that faulted half-way does (its
   * writes to device memory stay). */
  const char *fail = getenv("FAKE_CUDA_FAIL_LAUNCH");
  if (atomic_fetch_add(&launch_calls, 1) + 1 == (fail ? atol(fail) : 0))
    pending_error = ILLEGAL_ADDRESS;
  return SUCCESS;
}

EXPORT CUresult cuLaunchKernelEx(const hpvm_cu_launch_config_t *config, CUfunction function,
                                 void **params, void **extra) {
  if (!config || config->attribute_count != 1)
    return INVALID_VALUE;
  return cuLaunchKernel(function, config->grid_x, config->grid_y, config->grid_z,
                        config->block_x, config->block_y, config->block_z,
                        config->shared_memory_bytes, config->stream, params, extra);
}

static CUresult make_token(void **token) {
  NEED_CONTEXT();
  *token = malloc(16);
  atomic_fetch_add(&live_objects, 1);
  return SUCCESS;
}

static CUresult drop_token(void *token) {
  if (!token)
    return INVALID_VALUE;
  atomic_fetch_sub(&live_objects, 1);
  free(token);
  return SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  (void)flags;
  return make_token((void **)stream);
}
EXPORT CUresult cuStreamDestroy_v2(CUstream stream) { return drop_token(stream); }
EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  (void)stream;
  NEED_CONTEXT();
  CUresult error = pending_error;
  pending_error = SUCCESS;
  return error;
}
EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  (void)stream;
  (void)flags;
  return event ? SUCCESS : INVALID_VALUE;
}
EXPORT CUresult cuEventCreate(CUevent *event, unsigned flags) {
  (void)flags;
  return make_token((void **)event);
}
EXPORT CUresult cuEventDestroy_v2(CUevent event) { return drop_token(event); }
EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  (void)stream;
  return event ? SUCCESS : INVALID_VALUE;
}
EXPORT CUresult cuEventSynchronize(CUevent event) { return event ? SUCCESS : INVALID_VALUE; }
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int device) {
  (void)device;
  *bytes = 1u << 30;
  return SUCCESS;
}
