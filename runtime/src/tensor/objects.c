/* objects.c - ApproxHPVM's tensor objects and host API (approxhpvm/tensorUtils.h).
 *
 * A tensor object is a struct Tensor followed by its sizes, with its data in one aligned
 * allocation. Every live object is in a registry (an open-addressing set of pointers), so that
 * a launch can tell a tensor object from a plain data pointer without reading through it
 * (hpvm_rt_tensor_input). Objects made while memory is tracked are listed for the next
 * freeBatchMemory. The file readers check the file's size against what they read. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/status.h"
#include "hpvm/approxhpvm/tensorUtils.h"
#include "hpvm/hpvm_rt.h"

enum { kMaxRank = 8, kAlignment = 64 };

typedef struct tensor_object_s {
  struct Tensor tensor; /* first: the handle is the object */
  size_t sizes[kMaxRank];
  struct tensor_object_s *next_tracked;
} tensor_object_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/*===--- The registry of live objects --------------------------------------===*/

static tensor_object_t **slots; /* NULL = empty, kTombstone = deleted */
static size_t capacity, used;   /* used counts live entries and tombstones */
static tensor_object_t *const kTombstone = (tensor_object_t *)1;

static size_t slot_of(const void *pointer) {
  uint64_t h = (uint64_t)(uintptr_t)pointer;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (capacity - 1);
}

/* Caller holds `lock`. False when out of memory. */
static bool registry_insert(tensor_object_t *object) {
  if ((used + 1) * 2 > capacity) {
    size_t old_capacity = capacity;
    tensor_object_t **old = slots;
    size_t new_capacity = capacity ? capacity * 2 : 64;
    tensor_object_t **fresh = calloc(new_capacity, sizeof *fresh);
    if (!fresh)
      return false;
    slots = fresh;
    capacity = new_capacity;
    used = 0;
    for (size_t i = 0; i < old_capacity; ++i)
      if (old[i] && old[i] != kTombstone) {
        size_t s = slot_of(old[i]);
        while (slots[s])
          s = (s + 1) & (capacity - 1);
        slots[s] = old[i];
        ++used;
      }
    free(old);
  }
  size_t s = slot_of(object);
  while (slots[s] && slots[s] != kTombstone)
    s = (s + 1) & (capacity - 1);
  if (!slots[s])
    ++used;
  slots[s] = object;
  return true;
}

/* Caller holds `lock`. The slot of `pointer`, or SIZE_MAX. */
static size_t registry_find(const void *pointer) {
  if (!capacity)
    return SIZE_MAX;
  for (size_t s = slot_of(pointer), probes = 0; slots[s] && probes < capacity;
       s = (s + 1) & (capacity - 1), ++probes)
    if (slots[s] == pointer)
      return s;
  return SIZE_MAX;
}

/*===--- Batches ----------------------------------------------------------===*/

static bool tracking;
static tensor_object_t *tracked;

/*===--- Errors -----------------------------------------------------------===*/

static void fail(const char *where, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

static void fail(const char *where, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  hpvm_rt_check_at(hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT, "%s", message), where);
  exit(1); /* hpvm_rt_check_at does not return with an error */
}

static const char *shape_text(char *buffer, size_t size, int rank, const size_t *sizes) {
  size_t n = 0;
  buffer[0] = '\0';
  for (int d = 0; d < rank && n < size; ++d)
    n += (size_t)snprintf(buffer + n, size - n, d ? "x%zu" : "%zu", sizes[d]);
  return buffer;
}

/*===--- Objects ----------------------------------------------------------===*/

