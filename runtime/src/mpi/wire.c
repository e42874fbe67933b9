/* Layouts and packing of distributed stream items (wire.h). */
#include "mpi/wire.h"

#include <stdlib.h>
#include <string.h>

static void *checked_malloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p)
    abort();
  return p;
}

void hpvm_mpi_bytes_append(hpvm_mpi_bytes_t *bytes, const void *data, size_t size) {
  if (bytes->size + size > bytes->capacity) {
    size_t capacity = bytes->capacity ? bytes->capacity : 256;
    while (capacity < bytes->size + size)
      capacity *= 2;
    char *grown = realloc(bytes->data, capacity);
    if (!grown)
      abort();
    bytes->data = grown;
    bytes->capacity = capacity;
  }
  if (size)
    memcpy(bytes->data + bytes->size, data, size);
  bytes->size += size;
}

/* Parses one field at `at` ("b8.8", "B72.8:3:4"); the text after it, or NULL when bad. */
static const char *parse_field(const char *at, const char *end, hpvm_mpi_field_t *field) {
  char *next = NULL;
  memset(field, 0, sizeof *field);
  field->kind = *at;
  if (at >= end || !strchr("dionbpIOBPF", field->kind))
    return NULL;
  unsigned long bytes = strtoul(at + 1, &next, 10), alignment = 0, rank = 0, element = 0;
  if (*next == '.')
    alignment = strtoul(next + 1, &next, 10);
  if (strchr("IOBPF", field->kind)) {
    if (*next != ':')
      return NULL;
    rank = strtoul(next + 1, &next, 10);
    if (*next != ':')
      return NULL;
    element = strtoul(next + 1, &next, 10);
    if (bytes != 24 + 16 * rank || rank > 64 || element == 0)
      return NULL;
  }
  if (next > end || bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      (next != end && *next != ',' && *next != ';' && *next != '\0'))
    return NULL;
  field->size = (uint32_t)bytes;
  field->align = (uint32_t)alignment;
  field->rank = (uint32_t)rank;
  field->element = (uint32_t)element;
  return next;
}

/* Parses one side's fields ("d4.4,i8.8,n8.8"); their offsets and the struct's size. */
static hpvm_status_t parse_fields(const char *text, size_t length, hpvm_mpi_field_t **fields,
                                  uint32_t *count, size_t *size) {
  *fields = NULL;
  *count = 0;
  *size = 0;
  size_t offset = 0, align = 1;
  const char *at = text, *end = text + length;
  while (at < end) {
    hpvm_mpi_field_t field;
    const char *next = parse_field(at, end, &field);
    if (!next)
      return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                "MPI layer: bad item layout at '%.*s': expected a field "
                                "<kind><size>.<align> with kind d, i, o, b, n or p, or "
                                "<I|O|B|P|F><size>.<align>:<rank>:<element size>",
                                (int)(end - at), at);
    offset = (offset + field.align - 1) & ~(size_t)(field.align - 1);
    field.offset = offset;
    *fields = realloc(*fields, sizeof **fields * (*count + 1));
    if (!*fields)
      abort();
    (*fields)[(*count)++] = field;
    offset += field.size;
    if (field.align > align)
      align = field.align;
    at = next < end && *next == ',' ? next + 1 : end;
  }
  *size = *count ? (offset + align - 1) & ~(align - 1) : 0;
  return NULL;
}

