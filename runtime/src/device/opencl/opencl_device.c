/* opencl_device.c - OpenCL backend over a dlopen'ed ICD loader (PoCL, GPU drivers, ...). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "device/opencl/spirv_scalar_nulls.h"
#include <unistd.h>

#include "base/platform.h"
#include "device/device.h"
#include "device/opencl/opencl_device.h"
#include "device/opencl/opencl_symbols.h"

extern char **environ;

typedef struct opencl_device_t {
  hpvm_device_t base;
  hpvm_opencl_symbols_t cl;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue; /* in-order; OpenCL queues are thread-safe */
  size_t base_align;      /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: sub-buffer origins */
} opencl_device_t;

typedef struct opencl_kernel_t {
  hpvm_device_kernel_t base;
  struct opencl_kernel_t *next;
  char *name;
  cl_kernel kernel;
  /* clSetKernelArg + enqueue must be atomic per kernel object; the lock is per kernel so
   * unrelated launches never wait for each other. */
  pthread_mutex_t mutex;
} opencl_kernel_t;

typedef struct opencl_module_t {
  hpvm_device_module_t base;
  cl_program program;
  pthread_mutex_t mutex; /* guards the kernel list */
  opencl_kernel_t *kernels;
} opencl_module_t;

static const char *cl_error_name(cl_int error) {
  switch (error) {
  case 0: return "CL_SUCCESS";
  case -1: return "CL_DEVICE_NOT_FOUND";
  case -2: return "CL_DEVICE_NOT_AVAILABLE";
  case -3: return "CL_COMPILER_NOT_AVAILABLE";
  case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case -5: return "CL_OUT_OF_RESOURCES";
  case -6: return "CL_OUT_OF_HOST_MEMORY";
  case -11: return "CL_BUILD_PROGRAM_FAILURE";
  case -30: return "CL_INVALID_VALUE";
  case -33: return "CL_INVALID_DEVICE";
  case -34: return "CL_INVALID_CONTEXT";
  case -38: return "CL_INVALID_MEM_OBJECT";
  case -42: return "CL_INVALID_BINARY";
  case -43: return "CL_INVALID_BUILD_OPTIONS";
  case -44: return "CL_INVALID_PROGRAM";
  case -46: return "CL_INVALID_KERNEL_NAME";
  case -48: return "CL_INVALID_KERNEL";
  case -49: return "CL_INVALID_ARG_INDEX";
  case -50: return "CL_INVALID_ARG_VALUE";
  case -51: return "CL_INVALID_ARG_SIZE";
  case -52: return "CL_INVALID_KERNEL_ARGS";
  case -53: return "CL_INVALID_WORK_DIMENSION";
  case -54: return "CL_INVALID_WORK_GROUP_SIZE";
  case -59: return "CL_INVALID_OPERATION";
  case -61: return "CL_INVALID_BUFFER_SIZE";
  case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "CL_UNKNOWN_ERROR";
  }
}

/* Converts a cl_int at the boundary: the rest of the runtime only sees statuses. */
static hpvm_status_t cl_status(cl_int error, const char *what) {
  if (error == HPVM_CL_SUCCESS)
    return NULL;
  hpvm_status_code_t code;
  switch (error) {
  case HPVM_CL_MEM_OBJECT_ALLOCATION_FAILURE:
  case HPVM_CL_OUT_OF_RESOURCES:
  case HPVM_CL_OUT_OF_HOST_MEMORY:
    code = HPVM_STATUS_RESOURCE_EXHAUSTED;
    break;
  case HPVM_CL_DEVICE_NOT_FOUND:
  case HPVM_CL_PLATFORM_NOT_FOUND_KHR:
    code = HPVM_STATUS_UNAVAILABLE;
    break;
  case HPVM_CL_INVALID_KERNEL_NAME:
    code = HPVM_STATUS_NOT_FOUND;
    break;
  default:
    code = error <= -30 && error >= -70 ? HPVM_STATUS_INVALID_ARGUMENT : HPVM_STATUS_UNKNOWN;
    break;
  }
  return hpvm_status_create(code, "%s failed: %s (%d)", what, cl_error_name(error), (int)error);
}