static tensor_object_t *object_create(const char *where, int data_type, int data_format,
                                      int rank, const size_t *sizes) {
  if (data_type != float_type)
    fail(where, "data type %d is not supported; expected %d (float_type: float32)", data_type,
         (int)float_type);
  if (rank < 1 || rank > kMaxRank)
    fail(where, "rank %d is not supported; expected 1 to %d", rank, (int)kMaxRank);
  size_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0 || sizes[d] > ((size_t)1 << 40) ||
        elements > (SIZE_MAX / 8) / sizes[d]) {
      char text[256];
      fail(where, "tensor sizes %s: expected sizes from 1 with fewer than 2^61 bytes in all",
           shape_text(text, sizeof text, rank, sizes));
    }
    elements *= sizes[d];
  }
  tensor_object_t *object = calloc(1, sizeof *object);
  size_t bytes = elements * sizeof(float);
  void *data = NULL;
  if (!object || posix_memalign(&data, kAlignment, bytes ? bytes : kAlignment) != 0) {
    free(object);
    fail(where, "out of memory for a tensor of %zu bytes", bytes);
  }
  object->tensor.data_type = data_type;
  object->tensor.cur_type = data_type;
  object->tensor.data_format = data_format;
  object->tensor.data_placement = HOST;
  object->tensor.host_data = data;
  object->tensor.num_elems = elements;
  object->tensor.size_in_bytes = bytes;
  object->tensor.dims.num_dims = rank;
  object->tensor.dims.dim_sizes = object->sizes;
  memcpy(object->sizes, sizes, (size_t)rank * sizeof *sizes);
  pthread_mutex_lock(&lock);
  bool ok = registry_insert(object);
  if (ok && tracking) {
    object->next_tracked = tracked;
    tracked = object;
  }
  pthread_mutex_unlock(&lock);
  if (!ok) {
    free(data);
    free(object);
    fail(where, "out of memory for the registry of tensor objects");
  }
  return object;
}

/* The object `pointer` is, or NULL (a plain pointer, or a freed object). */
static tensor_object_t *object_lookup(const void *pointer) {
  pthread_mutex_lock(&lock);
  size_t s = registry_find(pointer);
  tensor_object_t *object = s == SIZE_MAX ? NULL : slots[s];
  pthread_mutex_unlock(&lock);
  return object;
}

static tensor_object_t *object_expect(const char *where, void *pointer) {
  tensor_object_t *object = object_lookup(pointer);
  if (!object)
    fail(where, "%p is not a tensor object (made by create4DTensor, readTrainedWeights, "
                "readInputBatch or a graph's output, and not freed)",
         pointer);
  return object;
}

/* Caller holds `lock`; the object is in the registry. */
static void object_destroy_locked(tensor_object_t *object) {
  size_t s = registry_find(object);
  if (s != SIZE_MAX)
    slots[s] = kTombstone;
  free(object->tensor.host_data);
  free(object);
}

void *create4DTensor(int data_type, int data_format, size_t dim1_size, size_t dim2_size,
                     size_t dim3_size, size_t dim4_size) {
  size_t sizes[4] = {dim1_size, dim2_size, dim3_size, dim4_size};
  return object_create("create4DTensor", data_type, data_format, 4, sizes);
}

void *create3DTensor(int data_type, size_t dim1_size, size_t dim2_size, size_t dim3_size) {
  size_t sizes[3] = {dim1_size, dim2_size, dim3_size};
  return object_create("create3DTensor", data_type, nchw, 3, sizes);
}

void *create2DTensor(int data_type, size_t dim1_size, size_t dim2_size) {
  size_t sizes[2] = {dim1_size, dim2_size};
  return object_create("create2DTensor", data_type, nchw, 2, sizes);
}

void initTensorData(void *tensor, void *data, size_t size_in_bytes) {
  tensor_object_t *object = object_expect("initTensorData", tensor);
  if (size_in_bytes > object->tensor.size_in_bytes)
    fail("initTensorData", "%zu bytes do not fit a tensor of %zu bytes", size_in_bytes,
         object->tensor.size_in_bytes);
  if (size_in_bytes && !data)
    fail("initTensorData", "the data pointer is NULL; expected %zu bytes", size_in_bytes);
  if (size_in_bytes)
    memcpy(object->tensor.host_data, data, size_in_bytes);
}

void freeTensor(void *tensor) {
  if (!tensor)
    return;
  tensor_object_t *object = object_expect("freeTensor", tensor);
  pthread_mutex_lock(&lock);
  for (tensor_object_t **link = &tracked; *link; link = &(*link)->next_tracked)
    if (*link == object) {
      *link = object->next_tracked;
      break;
    }
  object_destroy_locked(object);
  pthread_mutex_unlock(&lock);
}

