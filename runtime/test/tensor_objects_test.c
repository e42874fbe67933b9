/* tensor_objects_test.c - ApproxHPVM's tensor objects (approxhpvm/tensorUtils.h): the
 * registry that tells objects from plain pointers (through growth and deletions), batches
 * (startMemTracking / freeBatchMemory), the launch's shape check, and the file readers'
 * errors, which return to a guard as compiled code's errors do. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpvm/approxhpvm/tensorUtils.h"
#include "hpvm/hpvm_rt.h"
#include "test_util.h"

/* Many objects, freed in an interleaved order: each stays an object until freed, and plain
 * pointers are never taken for one. */
static void test_registry(void) {
  enum { kCount = 3000 };
  void **objects = malloc(kCount * sizeof *objects);
  int64_t dims[4] = {1, 2, 3, 4};
  for (int i = 0; i < kCount; ++i)
    objects[i] = create4DTensor(float_type, nchw, 1, 2, 3, 4);
  for (int i = 0; i < kCount; i += 2)
    freeTensor(objects[i]);
  for (int i = 1; i < kCount; i += 2) {
    struct Tensor *t = objects[i];
    CHECK(hpvm_rt_tensor_input(t, 4, dims, 0) == t->host_data);
    CHECK_EQ_INT(t->num_elems, 24);
    CHECK_EQ_INT(t->size_in_bytes, 96);
    CHECK_EQ_INT(t->dims.num_dims, 4);
    CHECK_EQ_INT(t->dims.dim_sizes[3], 4);
  }
  float plain[24];
  CHECK(hpvm_rt_tensor_input(plain, 4, dims, 0) == plain);
  for (int i = 1; i < kCount; i += 2)
    freeTensor(objects[i]);
  free(objects);
}

/* A different rank with as many elements is the same data (a view); other sizes are an
 * error naming both shapes. */
static void entry_wrong_shape(void **args) {
  int64_t dims[4] = {2, 2, 3, 4};
  (void)hpvm_rt_tensor_input(args[0], 4, dims, 3);
}

static void test_shape_check(void) {
  void *t = create4DTensor(float_type, nchw, 1, 2, 3, 4);
  int64_t flat[2] = {2, 12};
  CHECK(hpvm_rt_tensor_input(t, 2, flat, 0) == ((struct Tensor *)t)->host_data);
  void *args[] = {t};
  hpvm_status_t status = hpvm_rt_call_guarded(entry_wrong_shape, args);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "input 3") != NULL);
  CHECK(strstr(hpvm_status_message(status), "sizes 1x2x3x4, but the graph was compiled for "
                                             "2x2x3x4") != NULL);
  hpvm_status_free(status);
  freeTensor(t);
}

/* A guarded call of `entry(args)` must fail with INVALID_ARGUMENT and a message holding each
 * of the NULL-terminated `parts`. */
static void expect_error(void (*entry)(void **), void **args, const char *const *parts) {
  hpvm_status_t status = hpvm_rt_call_guarded(entry, args);
  if (!status) {
    fprintf(stderr, "expected an error with '%s'; the call succeeded\n", parts[0]);
    exit(1);
  }
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  for (const char *const *part = parts; *part; ++part)
    if (!strstr(hpvm_status_message(status), *part)) {
      fprintf(stderr, "expected '%s' in: %s\n", *part, hpvm_status_message(status));
      exit(1);
    }
  hpvm_status_free(status);
}

#define EXPECT_ERROR(entry, args, ...)                                                           \
  do {                                                                                           \
    const char *const parts_[] = {__VA_ARGS__, NULL};                                            \
    expect_error(entry, args, parts_);                                                           \
  } while (0)

static void entry_input(void **args) {
  (void)hpvm_rt_tensor_input(args[0], 4, (const int64_t *)args[1], 2);
}

static void entry_print_dims(void **args) { printTensorDims(args[0]); }
static void entry_free(void **args) { freeTensor(args[0]); }
static void entry_request(void **args) { hpvm_request_tensor(args[0], 0); }

/* Objects made while memory is tracked (by the API and as graph outputs) go with the next
 * freeBatchMemory; those made before stay. A freed object is never data again: a launch or
 * any call given one fails naming the call that freed it (it used to be read as a plain data
 * pointer: the freed struct's bytes as floats). */