/*===--- buffers ----------------------------------------------------------===*/

static hpvm_status_t cl_buffer_alloc(hpvm_device_t *base, size_t size, uint64_t *out_handle) {
  opencl_device_t *device = (opencl_device_t *)base;
  cl_int error = 0;
  cl_mem memory = device->cl.clCreateBuffer(device->context, HPVM_CL_MEM_READ_WRITE,
                                            size ? size : 1, NULL, &error);
  if (!memory || error)
    return cl_status(error ? error : HPVM_CL_OUT_OF_RESOURCES, "clCreateBuffer");
  *out_handle = (uint64_t)(uintptr_t)memory;
  return NULL;
}

static hpvm_status_t cl_buffer_free(hpvm_device_t *base, uint64_t handle) {
  opencl_device_t *device = (opencl_device_t *)base;
  return cl_status(device->cl.clReleaseMemObject((cl_mem)(uintptr_t)handle), "clReleaseMemObject");
}

static hpvm_status_t cl_copy_to_device(hpvm_device_t *base, uint64_t dst, size_t dst_offset,
                                       const void *src, size_t size) {
  opencl_device_t *device = (opencl_device_t *)base;
  if (!size)
    return NULL;
  return cl_status(device->cl.clEnqueueWriteBuffer(device->queue, (cl_mem)(uintptr_t)dst,
                                                   HPVM_CL_TRUE, dst_offset, size, src, 0, NULL,
                                                   NULL),
                   "clEnqueueWriteBuffer");
}

static hpvm_status_t cl_copy_to_host(hpvm_device_t *base, void *dst, uint64_t src,
                                     size_t src_offset, size_t size) {
  opencl_device_t *device = (opencl_device_t *)base;
  if (!size)
    return NULL;
  return cl_status(device->cl.clEnqueueReadBuffer(device->queue, (cl_mem)(uintptr_t)src,
                                                  HPVM_CL_TRUE, src_offset, size, dst, 0, NULL,
                                                  NULL),
                   "clEnqueueReadBuffer");
}

/*===--- programs ---------------------------------------------------------===*/

static hpvm_status_t build_program(opencl_device_t *device, cl_program program,
                                   const char *options, const char *what) {
  cl_int error = device->cl.clBuildProgram(program, 1, &device->device, options, NULL, NULL);
  if (error == HPVM_CL_SUCCESS)
    return NULL;
  char log[4096] = "";
  size_t length = 0;
  device->cl.clGetProgramBuildInfo(program, device->device, HPVM_CL_PROGRAM_BUILD_LOG,
                                   sizeof(log) - 1, log, &length);
  log[sizeof(log) - 1] = '\0';
  hpvm_status_t status = cl_status(error, what);
  return hpvm_status_annotate(status, "build log: %.3000s", log);
}

static hpvm_status_t program_from_binary(opencl_device_t *device, const void *data, size_t size,
                                         cl_program *out_program) {
  const unsigned char *binary = data;
  cl_int binary_status = 0, error = 0;
  cl_program program = device->cl.clCreateProgramWithBinary(device->context, 1, &device->device,
                                                            &size, &binary, &binary_status, &error);
  if (!program || error || binary_status) {
    if (program)
      device->cl.clReleaseProgram(program);
    return cl_status(error ? error : binary_status, "clCreateProgramWithBinary (SPIR 1.2)");
  }
  hpvm_status_t status = build_program(device, program, "-x spir -spir-std=1.2",
                                       "clBuildProgram (SPIR 1.2)");
  if (status) {
    device->cl.clReleaseProgram(program);
    return status;
  }
  *out_program = program;
  return NULL;
}