void hpvm_request_tensor(void *tensor, int destination) {
  (void)destination;
  (void)object_expect("hpvm_request_tensor", tensor);
}

void startMemTracking(void) {
  pthread_mutex_lock(&lock);
  tracking = true;
  pthread_mutex_unlock(&lock);
}

void freeBatchMemory(void) {
  pthread_mutex_lock(&lock);
  while (tracked) {
    tensor_object_t *next = tracked->next_tracked;
    object_destroy_locked(tracked);
    tracked = next;
  }
  pthread_mutex_unlock(&lock);
}

void clearTensorMap(void) { freeBatchMemory(); }

/*===--- Launches (compiled code) ------------------------------------------===*/

void *hpvm_rt_tensor_input(void *tensor, int32_t rank, const int64_t *dims, int32_t input) {
  char where[64];
  snprintf(where, sizeof where, "__hpvm__launch: input %d", (int)input);
  size_t expected[kMaxRank];
  size_t expected_elements = 1;
  int r = rank < 1 ? 1 : rank > kMaxRank ? kMaxRank : rank;
  for (int d = 0; d < r; ++d) {
    expected[d] = (size_t)dims[d];
    expected_elements *= expected[d];
  }
  if (!tensor) {
    char text[256];
    fail(where, "the tensor is NULL; expected a tensor of %s",
         shape_text(text, sizeof text, r, expected));
  }
  tensor_object_t *object = object_lookup(tensor);
  if (!object)
    return tensor; /* a plain pointer to the data */
  const struct Tensor *t = &object->tensor;
  bool same = t->dims.num_dims == r ? memcmp(t->dims.dim_sizes, expected, (size_t)r *
                                                                               sizeof *expected) == 0
                                    : t->num_elems == expected_elements;
  if (!same) {
    char found[256], want[256];
    fail(where,
         "the tensor object has sizes %s, but the graph was compiled for %s (the sizes the "
         "program's tensor calls give it); expected a tensor of %s",
         shape_text(found, sizeof found, t->dims.num_dims, t->dims.dim_sizes),
         shape_text(want, sizeof want, r, expected), want);
  }
  return t->host_data;
}

void *hpvm_rt_tensor_output(int32_t rank, const int64_t *dims, void **out_data) {
  size_t sizes[kMaxRank];
  int r = rank < 1 ? 1 : rank > kMaxRank ? kMaxRank : rank;
  for (int d = 0; d < r; ++d)
    sizes[d] = (size_t)dims[d];
  tensor_object_t *object = object_create("__hpvm__launch: output", float_type, nchw, r, sizes);
  *out_data = object->tensor.host_data;
  return object;
}

/*===--- Files ------------------------------------------------------------===*/

/* Reads `bytes` bytes at `offset` of `path` into `out`; the file must hold them. */
static void read_file(const char *where, const char *path, uint64_t offset, void *out,
                      uint64_t bytes, const char *what) {
  if (!path)
    fail(where, "the file name is NULL");
  FILE *file = fopen(path, "rb");
  if (!file)
    fail(where, "cannot open '%s': %s", path, strerror(errno));
  struct stat info;
  long long size = fstat(fileno(file), &info) == 0 ? (long long)info.st_size : -1;
  if (size < 0 || (uint64_t)size < offset + bytes) {
    fclose(file);
    fail(where, "'%s' holds %lld bytes; expected at least %llu (%s)", path, size,
         (unsigned long long)(offset + bytes), what);
  }
  size_t done = 0;
  if (fseeko(file, (off_t)offset, SEEK_SET) == 0)
    done = fread(out, 1, (size_t)bytes, file);
  fclose(file);
  if (done != bytes)
    fail(where, "reading %llu bytes of '%s' at byte %llu failed", (unsigned long long)bytes,
         path, (unsigned long long)offset);
}