hpvm_status_t hpvm_mpi_layout_parse(const char *text, hpvm_mpi_layout_t *layout) {
  memset(layout, 0, sizeof *layout);
  const char *split = text ? strchr(text, ';') : NULL;
  if (!split)
    return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                              "MPI layer: bad item layout '%s': expected inputs;outputs",
                              text ? text : "(null)");
  hpvm_status_t status = parse_fields(text, (size_t)(split - text), &layout->in,
                                      &layout->in_count, &layout->in_size);
  if (!status)
    status = parse_fields(split + 1, strlen(split + 1), &layout->out, &layout->out_count,
                          &layout->out_size);
  for (uint32_t f = 0; !status && f < layout->in_count; ++f) {
    int buffer = strchr("iob", layout->in[f].kind) != NULL;
    if (strchr("IOBP", layout->in[f].kind) && layout->in[f].kind != 'P')
      continue;
    int sized = f + 1 < layout->in_count && layout->in[f + 1].kind == 'n';
    char kind = layout->in[f].kind;
    int orphan = strchr("pPF", kind) != NULL ||
                 (kind == 'n' && (f == 0 || !strchr("iob", layout->in[f - 1].kind)));
    if (buffer != sized || orphan || (buffer && layout->in[f].size != sizeof(void *)))
      status = hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                  "MPI layer: bad item layout '%s': input field %u is a "
                                  "buffer without its size, or a size without its buffer",
                                  text, f);
  }
  for (uint32_t o = 0; !status && o < layout->out_count; ++o)
    if (!strchr("dpPF", layout->out[o].kind))
      status = hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                  "MPI layer: bad item layout '%s': output field %u is a "
                                  "buffer; outputs are data and pointers", text, o);
  if (status)
    hpvm_mpi_layout_free(layout);
  return status;
}

void hpvm_mpi_layout_free(hpvm_mpi_layout_t *layout) {
  free(layout->in);
  free(layout->out);
  memset(layout, 0, sizeof *layout);
}

/* The unsigned value of an integer field. */
static uint64_t read_size(const char *item, const hpvm_mpi_field_t *field) {
  uint64_t value = 0;
  if (field->size == 1)
    value = *(const uint8_t *)(item + field->offset);
  else if (field->size == 2)
    memcpy(&value, item + field->offset, 2);
  else if (field->size == 4) {
    uint32_t v;
    memcpy(&v, item + field->offset, 4);
    value = v;
  } else
    memcpy(&value, item + field->offset, 8);
  return value;
}

/* The buffers of an item: per input field, its pointer, the bytes that travel (the largest
 * size of the fields holding that pointer), the field it aliases (-1: the first with that
 * pointer) and whether the graph may write it. */
typedef struct {
  char *pointer;
  uint64_t size;
  int64_t alias;
  int written;
} buffer_t;

/* The bytes a memref descriptor at `d` spans from its aligned pointer (0 when empty). */
static uint64_t memref_bytes(const char *d, const hpvm_mpi_field_t *field) {
  int64_t offset, elements = 1;
  memcpy(&offset, d + 16, sizeof offset);
  int64_t last = offset;
  for (uint32_t i = 0; i < field->rank; ++i) {
    int64_t size, stride;
    memcpy(&size, d + 24 + 8 * i, sizeof size);
    memcpy(&stride, d + 24 + 8 * (field->rank + i), sizeof stride);
    if (size <= 0)
      elements = 0;
    else
      last += (size - 1) * (stride < 0 ? -stride : stride);
  }
  return elements && last >= 0 ? (uint64_t)(last + 1) * field->element : 0;
}

/* Whether input field `field` is a buffer: a pointer with its size, or a memref. */
static int is_buffer(const hpvm_mpi_field_t *field) {
  return strchr("iobIOB", field->kind) != NULL;
}

static buffer_t *buffer_table(const hpvm_mpi_layout_t *layout, const char *item) {
  buffer_t *table = checked_malloc(sizeof *table * (layout->in_count + 1));
  for (uint32_t f = 0; f < layout->in_count; ++f) {
    table[f] = (buffer_t){NULL, 0, -1, 0};
    const hpvm_mpi_field_t *field = &layout->in[f];
    if (!is_buffer(field))
      continue;
    int memref = field->kind >= 'A' && field->kind <= 'Z';
    memcpy(&table[f].pointer, item + field->offset + (memref ? 8 : 0), sizeof(void *));
    table[f].size = memref ? memref_bytes(item + field->offset, field)
                           : read_size(item, &layout->in[f + 1]);
    table[f].written = field->kind != 'i' && field->kind != 'I';
    if (!table[f].pointer)
      continue;
    for (uint32_t g = 0; g < f; ++g)
      if (table[g].alias < 0 && table[g].pointer == table[f].pointer) {
        table[f].alias = g;
        if (table[f].size > table[g].size)
          table[g].size = table[f].size;
        table[g].written |= table[f].written;
        break;
      }
  }
  return table;
}