static hpvm_status_t write_file(const char *path, const void *data, size_t size) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return HPVM_STATUS(UNAVAILABLE, "cannot write '%s'", path);
  const char *bytes = data;
  while (size) {
    ssize_t written = write(fd, bytes, size);
    if (written <= 0) {
      close(fd);
      return HPVM_STATUS(UNAVAILABLE, "cannot write '%s'", path);
    }
    bytes += written;
    size -= (size_t)written;
  }
  close(fd);
  return NULL;
}

static hpvm_status_t read_file(hpvm_allocator_t allocator, const char *path, void **out_data,
                               size_t *out_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0 || info.st_size <= 0) {
    if (fd >= 0)
      close(fd);
    return HPVM_STATUS(UNAVAILABLE, "translator produced no output in '%s'", path);
  }
  size_t size = (size_t)info.st_size;
  char *data = NULL;
  hpvm_status_t status = hpvm_allocator_malloc(allocator, size, (void **)&data);
  size_t done = 0;
  while (!status && done < size) {
    ssize_t got = read(fd, data + done, size - done);
    if (got <= 0)
      status = HPVM_STATUS(UNAVAILABLE, "cannot read '%s'", path);
    else
      done += (size_t)got;
  }
  close(fd);
  if (status) {
    hpvm_allocator_free(allocator, data);
    return status;
  }
  *out_data = data;
  *out_size = size;
  return NULL;
}

/* Runs `translator -r in.spv -o out.bc`; true on exit status 0. */
static bool run_translator(const char *translator, const char *input, const char *output) {
  /* posix_spawn takes char *const[] but never writes the strings. */
  char reverse[] = "-r", to[] = "-o";
  char *argv[] = {(char *)(uintptr_t)translator, reverse, (char *)(uintptr_t)input, to,
                  (char *)(uintptr_t)output, NULL};
  pid_t pid;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  /* Keep the translator's diagnostics out of the program's output. */
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  int error = posix_spawnp(&pid, translator, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error)
    return false;
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
  }
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

/* A copy of the module with the OpConstantNull of scalars as plain constants
 * (spirv_scalar_nulls.h), which llvm-spirv 15 needs. */
static hpvm_status_t spirv_scalar_nulls_to_constants(hpvm_allocator_t allocator, const void *spirv,
                                                     size_t size, void **out_data,
                                                     size_t *out_size) {
  size_t count = size / 4;
  uint32_t *in = NULL, *out = NULL;
  uint8_t *scratch = NULL;
  size_t capacity;
  hpvm_status_t status = hpvm_allocator_calloc_array(allocator, count ? count : 1, 4, (void **)&in);
  if (!status && !hpvm_size_mul(count, 2, &capacity))
    status = HPVM_STATUS(INVALID_ARGUMENT, "SPIR-V module too large");
  if (!status) /* a 3-word OpConstantNull becomes at most 5 words */
    status = hpvm_allocator_calloc_array(allocator, capacity + 1, 4, (void **)&out);
  if (status) {
    hpvm_allocator_free(allocator, in);
    return status;
  }
  memcpy(in, spirv, count * 4);
  size_t bound = hpvm_spirv_id_bound(in, count);
  if (bound > (1u << 24))
    bound = 0; /* implausible: copied unchanged */
  if (bound)
    status = hpvm_allocator_calloc(allocator, bound, (void **)&scratch);
  size_t length = status ? 0 : hpvm_spirv_scalar_nulls_rewrite(in, count, out, scratch, bound);
  hpvm_allocator_free(allocator, scratch);
  hpvm_allocator_free(allocator, in);
  if (status) {
    hpvm_allocator_free(allocator, out);
    return status;
  }
  *out_data = out;
  *out_size = length * 4;
  return NULL;
}

/* The device has no IL support and the image came without SPIR bitcode: translate SPIR-V to
 * SPIR 1.2 with llvm-spirv (the path PoCL needs). */