struct Tensor *readTrainedWeights(const char *file_name, int data_type, long int dim1_size,
                                  long int dim2_size, long int dim3_size, long int dim4_size) {
  long int dims[4] = {dim1_size, dim2_size, dim3_size, dim4_size};
  size_t sizes[4];
  for (int d = 0; d < 4; ++d) {
    if (dims[d] < 1)
      fail("readTrainedWeights", "size %d of '%s' is %ld; expected sizes from 1", d,
           file_name ? file_name : "(null)", dims[d]);
    sizes[d] = (size_t)dims[d];
  }
  tensor_object_t *object = object_create("readTrainedWeights", data_type, nchw, 4, sizes);
  char text[256], what[320];
  snprintf(what, sizeof what, "%s float32 values", shape_text(text, sizeof text, 4, sizes));
  read_file("readTrainedWeights", file_name, 0, object->tensor.host_data,
            object->tensor.size_in_bytes, what);
  return &object->tensor;
}

static double batch_started_ms = -1; /* readInputBatch's return, for HPVM_TENSOR_STATS */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct Tensor *readInputBatch(const char *file_name, long data_type, long start, long end,
                              long dim2_size, long dim3_size, long dim4_size) {
  if (start < 0 || end <= start)
    fail("readInputBatch", "images %ld..%ld of '%s': expected 0 <= start < end", start, end - 1,
         file_name ? file_name : "(null)");
  long dims[3] = {dim2_size, dim3_size, dim4_size};
  size_t sizes[4] = {(size_t)(end - start), 0, 0, 0};
  for (int d = 0; d < 3; ++d) {
    if (dims[d] < 1)
      fail("readInputBatch", "size %d of the images of '%s' is %ld; expected sizes from 1",
           d + 1, file_name ? file_name : "(null)", dims[d]);
    sizes[d + 1] = (size_t)dims[d];
  }
  tensor_object_t *object = object_create("readInputBatch", (int)data_type, nchw, 4, sizes);
  uint64_t image = (uint64_t)sizes[1] * sizes[2] * sizes[3] * sizeof(float);
  char what[160];
  snprintf(what, sizeof what, "images %ld..%ld of %zux%zux%zu float32 values", start, end - 1,
           sizes[1], sizes[2], sizes[3]);
  read_file("readInputBatch", file_name, (uint64_t)start * image, object->tensor.host_data,
            object->tensor.size_in_bytes, what);
  batch_started_ms = now_ms();
  return &object->tensor;
}

static void *read_labels(const char *where, const char *path, int start, int count,
                         size_t width) {
  if (start < 0 || count < 1)
    fail(where, "labels %d..%d of '%s': expected a start from 0 and at least one label", start,
         start + count - 1, path ? path : "(null)");
  void *labels = malloc((size_t)count * width);
  if (!labels)
    fail(where, "out of memory for %d labels", count);
  char what[96];
  snprintf(what, sizeof what, "labels %d..%d of %zu bytes each", start, start + count - 1,
           width);
  read_file(where, path, (uint64_t)start * width, labels, (uint64_t)count * width, what);
  return labels;
}

uint8_t *readLabels(const char *labels_file, int num_labels) {
  return read_labels("readLabels", labels_file, 0, num_labels, 1);
}

uint32_t *readLabels3(const char *labels_file, int num_labels) {
  return read_labels("readLabels3", labels_file, 0, num_labels, 4);
}

uint32_t *readLabelsBatch3(const char *labels_file, int start, int end) {
  return read_labels("readLabelsBatch3", labels_file, start, end - start, 4);
}

/*===--- Results ----------------------------------------------------------===*/

static int batches_done;

/* What every batch's result goes through: the environment's dump, statistics and limit. */
static void batch_finished(const tensor_object_t *result) {
  double elapsed = batch_started_ms >= 0 ? now_ms() - batch_started_ms : -1;
  int batch = batches_done++;
  const char *stats = getenv("HPVM_TENSOR_STATS");
  if (stats && *stats && strcmp(stats, "0") != 0 && elapsed >= 0)
    fprintf(stderr, "hpvm-tensor: batch %d: %.3f ms\n", batch, elapsed);
  const char *dump = getenv("HPVM_TENSOR_DUMP");
  if (dump && *dump) {
    FILE *file = fopen(dump, "ab");
    if (!file ||
        fwrite(result->tensor.host_data, 1, result->tensor.size_in_bytes, file) !=
            result->tensor.size_in_bytes)
      fail("HPVM_TENSOR_DUMP", "cannot append %zu bytes to '%s': %s",
           result->tensor.size_in_bytes, dump, strerror(errno));
    fclose(file);
  }
  const char *limit = getenv("HPVM_TENSOR_BATCHES");
  if (limit && *limit && atoi(limit) > 0 && batches_done >= atoi(limit)) {
    fflush(stdout);
    exit(0);
  }
}

