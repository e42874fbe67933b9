/* Packed forms of constant operands (a model's weights): made once per operand and layout, and
 * kept for the rest of the process, so that a convolution whose filter is a compile-time
 * constant does not re-pack its weights on every call (onnxruntime packs them once too).
 *
 * The compiler calls the *_constant_* kernels only with operands that are constants of the
 * program (read-only globals): their bytes never change, so the address of the data and the
 * parameters of the layout name the packed form. Each program (executable or shared library)
 * links its own copy of the runtime, and with it its own table. */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_t {
  const void *source, *bias;
  int64_t layout[HPVM_TENSOR_LAYOUT_WORDS];
  float *packed; /* NULL: the slot is empty */
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *table;
static size_t capacity, used;

static size_t hash_of(const void *source, const void *bias, const int64_t *layout) {
  uint64_t h = (uint64_t)(uintptr_t)source * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)bias;
  for (int i = 0; i < HPVM_TENSOR_LAYOUT_WORDS; ++i)
    h = (h ^ (uint64_t)layout[i]) * 0x100000001B3ull;
  return (size_t)(h ^ (h >> 29));
}

static int same(const entry_t *e, const void *source, const void *bias, const int64_t *layout) {
  return e->source == source && e->bias == bias &&
         memcmp(e->layout, layout, sizeof(e->layout)) == 0;
}

/* The slot of the key: its entry, or the empty slot where it goes. */
static entry_t *slot(entry_t *slots, size_t count, const void *source, const void *bias,
                     const int64_t *layout) {
  size_t i = hash_of(source, bias, layout) & (count - 1);
  while (slots[i].packed && !same(&slots[i], source, bias, layout))
    i = (i + 1) & (count - 1);
  return &slots[i];
}

/* Room for one more entry (the table at most half full); 0 without memory. */
static int reserve(void) {
  if (2 * (used + 1) <= capacity)
    return 1;
  size_t grown = capacity ? 2 * capacity : 64;
  entry_t *slots = calloc(grown, sizeof(entry_t));
  if (!slots)
    return 0;
  for (size_t i = 0; i < capacity; ++i)
    if (table[i].packed)
      *slot(slots, grown, table[i].source, table[i].bias, table[i].layout) = table[i];
  free(table);
  table = slots;
  capacity = grown;
  return 1;
}

const float *hpvm_tensor_packed_constant(const void *source, const void *bias,
                                         const int64_t layout[HPVM_TENSOR_LAYOUT_WORDS],
                                         size_t floats, hpvm_tensor_pack_fn pack,
                                         void *context) {
  pthread_mutex_lock(&lock);
  entry_t *found = capacity ? slot(table, capacity, source, bias, layout) : NULL;
  if (found && found->packed) {
    float *packed = found->packed;
    pthread_mutex_unlock(&lock);
    return packed;
  }
  /* Packed under the lock: two threads that need the same weights pack them once. */
  float *packed = NULL;
  if (reserve()) {
    size_t bytes = (sizeof(float) * (floats ? floats : 1) + 63) / 64 * 64;
    packed = aligned_alloc(64, bytes);
  }
  if (packed) {
    pack(context, packed);
    entry_t *e = slot(table, capacity, source, bias, layout);
    e->source = source, e->bias = bias, e->packed = packed;
    memcpy(e->layout, layout, sizeof(e->layout));
    ++used;
  }
  pthread_mutex_unlock(&lock);
  return packed;
}