static hpvm_status_t translate_spirv(hpvm_allocator_t allocator, const void *spirv, size_t size,
                                     void **out_bitcode, size_t *out_size) {
  const char *directory = getenv("TMPDIR");
  if (!directory || !*directory)
    directory = "/tmp";
  char input[4000], output[4096];
  snprintf(input, sizeof(input), "%s/hpvm-spirv-XXXXXX", directory);
  int fd = mkstemp(input);
  if (fd < 0)
    return HPVM_STATUS(UNAVAILABLE, "cannot create a temporary file in '%s'", directory);
  close(fd);
  snprintf(output, sizeof(output), "%s.bc", input);
  int out_fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out_fd < 0) {
    unlink(input);
    return HPVM_STATUS(UNAVAILABLE, "cannot create '%s'", output);
  }
  close(out_fd);
  void *patched = NULL;
  size_t patched_size = 0;
  hpvm_status_t status =
      spirv_scalar_nulls_to_constants(allocator, spirv, size, &patched, &patched_size);
  if (!status)
    status = write_file(input, patched, patched_size);
  hpvm_allocator_free(allocator, patched);
  if (!status) {
    const char *configured = getenv("HPVM_LLVM_SPIRV");
    const char *candidates[] = {configured, "llvm-spirv-15", "llvm-spirv"};
    bool translated = false;
    for (size_t i = 0; i < 3 && !translated; ++i)
      if (candidates[i] && *candidates[i])
        translated = run_translator(candidates[i], input, output);
    if (!translated)
      status = HPVM_STATUS(UNAVAILABLE,
                           "the OpenCL device cannot load SPIR-V (no cl_khr_il_program), the image "
                           "has no SPIR 1.2 fallback and no translator ran (set HPVM_LLVM_SPIRV or "
                           "install llvm-spirv-15)");
    else
      status = read_file(allocator, output, out_bitcode, out_size);
  }
  unlink(input);
  unlink(output);
  return status;
}

static hpvm_status_t cl_module_load(hpvm_device_t *base, const hpvm_rt_module_image_t *image,
                                    hpvm_device_module_t **out_module) {
  opencl_device_t *device = (opencl_device_t *)base;
  *out_module = NULL;
  if (image->format != HPVM_RT_IMAGE_SPIRV && image->format != HPVM_RT_IMAGE_SPIR_BITCODE)
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "the OpenCL device loads SPIR-V or SPIR 1.2 bitcode, not image format %d",
                       (int)image->format);
  cl_program program = NULL;
  hpvm_status_t status = NULL;
  if (image->format == HPVM_RT_IMAGE_SPIR_BITCODE) {
    status = program_from_binary(device, image->data, image->size, &program);
  } else {
    /* IL first: it is the portable path; drivers without cl_khr_il_program fail here. */
    hpvm_status_t il_status = NULL;
    if (device->cl.clCreateProgramWithIL) {
      cl_int error = 0;
      program = device->cl.clCreateProgramWithIL(device->context, image->data, image->size, &error);
      if (program && !error) {
        il_status = build_program(device, program, "", "clBuildProgram (SPIR-V)");
        if (il_status) {
          device->cl.clReleaseProgram(program);
          program = NULL;
        }
      } else {
        if (program)
          device->cl.clReleaseProgram(program);
        program = NULL;
        il_status = cl_status(error ? error : HPVM_CL_INVALID_VALUE, "clCreateProgramWithIL");
      }
    } else {
      il_status = HPVM_STATUS(UNAVAILABLE, "the ICD loader has no clCreateProgramWithIL");
    }
    if (!program) {
      if (image->fallback_data && image->fallback_size) {
        status = program_from_binary(device, image->fallback_data, image->fallback_size, &program);
      } else {
        void *bitcode = NULL;
        size_t bitcode_size = 0;
        status = translate_spirv(base->allocator, image->data, image->size, &bitcode,
                                 &bitcode_size);
        if (!status)
          status = program_from_binary(device, bitcode, bitcode_size, &program);
        hpvm_allocator_free(base->allocator, bitcode);
      }
      if (status)
        status = hpvm_status_annotate(status, "SPIR-V as IL failed (%s); SPIR 1.2 fallback",
                                      hpvm_status_message(il_status));
    }
    hpvm_status_free(il_status);
  }
  if (status)
    return status;
  opencl_module_t *module;
  status = hpvm_allocator_calloc(base->allocator, sizeof(*module), (void **)&module);
  if (status) {
    device->cl.clReleaseProgram(program);
    return status;
  }
  module->base.device = base;
  module->program = program;
  pthread_mutex_init(&module->mutex, NULL);
  *out_module = &module->base;
  return NULL;
}