/* The share of rows of an N x classes result (the sizes after the first multiplied) whose
 * largest entry is the label. */
static float accuracy_of(const tensor_object_t *result, const uint32_t *labels) {
  size_t rows = result->tensor.dims.dim_sizes[0];
  size_t classes = rows ? result->tensor.num_elems / rows : 0;
  const float *data = result->tensor.host_data;
  size_t correct = 0;
  for (size_t i = 0; i < rows; ++i) {
    size_t chosen = 0;
    for (size_t c = 1; c < classes; ++c)
      if (data[i * classes + chosen] < data[i * classes + c])
        chosen = c;
    correct += chosen == labels[i];
  }
  return rows ? 100.0f * (float)correct / (float)rows : 0.0f;
}

float computeAccuracy3(uint32_t *labels, void *result) {
  tensor_object_t *object = object_expect("computeAccuracy3", result);
  if (!labels)
    fail("computeAccuracy3", "the labels are NULL");
  float accuracy = accuracy_of(object, labels);
  printf("****** Accuracy = %f \n\n", accuracy);
  batch_finished(object);
  return accuracy;
}

void llvm_hpvm_initializeRuntimeController(const char *config_file) {
  if (!config_file || !*config_file)
    return;
  FILE *file = fopen(config_file, "r");
  if (!file)
    fail("llvm_hpvm_initializeRuntimeController", "cannot open '%s': %s", config_file,
         strerror(errno));
  fclose(file);
}

void llvm_hpvm_clearRuntimeController(void) {}

void llvm_hpvm_invokeRtControl(void *result, const char *labels_file, int start, int end) {
  tensor_object_t *object = object_expect("llvm_hpvm_invokeRtControl", result);
  if (end - start != (int)object->tensor.dims.dim_sizes[0])
    fail("llvm_hpvm_invokeRtControl",
         "images %d..%d are %d, but the result has %zu rows; expected one row per image", start,
         end - 1, end - start, object->tensor.dims.dim_sizes[0]);
  uint32_t *labels = readLabelsBatch3(labels_file, start, end);
  float accuracy = accuracy_of(object, labels);
  free(labels);
  printf("hpvm-tensor: images %d..%d: accuracy %.2f%%\n", start, end - 1, accuracy);
  batch_finished(object);
}

/*===--- Printing ---------------------------------------------------------===*/

void printTensorDims(void *tensor) {
  tensor_object_t *object = object_expect("printTensorDims", tensor);
  char text[256];
  printf("dims: %s\n", shape_text(text, sizeof text, object->tensor.dims.num_dims,
                                  object->tensor.dims.dim_sizes));
}

void printTensorValues(void *tensor) {
  tensor_object_t *object = object_expect("printTensorValues", tensor);
  const float *data = object->tensor.host_data;
  for (size_t i = 0; i < object->tensor.num_elems; ++i)
    printf("%g%s", data[i], i + 1 < object->tensor.num_elems ? ", " : "\n");
}

void dumpOutput(void *tensor, const char *file_name) {
  tensor_object_t *object = object_expect("dumpOutput", tensor);
  FILE *file = file_name ? fopen(file_name, "wb") : NULL;
  if (!file ||
      fwrite(object->tensor.host_data, 1, object->tensor.size_in_bytes, file) !=
          object->tensor.size_in_bytes)
    fail("dumpOutput", "cannot write %zu bytes to '%s': %s", object->tensor.size_in_bytes,
         file_name ? file_name : "(null)", strerror(errno));
  fclose(file);
}