/* A field with bytes of its own on the wire: a non-null buffer seen first. */
static int travels(const buffer_t *b) { return b->pointer && b->alias < 0 && b->size; }

void hpvm_mpi_pack_item(const hpvm_mpi_layout_t *layout, const void *item,
                        hpvm_mpi_bytes_t *out) {
  hpvm_mpi_bytes_append(out, item, layout->in_size);
  buffer_t *table = buffer_table(layout, item);
  for (uint32_t f = 0; f < layout->in_count; ++f)
    if (travels(&table[f])) {
      uint64_t size = table[f].size;
      hpvm_mpi_bytes_append(out, &size, sizeof size);
      hpvm_mpi_bytes_append(out, table[f].pointer, size);
    }
  free(table);
}

/* Writes local buffer `mine` into input field `field` of `item` (both pointers of a
 * memref). */
static void set_pointer(char *item, const hpvm_mpi_field_t *field, void *mine) {
  memcpy(item + field->offset, &mine, sizeof mine);
  if (field->kind >= 'A' && field->kind <= 'Z')
    memcpy(item + field->offset + 8, &mine, sizeof mine);
}

int hpvm_mpi_unpack_item(const hpvm_mpi_layout_t *layout, const char *data, size_t size,
                         hpvm_mpi_local_item_t *local) {
  memset(local, 0, sizeof *local);
  if (size < layout->in_size)
    return 0;
  local->item = checked_malloc(layout->in_size);
  memcpy(local->item, data, layout->in_size);
  local->count = layout->in_count;
  local->buffers = calloc(layout->in_count + 1, sizeof(void *));
  local->originals = calloc(layout->in_count + 1, sizeof(void *));
  if (!local->buffers || !local->originals)
    abort();
  buffer_t *table = buffer_table(layout, local->item);
  size_t at = layout->in_size;
  int ok = 1;
  for (uint32_t f = 0; ok && f < layout->in_count; ++f) {
    if (!table[f].pointer || !is_buffer(&layout->in[f]))
      continue;
    void *mine = NULL;
    if (table[f].alias >= 0) {
      mine = local->buffers[table[f].alias];
    } else if (!table[f].size) {
      mine = local->buffers[f] = checked_malloc(1);
    } else {
      uint64_t bytes;
      ok = at + sizeof bytes <= size;
      if (ok)
        memcpy(&bytes, data + at, sizeof bytes);
      ok = ok && bytes == table[f].size && at + sizeof bytes + bytes <= size;
      if (ok) {
        mine = local->buffers[f] = checked_malloc(bytes);
        memcpy(mine, data + at + sizeof bytes, bytes);
        if (table[f].written) {
          local->originals[f] = checked_malloc(bytes);
          memcpy(local->originals[f], mine, bytes);
        }
        at += sizeof bytes + bytes;
      }
    }
    set_pointer(local->item, &layout->in[f], mine);
  }
  free(table);
  if (!ok || at != size) {
    hpvm_mpi_local_item_free(local);
    return 0;
  }
  return 1;
}

void hpvm_mpi_local_item_free(hpvm_mpi_local_item_t *local) {
  for (uint32_t f = 0; local->buffers && f < local->count; ++f) {
    free(local->buffers[f]);
    free(local->originals[f]);
  }
  free(local->buffers);
  free(local->originals);
  free(local->item);
  memset(local, 0, sizeof *local);
}

/* Output pointers travel as (field + 1) << 40 | offset into that field's buffer; 0 is NULL. */
#define HPVM_MPI_OFFSET_BITS 40

/* The code of pointer `p` among the item's buffers; 0 for NULL, ~0 when outside them all. */
static uint64_t pointer_code(const hpvm_mpi_layout_t *layout, const buffer_t *table,
                             const char *p) {
  if (!p)
    return 0;
  for (uint32_t f = 0; f < layout->in_count; ++f)
    if (table[f].pointer && table[f].alias < 0 && p >= table[f].pointer &&
        p <= table[f].pointer + table[f].size)
      return ((uint64_t)(f + 1) << HPVM_MPI_OFFSET_BITS) | (uint64_t)(p - table[f].pointer);
  return ~(uint64_t)0;
}