static void cl_module_unload(hpvm_device_module_t *base) {
  opencl_module_t *module = (opencl_module_t *)base;
  opencl_device_t *device = (opencl_device_t *)base->device;
  for (opencl_kernel_t *kernel = module->kernels; kernel;) {
    opencl_kernel_t *next = kernel->next;
    device->cl.clReleaseKernel(kernel->kernel);
    pthread_mutex_destroy(&kernel->mutex);
    hpvm_allocator_free(device->base.allocator, kernel->name);
    hpvm_allocator_free(device->base.allocator, kernel);
    kernel = next;
  }
  device->cl.clReleaseProgram(module->program);
  pthread_mutex_destroy(&module->mutex);
  hpvm_allocator_free(device->base.allocator, module);
}

static hpvm_status_t cl_kernel_get(hpvm_device_module_t *base, const char *name,
                                   hpvm_device_kernel_t **out_kernel) {
  opencl_module_t *module = (opencl_module_t *)base;
  opencl_device_t *device = (opencl_device_t *)base->device;
  hpvm_allocator_t allocator = device->base.allocator;
  *out_kernel = NULL;
  pthread_mutex_lock(&module->mutex);
  for (opencl_kernel_t *kernel = module->kernels; kernel; kernel = kernel->next) {
    if (strcmp(kernel->name, name) == 0) {
      *out_kernel = &kernel->base;
      pthread_mutex_unlock(&module->mutex);
      return NULL;
    }
  }
  cl_int error = 0;
  cl_kernel handle = device->cl.clCreateKernel(module->program, name, &error);
  hpvm_status_t status = NULL;
  if (!handle || error)
    status = hpvm_status_annotate(cl_status(error ? error : HPVM_CL_INVALID_KERNEL_NAME,
                                            "clCreateKernel"),
                                  "kernel '%s'", name);
  opencl_kernel_t *kernel = NULL;
  if (!status)
    status = hpvm_allocator_calloc(allocator, sizeof(*kernel), (void **)&kernel);
  if (!status)
    status = hpvm_allocator_strdup(allocator, name, &kernel->name);
  if (status) {
    if (handle)
      device->cl.clReleaseKernel(handle);
    hpvm_allocator_free(allocator, kernel);
    pthread_mutex_unlock(&module->mutex);
    return status;
  }
  kernel->base.module = base;
  kernel->kernel = handle;
  pthread_mutex_init(&kernel->mutex, NULL);
  kernel->next = module->kernels;
  module->kernels = kernel;
  pthread_mutex_unlock(&module->mutex);
  *out_kernel = &kernel->base;
  return NULL;
}

static hpvm_status_t cl_kernel_launch(hpvm_device_kernel_t *base, const hpvm_rt_launch_dims_t *dims,
                                      const hpvm_rt_kernel_arg_t *args, uint32_t arg_count,
                                      bool *out_started) {
  opencl_kernel_t *kernel = (opencl_kernel_t *)base;
  opencl_device_t *device = (opencl_device_t *)base->module->device;
  size_t global[3], local[3];
  for (int d = 0; d < 3; ++d) {
    local[d] = dims->block[d] ? dims->block[d] : 1;
    size_t groups = dims->grid[d] ? dims->grid[d] : 1;
    if (!hpvm_size_mul(groups, local[d], &global[d]))
      return HPVM_STATUS(INVALID_ARGUMENT, "global work size overflows in dimension %d", d);
  }
  hpvm_status_t status = NULL;
  pthread_mutex_lock(&kernel->mutex);
  for (uint32_t i = 0; i < arg_count && !status; ++i)
    status = hpvm_status_annotate(
        cl_status(device->cl.clSetKernelArg(kernel->kernel, i, args[i].size, args[i].value),
                  "clSetKernelArg"),
        "argument %u", i);
  if (!status)
    status = cl_status(device->cl.clEnqueueNDRangeKernel(device->queue, kernel->kernel, 3, NULL,
                                                         global, local, 0, NULL, NULL),
                       "clEnqueueNDRangeKernel");
  /* Argument and work-size errors come from clSetKernelArg / the enqueue, before anything
   * ran; errors of the kernel itself come from clFinish. */
  *out_started = status == NULL;
  pthread_mutex_unlock(&kernel->mutex);
  if (!status)
    status = cl_status(device->cl.clFinish(device->queue), "clFinish");
  return status;
}