static void test_batches(void) {
  void *weights = create4DTensor(float_type, nchw, 1, 1, 1, 8);
  startMemTracking();
  void *input = create4DTensor(float_type, nchw, 2, 1, 1, 8);
  void *batch_weights = create4DTensor(float_type, nchw, 1, 1, 1, 8);
  int64_t dims[2] = {2, 10};
  void *data = NULL;
  void *output = hpvm_rt_tensor_output(2, dims, &data, 1);
  CHECK(data == ((struct Tensor *)output)->host_data);
  CHECK_EQ_INT(((struct Tensor *)output)->dims.dim_sizes[1], 10);
  freeBatchMemory();
  int64_t wdims[4] = {1, 1, 1, 8};
  float *w = hpvm_rt_tensor_input(weights, 4, wdims, 0);
  CHECK(w == ((struct Tensor *)weights)->host_data);
  /* The batch's objects are gone: a launch given one is an error naming the input. */
  int64_t idims[4] = {2, 1, 1, 8};
  void *args[] = {input, idims};
  EXPECT_ERROR(entry_input, args, "__hpvm__launch: input 2",
               "is a tensor object that freeBatchMemory freed",
               "made by create4DTensor after startMemTracking");
  void *wargs[] = {batch_weights, wdims};
  EXPECT_ERROR(entry_input, wargs, "freeBatchMemory freed");
  void *out_args[] = {output};
  EXPECT_ERROR(entry_print_dims, out_args, "printTensorDims",
               "made by __hpvm__launch: output after startMemTracking");
  EXPECT_ERROR(entry_free, out_args, "freeTensor", "freeBatchMemory freed");
  /* A freed object's fields hold no data any more. */
  CHECK(((struct Tensor *)input)->host_data == NULL);
  CHECK_EQ_INT(((struct Tensor *)input)->size_in_bytes, 0);

  /* freeTensor: the same, and a second free is an error too. */
  freeTensor(weights);
  void *fargs[] = {weights, wdims};
  EXPECT_ERROR(entry_input, fargs, "input 2", "freeTensor freed", "made by create4DTensor)");
  EXPECT_ERROR(entry_free, fargs, "freeTensor", "freeTensor freed");
  EXPECT_ERROR(entry_request, fargs, "hpvm_request_tensor", "freeTensor freed");

  /* Many frees later, a recent freed object is still known as freed. */
  void *recent = create4DTensor(float_type, nchw, 1, 1, 1, 8);
  freeTensor(recent);
  for (int i = 0; i < 3000; ++i)
    freeTensor(create2DTensor(float_type, 1, 1));
  void *rargs[] = {recent, wdims};
  EXPECT_ERROR(entry_input, rargs, "freeTensor freed");

  /* Launched with plain data pointers only, a graph's tensor outputs are malloc'd buffers. */
  void *plain = hpvm_rt_tensor_output(2, dims, &data, 0);
  CHECK(plain == data);
  void *pargs[] = {plain};
  EXPECT_ERROR(entry_print_dims, pargs, "is not a tensor object");
  free(plain);
}

/* The program may read a struct Tensor, not change it: a changed field is an error naming it
 * (a rank of 1000 used to make the shape's text read past the sizes; a changed host_data or
 * size was read through). */
static void test_changed_fields(void) {
  int64_t dims[4] = {1, 2, 3, 4};
  struct Tensor *t = create4DTensor(float_type, nchw, 1, 2, 3, 4);
  void *args[] = {t, dims};
  t->dims.num_dims = 1000;
  EXPECT_ERROR(entry_print_dims, args, "printTensorDims", "its dims.num_dims is 1000",
               "the runtime made it 4");
  EXPECT_ERROR(entry_input, args, "input 2", "dims.num_dims is 1000");
  t->dims.num_dims = 4;
  t->dims.dim_sizes[2] = 1u << 30;
  EXPECT_ERROR(entry_input, args, "dims.dim_sizes[2] is 1073741824", "made it 3");
  t->dims.dim_sizes[2] = 3;
  void *data = t->host_data;
  float other[24];
  t->host_data = other;
  EXPECT_ERROR(entry_input, args, "its host_data is");
  t->host_data = data;
  t->size_in_bytes = 1u << 20;
  EXPECT_ERROR(entry_print_dims, args, "size_in_bytes is 1048576", "made it 96");
  t->size_in_bytes = 96;
  CHECK(hpvm_rt_tensor_input(t, 4, dims, 0) == data);
  freeTensor(t);
}

/* Files: the data read back; a short file and a missing one are errors saying what was
 * expected. */
static const char *g_path;

static void entry_read_short(void **args) {
  (void)args;
  (void)readTrainedWeights(g_path, float_type, 2, 1, 1, 8);
}

static void entry_read_missing(void **args) {
  (void)args;
  (void)readInputBatch("/nonexistent/hpvm-tensor-input.bin", float_type, 0, 2, 1, 1, 4);
}