/* Appends the runs of bytes where `now` differs from `before`: a count, then each run's
 * offset, length and bytes (runs closer than 32 bytes merged). */
static void append_changes(const char *before, const char *now, uint64_t size,
                           hpvm_mpi_bytes_t *out) {
  size_t count_at = out->size;
  uint64_t count = 0;
  hpvm_mpi_bytes_append(out, &count, sizeof count);
  for (uint64_t i = 0; i < size;) {
    if (before[i] == now[i]) {
      ++i;
      continue;
    }
    uint64_t start = i, last = i;
    for (; i < size && i - last <= 32; ++i)
      if (before[i] != now[i])
        last = i;
    uint64_t length = last + 1 - start;
    hpvm_mpi_bytes_append(out, &start, sizeof start);
    hpvm_mpi_bytes_append(out, &length, sizeof length);
    hpvm_mpi_bytes_append(out, now + start, length);
    ++count;
    i = last + 1;
  }
  memcpy(out->data + count_at, &count, sizeof count);
}

/* The code of an output memref whose bytes travel with the result ('F'). */
#define HPVM_MPI_BY_VALUE (~(uint64_t)0 - 1)

/* Whether output field `field` holds pointers (one, or a memref's two). */
static int pointer_count(const hpvm_mpi_field_t *field) {
  return field->kind == 'p' ? 1 : strchr("PF", field->kind) ? 2 : 0;
}

/* Encodes the pointers of output field `o` at `at` (a copy of the output); an 'F' memref
 * outside the item's buffers is marked to travel by value (*by_value set). */
static hpvm_status_t encode_output(const hpvm_mpi_layout_t *layout, const buffer_t *table,
                                   uint32_t o, char *at, int *by_value) {
  const hpvm_mpi_field_t *field = &layout->out[o];
  uint64_t codes[2];
  for (int k = 0; k < pointer_count(field); ++k) {
    char *p;
    memcpy(&p, at + 8 * k, sizeof p);
    codes[k] = pointer_code(layout, table, p);
  }
  /* A fresh buffer of the graph's (its aligned pointer outside the item's buffers). */
  *by_value = field->kind == 'F' && codes[1] == ~(uint64_t)0;
  for (int k = 0; k < pointer_count(field); ++k) {
    if (*by_value)
      codes[k] = HPVM_MPI_BY_VALUE;
    if (codes[k] == ~(uint64_t)0)
      return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                "MPI layer: output %u of an item points outside the "
                                "item's buffers; it cannot travel back to rank 0", o);
    memcpy(at + 8 * k, &codes[k], sizeof codes[k]);
  }
  return NULL;
}

hpvm_status_t hpvm_mpi_pack_result(const hpvm_mpi_layout_t *layout,
                                   const hpvm_mpi_local_item_t *local, const void *output,
                                   hpvm_mpi_bytes_t *out) {
  buffer_t *table = buffer_table(layout, local->item);
  size_t start = out->size;
  hpvm_mpi_bytes_append(out, output, layout->out_size);
  int *by_value = calloc(layout->out_count + 1, sizeof *by_value);
  if (!by_value)
    abort();
  hpvm_status_t status = NULL;
  for (uint32_t o = 0; !status && o < layout->out_count; ++o)
    status = encode_output(layout, table, o, out->data + start + layout->out[o].offset,
                           &by_value[o]);
  for (uint32_t o = 0; !status && o < layout->out_count; ++o) {
    if (!by_value[o])
      continue;
    const char *descriptor = (const char *)output + layout->out[o].offset;
    char *aligned;
    memcpy(&aligned, descriptor + 8, sizeof aligned);
    uint64_t size = memref_bytes(descriptor, &layout->out[o]);
    hpvm_mpi_bytes_append(out, &size, sizeof size);
    hpvm_mpi_bytes_append(out, aligned, size);
  }
  for (uint32_t f = 0; !status && f < layout->in_count; ++f)
    if (travels(&table[f]) && table[f].written)
      append_changes(local->originals[f], table[f].pointer, table[f].size, out);
  /* The worker's copies of the fresh buffers are no one's now (the graph allocated them as
   * compiled code allocates memrefs). */
  for (uint32_t o = 0; !status && o < layout->out_count; ++o)
    if (by_value[o]) {
      void *allocated;
      memcpy(&allocated, (const char *)output + layout->out[o].offset, sizeof allocated);
      _mlir_memref_to_llvm_free(allocated);
    }
  free(by_value);
  free(table);
  return status;
}