static hpvm_status_t cl_synchronize(hpvm_device_t *base) {
  opencl_device_t *device = (opencl_device_t *)base;
  return cl_status(device->cl.clFinish(device->queue), "clFinish");
}

static void cl_destroy(hpvm_device_t *base) {
  opencl_device_t *device = (opencl_device_t *)base;
  if (device->queue)
    device->cl.clReleaseCommandQueue(device->queue);
  if (device->context)
    device->cl.clReleaseContext(device->context);
  /* The ICD library stays loaded: vendor drivers register atexit handlers and thread-local
   * destructors that must not outlive their code. */
  hpvm_allocator_free(base->allocator, device);
}

static const hpvm_device_vtable_t opencl_vtable = {
    cl_destroy,     cl_buffer_alloc, cl_buffer_free,   cl_copy_to_device, cl_copy_to_host,
    cl_module_load, cl_module_unload, cl_kernel_get, cl_kernel_launch,  cl_synchronize,
};

bool hpvm_opencl_device_is(const hpvm_device_t *device) {
  return device && device->vtable == &opencl_vtable;
}

size_t hpvm_opencl_device_base_align(const hpvm_device_t *device) {
  return ((const opencl_device_t *)device)->base_align;
}

hpvm_status_t hpvm_opencl_sub_buffer_create(hpvm_device_t *base, uint64_t parent, size_t offset,
                                            size_t size, uint64_t *out_handle) {
  opencl_device_t *device = (opencl_device_t *)base;
  if (!device->cl.clCreateSubBuffer)
    return HPVM_STATUS(UNIMPLEMENTED, "the OpenCL library has no clCreateSubBuffer");
  if (offset % device->base_align != 0)
    return HPVM_STATUS(INVALID_ARGUMENT,
                       "sub-buffer origin %zu is not a multiple of the base address alignment "
                       "of '%s' (%zu bytes)",
                       offset, base->name, device->base_align);
  hpvm_cl_buffer_region_t region = {offset, size};
  cl_int error = 0;
  cl_mem memory = device->cl.clCreateSubBuffer((cl_mem)(uintptr_t)parent, 0,
                                               HPVM_CL_BUFFER_CREATE_TYPE_REGION, &region, &error);
  if (!memory || error)
    return cl_status(error ? error : HPVM_CL_OUT_OF_RESOURCES, "clCreateSubBuffer");
  *out_handle = (uint64_t)(uintptr_t)memory;
  return NULL;
}

void hpvm_opencl_sub_buffer_release(hpvm_device_t *base, uint64_t handle) {
  opencl_device_t *device = (opencl_device_t *)base;
  if (handle)
    device->cl.clReleaseMemObject((cl_mem)(uintptr_t)handle);
}