static void entry_read_wrapping(void **args) {
  (void)args;
  /* 2^62 images of 16 bytes: byte 2^66, which wraps to 0 in 64 bits. */
  long start = 1L << 62;
  (void)readInputBatch(g_path, float_type, start, start + 1, 1, 1, 4);
}

static void test_files(void) {
  char path[] = "/tmp/hpvm-tensor-objects-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  float values[12];
  for (int i = 0; i < 12; ++i)
    values[i] = (float)i * 0.5f;
  CHECK(write(fd, values, sizeof values) == (ssize_t)sizeof values);
  close(fd);
  g_path = path;
  struct Tensor *w = readTrainedWeights(path, float_type, 1, 1, 3, 4);
  CHECK(((float *)w->host_data)[11] == 5.5f);
  struct Tensor *batch = readInputBatch(path, float_type, 1, 3, 1, 1, 4); /* images 1, 2 */
  CHECK_EQ_INT(batch->dims.dim_sizes[0], 2);
  CHECK(((float *)batch->host_data)[0] == 2.0f);
  freeTensor(w);
  freeTensor(batch);

  hpvm_status_t status = hpvm_rt_call_guarded(entry_read_short, NULL);
  CHECK_EQ_INT(hpvm_status_code(status), HPVM_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(hpvm_status_message(status), "holds 48 bytes; expected at least 64") != NULL);
  hpvm_status_free(status);
  status = hpvm_rt_call_guarded(entry_read_missing, NULL);
  CHECK(strstr(hpvm_status_message(status), "cannot open") != NULL);
  hpvm_status_free(status);

  /* start * image bytes past 2^64: it used to wrap to byte 0 and return image 0. */
  EXPECT_ERROR(entry_read_wrapping, NULL, "readInputBatch",
               "start 4611686018427387904 times 16 bytes an image is past 2^64 bytes");
  unlink(path);
}

/* Labels: computeAccuracy3 with fewer labels than the result has rows read past them;
 * counts near INT_MAX overflowed. */
static void entry_accuracy(void **args) { (void)computeAccuracy3(args[0], args[1]); }

static void entry_labels_huge(void **args) { (void)readLabels3(args[0], INT_MAX); }

static void entry_labels_wrapping(void **args) {
  (void)readLabelsBatch3(args[0], INT_MAX - 1, INT_MIN + 2);
}

static void entry_rt_control_wrapping(void **args) {
  /* end - start wraps to 2 in int arithmetic: the result's rows. */
  llvm_hpvm_invokeRtControl(args[1], args[0], INT_MAX, INT_MIN + 1);
}

static void entry_dump(void **args) { dumpOutput(args[0], "/dev/full"); }

static void test_labels_and_dumps(void) {
  char path[] = "/tmp/hpvm-tensor-labels-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  uint32_t values[4] = {1, 0, 1, 1};
  CHECK(write(fd, values, sizeof values) == (ssize_t)sizeof values);
  close(fd);
  struct Tensor *result = create2DTensor(float_type, 4, 2);
  float scores[8] = {0, 1, 1, 0, 0, 1, 1, 0};
  initTensorData(result, scores, sizeof scores);
  uint32_t *short_labels = readLabelsBatch3(path, 1, 3);
  void *args[] = {short_labels, result};
  EXPECT_ERROR(entry_accuracy, args, "computeAccuracy3", "hold 2 labels",
               "the result has 4 rows");
  free(short_labels);
  uint32_t *labels = readLabels3(path, 4);
  CHECK(computeAccuracy3(labels, result) == 75.0f);
  free(labels);

  void *path_args[] = {path, result};
  EXPECT_ERROR(entry_labels_huge, path_args, "readLabels3", "holds 16 bytes",
               "expected at least 8589934588");
  EXPECT_ERROR(entry_labels_wrapping, path_args, "readLabelsBatch3",
               "(start 2147483646, end -2147483646): expected 0 <= start < end");
  struct Tensor *two_rows = create2DTensor(float_type, 2, 2);
  void *control_args[] = {path, two_rows};
  EXPECT_ERROR(entry_rt_control_wrapping, control_args, "llvm_hpvm_invokeRtControl",
               "(start 2147483647, end -2147483647)");

  /* A full device: the write fails at fclose, which used to go unchecked. */
  void *dump_args[] = {result};
  EXPECT_ERROR(entry_dump, dump_args, "dumpOutput", "cannot write 32 bytes to '/dev/full'");
  freeTensor(two_rows);
  freeTensor(result);
  unlink(path);
}

int main(void) {
  test_registry();
  test_shape_check();
  test_batches();
  test_changed_fields();
  test_files();
  test_labels_and_dumps();
  printf("tensor_objects_test: ok\n");
  return 0;
}