/* Applies the runs of append_changes to `to` (`size` bytes); false when they do not fit. */
static int apply_changes(char *to, uint64_t size, const char *data, size_t total, size_t *at) {
  uint64_t count;
  if (*at + sizeof count > total)
    return 0;
  memcpy(&count, data + *at, sizeof count);
  *at += sizeof count;
  for (uint64_t r = 0; r < count; ++r) {
    uint64_t start, length;
    if (*at + 2 * sizeof start > total)
      return 0;
    memcpy(&start, data + *at, sizeof start);
    memcpy(&length, data + *at + sizeof start, sizeof length);
    *at += 2 * sizeof start;
    if (start > size || length > size - start || length > total - *at)
      return 0;
    memcpy(to + start, data + *at, length);
    *at += length;
  }
  return 1;
}

/* Reads the bytes of an output memref that travelled by value into a buffer of its own,
 * which `descriptor` then points to (NULL: the bytes are skipped); false when short. The
 * buffer comes from compiled code's allocator, whose _free the program calls on it as it
 * does on the graph's buffers on one process. */
static int receive_by_value(char *descriptor, const char *data, size_t total, size_t *at) {
  uint64_t size;
  if (*at + sizeof size > total)
    return 0;
  memcpy(&size, data + *at, sizeof size);
  *at += sizeof size;
  if (size > total - *at)
    return 0;
  if (descriptor) {
    void *mine = _mlir_memref_to_llvm_aligned_alloc(64, size ? size : 1);
    if (!mine)
      abort();
    memcpy(mine, data + *at, size);
    memcpy(descriptor, &mine, sizeof mine);
    memcpy(descriptor + 8, &mine, sizeof mine);
  }
  *at += size;
  return 1;
}

/* Writes output field `field` of `output` (its codes as received) with the host's pointers
 * into the buffers of the item (`table`). */
static void decode_output(const hpvm_mpi_layout_t *layout, const buffer_t *table,
                          const hpvm_mpi_field_t *field, char *output) {
  for (int k = 0; k < pointer_count(field); ++k) {
    uint64_t code;
    memcpy(&code, output + field->offset + 8 * k, sizeof code);
    uint64_t f = code >> HPVM_MPI_OFFSET_BITS;
    char *p = NULL;
    if (code != HPVM_MPI_BY_VALUE && f && f <= layout->in_count)
      p = table[f - 1].pointer + (code & (((uint64_t)1 << HPVM_MPI_OFFSET_BITS) - 1));
    memcpy(output + field->offset + 8 * k, &p, sizeof p);
  }
}

int hpvm_mpi_unpack_result(const hpvm_mpi_layout_t *layout, const void *item,
                           const char *data, size_t size, void *output) {
  if (size < layout->out_size)
    return 0;
  buffer_t *table = buffer_table(layout, item);
  size_t at = layout->out_size;
  int ok = 1;
  if (output) {
    memcpy(output, data, layout->out_size);
    for (uint32_t o = 0; o < layout->out_count; ++o)
      decode_output(layout, table, &layout->out[o], output);
  }
  for (uint32_t o = 0; ok && o < layout->out_count; ++o) {
    const hpvm_mpi_field_t *field = &layout->out[o];
    uint64_t code;
    memcpy(&code, data + field->offset + 8, sizeof code);
    if (field->kind == 'F' && code == HPVM_MPI_BY_VALUE)
      ok = receive_by_value(output ? (char *)output + field->offset : NULL, data, size, &at);
  }
  for (uint32_t f = 0; ok && f < layout->in_count; ++f)
    if (travels(&table[f]) && table[f].written)
      ok = apply_changes(table[f].pointer, table[f].size, data, size, &at);
  free(table);
  return ok && at == size;
}