static hpvm_status_t load_symbols(hpvm_opencl_symbols_t *cl) {
  const char *path;
  static const char *const names[] = {"libOpenCL.so.1", NULL};
  HPVM_RETURN_IF_ERROR(
      hpvm_device_open_driver("HPVM_OPENCL_LIBRARY", names, "OpenCL", &cl->library, &path));
#define HPVM_OPENCL_LOAD(name, required, result, params)                                        \
  *(void **)&cl->name = dlsym(cl->library, #name);                                              \
  if ((required) && !cl->name)                                                                  \
    return HPVM_STATUS(UNAVAILABLE, "OpenCL library %s lacks %s", path, #name);
  HPVM_OPENCL_SYMBOLS(HPVM_OPENCL_LOAD)
#undef HPVM_OPENCL_LOAD
  return NULL;
}

hpvm_status_t hpvm_opencl_device_create(hpvm_allocator_t allocator, hpvm_device_t **out_device) {
  *out_device = NULL;
  /* HPVM_OPENCL_DEVICE=n picks the n-th device over all platforms (default 0; at most 16
   * platforms of 16 devices are listed). Read first: a bad value is an error with or without
   * OpenCL. */
  uint64_t wanted = 0;
  bool given;
  HPVM_RETURN_IF_ERROR(
      hpvm_platform_env_integer("HPVM_OPENCL_DEVICE", 0, 255, &wanted, &given));
  hpvm_opencl_symbols_t cl;
  memset(&cl, 0, sizeof(cl));
  HPVM_RETURN_IF_ERROR(load_symbols(&cl));
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  cl_int error = cl.clGetPlatformIDs(16, platforms, &platform_count);
  if (error || platform_count == 0)
    return HPVM_STATUS(UNAVAILABLE, "OpenCL is not available: no platform (%s)",
                       cl_error_name(error));
  if (platform_count > 16)
    platform_count = 16;
  uint64_t index = 0;
  cl_platform_id platform = NULL;
  cl_device_id chosen = NULL;
  for (cl_uint p = 0; p < platform_count && !chosen; ++p) {
    cl_device_id devices[16];
    cl_uint device_count = 0;
    if (cl.clGetDeviceIDs(platforms[p], HPVM_CL_DEVICE_TYPE_ALL, 16, devices, &device_count))
      continue;
    for (cl_uint d = 0; d < device_count && d < 16 && !chosen; ++d, ++index) {
      if (index == wanted) {
        platform = platforms[p];
        chosen = devices[d];
      }
    }
  }
  if (!chosen)
    return HPVM_STATUS(UNAVAILABLE, "OpenCL is not available: no device #%llu on %u platform(s)",
                       (unsigned long long)wanted, platform_count);
  opencl_device_t *device;
  HPVM_RETURN_IF_ERROR(hpvm_allocator_calloc(allocator, sizeof(*device), (void **)&device));
  device->cl = cl;
  device->platform = platform;
  device->device = chosen;
  char device_name[96] = "";
  cl.clGetDeviceInfo(chosen, HPVM_CL_DEVICE_NAME, sizeof(device_name) - 1, device_name, NULL);
  char name[128];
  snprintf(name, sizeof(name), "opencl:%s", device_name);
  hpvm_device_initialize(&device->base, &opencl_vtable, HPVM_RT_DEVICE_OPENCL, allocator, name, 1);
  cl_uint align_bits = 0;
  if (cl.clGetDeviceInfo(chosen, HPVM_CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits),
                         &align_bits, NULL) != HPVM_CL_SUCCESS ||
      align_bits < 8)
    align_bits = 1024; /* the largest value of the OpenCL 1.2 full profile (a long16) */
  device->base_align = align_bits / 8;
  cl_context_properties properties[] = {HPVM_CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                        0};
  device->context = cl.clCreateContext(properties, 1, &chosen, NULL, NULL, &error);
  hpvm_status_t status = NULL;
  if (!device->context || error)
    status = cl_status(error ? error : HPVM_CL_OUT_OF_RESOURCES, "clCreateContext");
  if (!status) {
    device->queue = cl.clCreateCommandQueue(device->context, chosen, 0, &error);
    if (!device->queue || error)
      status = cl_status(error ? error : HPVM_CL_OUT_OF_RESOURCES, "clCreateCommandQueue");
  }
  if (status) {
    cl_destroy(&device->base);
    return status;
  }
  *out_device = &device->base;
  return NULL;
}
