/* objects.c - ApproxHPVM's tensor objects and host API (approxhpvm/tensorUtils.h).
 *
 * A tensor object is a struct Tensor followed by its sizes, with its data in one aligned
 * allocation. Every object is in a registry (an open-addressing set of pointers), so that a
 * launch can tell a tensor object from a plain data pointer without reading through it
 * (hpvm_rt_tensor_input). Objects made while memory is tracked are listed for the next
 * freeBatchMemory. The file readers check the file's size before they allocate or read.
 *
 * Lifetime (docs/HPVM-C.md, "Tensor objects' lifetime"): a freed object's data are freed at
 * once, but its handle stays allocated and registered, marked freed, among the last
 * kQuarantine freed handles: no allocation can reuse the address meanwhile, so passing the
 * handle again (to a launch or any call here) is an error naming the call that freed it,
 * never a read of freed memory as data. The oldest freed handle is released when the
 * quarantine is full.
 *
 * The program can write the struct Tensor it holds; the runtime keeps its own record of each
 * object (rank, sizes, data, byte count) and refuses an object whose public fields no longer
 * match it, instead of reading through a changed pointer or size. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/platform.h"
#include "base/status.h"
#include "hpvm/approxhpvm/tensorUtils.h"
#include "hpvm/hpvm_rt.h"

enum { kMaxRank = 8, kAlignment = 64, kQuarantine = 4096, kLabelArrays = 64 };

typedef struct tensor_object_s {
  struct Tensor tensor;   /* first: the handle is the object */
  size_t sizes[kMaxRank]; /* what tensor.dims.dim_sizes points to */
  /* The runtime's own record, which the program never sees. */
  int rank;
  size_t shape[kMaxRank];
  void *data;
  size_t elements, bytes;
  const char *made_by; /* the call that made it */
  bool in_batch;       /* made while memory was tracked */
  const char *freed_by; /* NULL while live */
  /* Live: the next object of the batch (tracked). Freed: the next newer freed handle. */
  struct tensor_object_s *next;
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

/*===--- Batches and freed handles ---------------------------------------===*/

static bool tracking;
static tensor_object_t *tracked;
/* Freed handles, oldest first. */
static tensor_object_t *freed_oldest, *freed_newest;
static size_t freed_count;

/* Caller holds `lock`; `object` is live and out of the tracked list. Frees its data and keeps
 * its handle, marked freed by `by`; releases the oldest freed handle past kQuarantine. */
static void object_free_locked(tensor_object_t *object, const char *by) {
  free(object->data);
  object->data = NULL;
  object->freed_by = by;
  /* A program that reads the fields of a freed object finds no data, not freed memory. */
  object->tensor.host_data = NULL;
  object->tensor.num_elems = 0;
  object->tensor.size_in_bytes = 0;
  object->next = NULL;
  if (freed_newest)
    freed_newest->next = object;
  else
    freed_oldest = object;
  freed_newest = object;
  if (++freed_count <= kQuarantine)
    return;
  tensor_object_t *oldest = freed_oldest;
  freed_oldest = oldest->next;
  if (!freed_oldest)
    freed_newest = NULL;
  --freed_count;
  size_t s = registry_find(oldest);
  if (s != SIZE_MAX)
    slots[s] = kTombstone;
  free(oldest);
}

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

/* "2x3x4" into `buffer` (cut short, never past it). */
static const char *shape_text(char *buffer, size_t size, int rank, const size_t *sizes) {
  size_t n = 0;
  buffer[0] = '\0';
  for (int d = 0; d < rank && d < kMaxRank && n + 1 < size; ++d) {
    int wrote = snprintf(buffer + n, size - n, d ? "x%zu" : "%zu", sizes[d]);
    if (wrote < 0)
      break;
    n += (size_t)wrote;
  }
  return buffer;
}

/* The number of elements of a tensor of `sizes`; an error naming them when one is 0 or the
 * tensor would hold 2^61 bytes or more. */
static size_t checked_elements(const char *where, int rank, const size_t *sizes) {
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
  return elements;
}

/*===--- Objects ----------------------------------------------------------===*/

static tensor_object_t *object_create(const char *where, int data_type, int data_format,
                                      int rank, const size_t *sizes) {
  if (data_type != float_type)
    fail(where, "data type %d is not supported; expected %d (float_type: float32)", data_type,
         (int)float_type);
  if (rank < 1 || rank > kMaxRank)
    fail(where, "rank %d is not supported; expected 1 to %d", rank, (int)kMaxRank);
  size_t elements = checked_elements(where, rank, sizes);
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
  object->rank = rank;
  memcpy(object->shape, sizes, (size_t)rank * sizeof *sizes);
  object->data = data;
  object->elements = elements;
  object->bytes = bytes;
  object->made_by = where;
  pthread_mutex_lock(&lock);
  bool ok = registry_insert(object);
  if (ok && tracking) {
    object->in_batch = true;
    object->next = tracked;
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

/* Caller holds `lock`. Why `object` cannot be used, into `why`; false when it can: freed, or
 * a field of its struct Tensor changed by the program. */
static bool object_unusable_locked(const tensor_object_t *object, char *why, size_t size) {
  if (object->freed_by) {
    snprintf(why, size,
             "%p is a tensor object that %s freed (made by %s%s); a freed object is no longer "
             "a tensor or data: expected a live tensor object",
             (const void *)object, object->freed_by, object->made_by,
             object->in_batch ? " after startMemTracking, which put it in the batch" : "");
    return true;
  }
  const struct Tensor *t = &object->tensor;
  char found[64] = "", made[64] = "";
  const char *field = NULL;
  if (t->host_data != object->data) {
    field = "host_data";
    snprintf(found, sizeof found, "%p", t->host_data);
    snprintf(made, sizeof made, "%p", object->data);
  } else if (t->num_elems != object->elements) {
    field = "num_elems";
    snprintf(found, sizeof found, "%zu", t->num_elems);
    snprintf(made, sizeof made, "%zu", object->elements);
  } else if (t->size_in_bytes != object->bytes) {
    field = "size_in_bytes";
    snprintf(found, sizeof found, "%zu", t->size_in_bytes);
    snprintf(made, sizeof made, "%zu", object->bytes);
  } else if (t->dims.num_dims != object->rank) {
    field = "dims.num_dims";
    snprintf(found, sizeof found, "%d", t->dims.num_dims);
    snprintf(made, sizeof made, "%d", object->rank);
  } else if (t->dims.dim_sizes != object->sizes) {
    field = "dims.dim_sizes";
    snprintf(found, sizeof found, "%p", (const void *)t->dims.dim_sizes);
    snprintf(made, sizeof made, "%p", (const void *)object->sizes);
  } else {
    for (int d = 0; d < object->rank && !field; ++d)
      if (object->sizes[d] != object->shape[d]) {
        static const char *const names[kMaxRank] = {
            "dims.dim_sizes[0]", "dims.dim_sizes[1]", "dims.dim_sizes[2]", "dims.dim_sizes[3]",
            "dims.dim_sizes[4]", "dims.dim_sizes[5]", "dims.dim_sizes[6]", "dims.dim_sizes[7]"};
        field = names[d];
        snprintf(found, sizeof found, "%zu", object->sizes[d]);
        snprintf(made, sizeof made, "%zu", object->shape[d]);
      }
  }
  if (!field)
    return false;
  snprintf(why, size,
           "the tensor object at %p was changed: its %s is %s, but the runtime made it %s; "
           "the fields of a struct Tensor are to be read, not written (make a new tensor "
           "for other sizes or data)",
           (const void *)object, field, found, made);
  return true;
}

/* What a call of the host API may read of an object, copied under the lock. */
typedef struct {
  tensor_object_t *object;
  int rank;
  size_t shape[kMaxRank];
  void *data;
  size_t elements, bytes;
} object_view_t;

/* The live, unchanged object `pointer` is, as *view: true. False for a pointer that is no
 * tensor object. An error naming `where` for a freed or changed object. */
static bool object_view(const char *where, const void *pointer, object_view_t *view) {
  char why[640];
  pthread_mutex_lock(&lock);
  size_t s = registry_find(pointer);
  tensor_object_t *object = s == SIZE_MAX ? NULL : slots[s];
  bool unusable = object && object_unusable_locked(object, why, sizeof why);
  if (object && !unusable) {
    view->object = object;
    view->rank = object->rank;
    memcpy(view->shape, object->shape, sizeof view->shape);
    view->data = object->data;
    view->elements = object->elements;
    view->bytes = object->bytes;
  }
  pthread_mutex_unlock(&lock);
  if (unusable)
    fail(where, "%s", why);
  return object != NULL;
}

static object_view_t object_expect(const char *where, void *pointer) {
  object_view_t view;
  if (!object_view(where, pointer, &view))
    fail(where, "%p is not a tensor object (made by create4DTensor, readTrainedWeights, "
                "readInputBatch or a graph's output)",
         pointer);
  return view;
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
  object_view_t view = object_expect("initTensorData", tensor);
  if (size_in_bytes > view.bytes)
    fail("initTensorData", "%zu bytes do not fit a tensor of %zu bytes", size_in_bytes,
         view.bytes);
  if (size_in_bytes && !data)
    fail("initTensorData", "the data pointer is NULL; expected %zu bytes", size_in_bytes);
  if (size_in_bytes)
    memcpy(view.data, data, size_in_bytes);
}

void freeTensor(void *tensor) {
  if (!tensor)
    return;
  object_view_t view = object_expect("freeTensor", tensor);
  tensor_object_t *object = view.object;
  pthread_mutex_lock(&lock);
  /* Freed meanwhile by another thread: the object is already in the quarantine. */
  if (!object->freed_by) {
    for (tensor_object_t **link = &tracked; *link; link = &(*link)->next)
      if (*link == object) {
        *link = object->next;
        break;
      }
    object_free_locked(object, "freeTensor");
  }
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
    tensor_object_t *next = tracked->next;
    object_free_locked(tracked, "freeBatchMemory");
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
  object_view_t view;
  if (!object_view(where, tensor, &view))
    return tensor; /* a plain pointer to the data */
  bool same = view.rank == r ? memcmp(view.shape, expected, (size_t)r * sizeof *expected) == 0
                             : view.elements == expected_elements;
  if (!same) {
    char found[256], want[256];
    fail(where,
         "the tensor object has sizes %s, but the graph was compiled for %s (the sizes the "
         "program's tensor calls give it); expected a tensor of %s",
         shape_text(found, sizeof found, view.rank, view.shape),
         shape_text(want, sizeof want, r, expected), want);
  }
  return view.data;
}

void *hpvm_rt_tensor_output(int32_t rank, const int64_t *dims, void **out_data,
                            int32_t objects) {
  size_t sizes[kMaxRank];
  int r = rank < 1 ? 1 : rank > kMaxRank ? kMaxRank : rank;
  for (int d = 0; d < r; ++d)
    sizes[d] = dims[d] < 0 ? 0 : (size_t)dims[d];
  const char *where = "__hpvm__launch: output";
  if (objects) {
    tensor_object_t *object = object_create(where, float_type, nchw, r, sizes);
    *out_data = object->data;
    return object;
  }
  size_t bytes = checked_elements(where, r, sizes) * sizeof(float);
  void *buffer = malloc(bytes);
  if (!buffer)
    fail(where, "out of memory for a buffer of %zu bytes", bytes);
  *out_data = buffer;
  return buffer;
}

/*===--- Files ------------------------------------------------------------===*/

/* `path` opened for reading `bytes` bytes at `offset`, once its size is known to hold them
 * (before anything is allocated for them): a file short of them is an error saying `what`. */
static FILE *open_holding(const char *where, const char *path, uint64_t offset, uint64_t bytes,
                          const char *what) {
  if (!path)
    fail(where, "the file name is NULL");
  uint64_t last;
  if (__builtin_add_overflow(offset, bytes, &last) || last > (uint64_t)INT64_MAX)
    fail(where, "'%s': %s end past byte 2^63 (%llu bytes at byte %llu); no file holds them",
         path, what, (unsigned long long)bytes, (unsigned long long)offset);
  /* Regular files only, checked on the open descriptor: a device (/dev/zero) has no size
   * to check, and opening a named pipe without O_NONBLOCK would wait for a writer forever. */
  int descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0)
    fail(where, "cannot open '%s': %s", path, strerror(errno));
  struct stat info = {0};
  if (fstat(descriptor, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(descriptor);
    fail(where, "'%s' is %s; expected a regular file of %s", path,
         S_ISDIR(info.st_mode)    ? "a folder"
         : S_ISCHR(info.st_mode)  ? "a character device"
         : S_ISFIFO(info.st_mode) ? "a named pipe"
                                  : "not a regular file",
         what);
  }
  FILE *file = fdopen(descriptor, "rb");
  if (!file) {
    close(descriptor);
    fail(where, "cannot open '%s': %s", path, strerror(errno));
  }
  long long size = (long long)info.st_size;
  if ((uint64_t)size < last) {
    fclose(file);
    fail(where, "'%s' holds %lld bytes; expected at least %llu (%s)", path, size,
         (unsigned long long)last, what);
  }
  return file;
}

/* Reads `bytes` bytes at `offset` of `file` (from open_holding) into `out`; closes it. */
static void read_held(const char *where, FILE *file, const char *path, uint64_t offset,
                      void *out, uint64_t bytes) {
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
  const char *where = "readTrainedWeights";
  long int dims[4] = {dim1_size, dim2_size, dim3_size, dim4_size};
  size_t sizes[4];
  for (int d = 0; d < 4; ++d) {
    if (dims[d] < 1)
      fail(where, "size %d of '%s' is %ld; expected sizes from 1", d,
           file_name ? file_name : "(null)", dims[d]);
    sizes[d] = (size_t)dims[d];
  }
  if (data_type != float_type)
    fail(where, "data type %d is not supported; expected %d (float_type: float32)", data_type,
         (int)float_type);
  uint64_t bytes = (uint64_t)checked_elements(where, 4, sizes) * sizeof(float);
  char text[256], what[320];
  snprintf(what, sizeof what, "%s float32 values", shape_text(text, sizeof text, 4, sizes));
  FILE *file = open_holding(where, file_name, 0, bytes, what);
  tensor_object_t *object = object_create(where, data_type, nchw, 4, sizes);
  read_held(where, file, file_name, 0, object->data, bytes);
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
  const char *where = "readInputBatch";
  const char *shown = file_name ? file_name : "(null)";
  if (start < 0 || end <= start)
    fail(where, "images %ld..%ld of '%s' (start %ld, end %ld): expected 0 <= start < end", start,
         end - 1, shown, start, end);
  long dims[3] = {dim2_size, dim3_size, dim4_size};
  size_t sizes[4] = {(size_t)end - (size_t)start, 0, 0, 0};
  for (int d = 0; d < 3; ++d) {
    if (dims[d] < 1)
      fail(where, "size %d of the images of '%s' is %ld; expected sizes from 1", d + 1, shown,
           dims[d]);
    sizes[d + 1] = (size_t)dims[d];
  }
  if (data_type != float_type)
    fail(where, "data type %ld is not supported; expected %d (float_type: float32)", data_type,
         (int)float_type);
  uint64_t bytes = (uint64_t)checked_elements(where, 4, sizes) * sizeof(float);
  uint64_t image = (uint64_t)sizes[1] * sizes[2] * sizes[3] * sizeof(float), offset;
  if (__builtin_mul_overflow((uint64_t)start, image, &offset))
    fail(where,
         "images %ld..%ld of %zux%zux%zu float32 values of '%s': start %ld times %llu bytes "
         "an image is past 2^64 bytes; expected a start within the file",
         start, end - 1, sizes[1], sizes[2], sizes[3], shown, start,
         (unsigned long long)image);
  char what[200];
  snprintf(what, sizeof what, "images %ld..%ld of %zux%zux%zu float32 values", start, end - 1,
           sizes[1], sizes[2], sizes[3]);
  FILE *file = open_holding(where, file_name, offset, bytes, what);
  tensor_object_t *object = object_create(where, (int)data_type, nchw, 4, sizes);
  read_held(where, file, file_name, offset, object->data, bytes);
  batch_started_ms = now_ms();
  return &object->tensor;
}

/* The label arrays the readers made last (the program frees them with free(), unseen): what
 * computeAccuracy3 checks a labels pointer against. A pointer not among them is the
 * program's own array, trusted to hold a label per row. */
static struct {
  const void *pointer;
  long long count;
  size_t width;
} label_arrays[kLabelArrays];
static unsigned label_arrays_next;

/* Labels start..end-1 of `path`, `width` bytes each, malloc'd; listed in label_arrays when
 * `listed` (they go to the program). */
static void *read_labels(const char *where, const char *path, long long start, long long end,
                         size_t width, bool listed) {
  const char *shown = path ? path : "(null)";
  if (start < 0 || end <= start)
    fail(where, "labels %lld..%lld of '%s' (start %lld, end %lld): expected 0 <= start < end",
         start, end - 1, shown, start, end);
  uint64_t count = (uint64_t)(end - start);
  char what[128];
  snprintf(what, sizeof what, "labels %lld..%lld of %zu bytes each", start, end - 1, width);
  FILE *file = open_holding(where, path, (uint64_t)start * width, count * width, what);
  void *labels = malloc((size_t)(count * width));
  if (!labels) {
    fclose(file);
    fail(where, "out of memory for %llu labels", (unsigned long long)count);
  }
  read_held(where, file, path, (uint64_t)start * width, labels, count * width);
  if (!listed)
    return labels;
  pthread_mutex_lock(&lock);
  unsigned slot = label_arrays_next;
  for (unsigned i = 0; i < kLabelArrays; ++i)
    if (label_arrays[i].pointer == labels)
      slot = i; /* an address freed by the program and made again */
  if (slot == label_arrays_next)
    label_arrays_next = (label_arrays_next + 1) % kLabelArrays;
  label_arrays[slot].pointer = labels;
  label_arrays[slot].count = (long long)count;
  label_arrays[slot].width = width;
  pthread_mutex_unlock(&lock);
  return labels;
}

uint8_t *readLabels(const char *labels_file, int num_labels) {
  if (num_labels < 1)
    fail("readLabels", "num_labels is %d for '%s'; expected at least 1", num_labels,
         labels_file ? labels_file : "(null)");
  return read_labels("readLabels", labels_file, 0, num_labels, 1, true);
}

uint32_t *readLabels3(const char *labels_file, int num_labels) {
  if (num_labels < 1)
    fail("readLabels3", "num_labels is %d for '%s'; expected at least 1", num_labels,
         labels_file ? labels_file : "(null)");
  return read_labels("readLabels3", labels_file, 0, num_labels, 4, true);
}

uint32_t *readLabelsBatch3(const char *labels_file, int start, int end) {
  return read_labels("readLabelsBatch3", labels_file, start, end, 4, true);
}

/*===--- Results ----------------------------------------------------------===*/

static long long batches_done;

/* What every batch's result goes through: the environment's dump, statistics and limit. */
static void batch_finished(const object_view_t *result) {
  uint64_t limit = 0;
  bool limited;
  hpvm_rt_check_at(
      hpvm_platform_env_integer("HPVM_TENSOR_BATCHES", 1, INT64_MAX, &limit, &limited),
      "HPVM_TENSOR_BATCHES");
  double elapsed = batch_started_ms >= 0 ? now_ms() - batch_started_ms : -1;
  pthread_mutex_lock(&lock);
  long long batch = batches_done++;
  pthread_mutex_unlock(&lock);
  const char *stats = getenv("HPVM_TENSOR_STATS");
  if (stats && *stats && strcmp(stats, "0") != 0 && elapsed >= 0)
    fprintf(stderr, "hpvm-tensor: batch %lld: %.3f ms\n", batch, elapsed);
  const char *dump = getenv("HPVM_TENSOR_DUMP");
  if (dump && *dump) {
    FILE *file = fopen(dump, "ab");
    bool wrote = file && fwrite(result->data, 1, result->bytes, file) == result->bytes;
    /* The data may reach the file only at fclose (a full disk says so there). */
    if (file && fclose(file) != 0)
      wrote = false;
    if (!wrote)
      fail("HPVM_TENSOR_DUMP", "cannot append %zu bytes to '%s': %s", result->bytes, dump,
           strerror(errno));
  }
  if (limited && (uint64_t)batch + 1 >= limit) {
    fflush(stdout);
    exit(0);
  }
}

/* The share of rows of an N x classes result (the sizes after the first multiplied) whose
 * largest entry is the label. */
static float accuracy_of(const object_view_t *result, const uint32_t *labels) {
  size_t rows = result->shape[0];
  size_t classes = rows ? result->elements / rows : 0;
  const float *data = result->data;
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
  const char *where = "computeAccuracy3";
  object_view_t view = object_expect(where, result);
  if (!labels)
    fail(where, "the labels are NULL");
  long long count = -1;
  size_t width = 4;
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < kLabelArrays; ++i)
    if (label_arrays[i].pointer == labels) {
      count = label_arrays[i].count;
      width = label_arrays[i].width;
    }
  pthread_mutex_unlock(&lock);
  if (width != 4)
    fail(where, "the labels (%p) are readLabels' 1-byte labels; expected 4-byte labels "
                "(readLabels3 or readLabelsBatch3)",
         (void *)labels);
  if (count >= 0 && (unsigned long long)count < view.shape[0])
    fail(where, "the labels (%p) hold %lld labels, but the result has %zu rows; expected a "
                "label per row",
         (void *)labels, count, view.shape[0]);
  float accuracy = accuracy_of(&view, labels);
  printf("****** Accuracy = %f \n\n", accuracy);
  batch_finished(&view);
  return accuracy;
}

void llvm_hpvm_initializeRuntimeController(const char *config_file) {
  if (!config_file || !*config_file)
    return;
  /* Only checked to exist (the knobs it names are applied at compile time): a regular file,
   * opened without blocking, as the other readers (a named pipe blocked here for ever). */
  fclose(open_holding("llvm_hpvm_initializeRuntimeController", config_file, 0, 0,
                      "the runtime controller's configuration"));
}

void llvm_hpvm_clearRuntimeController(void) {}

void llvm_hpvm_invokeRtControl(void *result, const char *labels_file, int start, int end) {
  const char *where = "llvm_hpvm_invokeRtControl";
  object_view_t view = object_expect(where, result);
  long long images = (long long)end - start;
  if (start < 0 || images < 1 || (unsigned long long)images != view.shape[0])
    fail(where,
         "images %d..%lld (start %d, end %d) are %lld, but the result has %zu rows; expected "
         "0 <= start < end and one row per image",
         start, (long long)end - 1, start, end, images, view.shape[0]);
  uint32_t *labels = read_labels(where, labels_file, start, end, 4, false);
  float accuracy = accuracy_of(&view, labels);
  free(labels);
  printf("hpvm-tensor: images %d..%lld: accuracy %.2f%%\n", start, (long long)end - 1,
         accuracy);
  batch_finished(&view);
}

/*===--- Printing ---------------------------------------------------------===*/

void printTensorDims(void *tensor) {
  object_view_t view = object_expect("printTensorDims", tensor);
  char text[256];
  printf("dims: %s\n", shape_text(text, sizeof text, view.rank, view.shape));
}

void printTensorValues(void *tensor) {
  object_view_t view = object_expect("printTensorValues", tensor);
  const float *data = view.data;
  for (size_t i = 0; i < view.elements; ++i)
    printf("%g%s", data[i], i + 1 < view.elements ? ", " : "\n");
}

void dumpOutput(void *tensor, const char *file_name) {
  object_view_t view = object_expect("dumpOutput", tensor);
  if (!file_name)
    fail("dumpOutput", "the file name is NULL");
  FILE *file = fopen(file_name, "wb");
  bool wrote = file && fwrite(view.data, 1, view.bytes, file) == view.bytes;
  /* Buffered data are written at fclose: a full disk (/dev/full) fails only there. */
  if (file && fclose(file) != 0)
    wrote = false;
  if (!wrote)
    fail("dumpOutput", "cannot write %zu bytes to '%s': %s", view.bytes, file_name,
         strerror(errno));
}
