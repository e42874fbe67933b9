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

/* Parses one side's fields ("d4.4,i8.8,n8.8"); their offsets and the struct's size. */
static hpvm_status_t parse_fields(const char *text, size_t length, hpvm_mpi_field_t **fields,
                                  uint32_t *count, size_t *size) {
  *fields = NULL;
  *count = 0;
  *size = 0;
  size_t offset = 0, align = 1;
  const char *at = text, *end = text + length;
  while (at < end) {
    char kind = *at;
    char *next = NULL;
    unsigned long bytes = strtoul(at + 1, &next, 10), alignment = 0;
    if (next && *next == '.')
      alignment = strtoul(next + 1, &next, 10);
    if (!strchr("dionbp", kind) || kind == '\0' || !next || next > end || bytes == 0 ||
        alignment == 0 || (alignment & (alignment - 1)) != 0 || (*next && *next != ',' &&
                                                                 next != end))
      return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                "MPI layer: bad item layout at '%.*s': expected a field "
                                "<kind><size>.<align> with kind d, i, o, b, n or p",
                                (int)(end - at), at);
    offset = (offset + alignment - 1) & ~(size_t)(alignment - 1);
    *fields = realloc(*fields, sizeof **fields * (*count + 1));
    if (!*fields)
      abort();
    (*fields)[(*count)++] = (hpvm_mpi_field_t){kind, (uint32_t)bytes, (uint32_t)alignment,
                                               offset};
    offset += bytes;
    if (alignment > align)
      align = alignment;
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
    int sized = f + 1 < layout->in_count && layout->in[f + 1].kind == 'n';
    if (buffer != sized || (buffer && layout->in[f].size != sizeof(void *)))
      status = hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                  "MPI layer: bad item layout '%s': input field %u is a "
                                  "buffer without its size, or a size without its buffer",
                                  text, f);
  }
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

static buffer_t *buffer_table(const hpvm_mpi_layout_t *layout, const char *item) {
  buffer_t *table = checked_malloc(sizeof *table * (layout->in_count + 1));
  for (uint32_t f = 0; f < layout->in_count; ++f) {
    table[f] = (buffer_t){NULL, 0, -1, 0};
    const hpvm_mpi_field_t *field = &layout->in[f];
    if (!strchr("iob", field->kind))
      continue;
    memcpy(&table[f].pointer, item + field->offset, sizeof(void *));
    table[f].size = read_size(item, &layout->in[f + 1]);
    table[f].written = field->kind != 'i';
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

int hpvm_mpi_unpack_item(const hpvm_mpi_layout_t *layout, const char *data, size_t size,
                         hpvm_mpi_local_item_t *local) {
  memset(local, 0, sizeof *local);
  if (size < layout->in_size)
    return 0;
  local->item = checked_malloc(layout->in_size);
  memcpy(local->item, data, layout->in_size);
  local->count = layout->in_count;
  local->buffers = calloc(layout->in_count + 1, sizeof(void *));
  if (!local->buffers)
    abort();
  buffer_t *table = buffer_table(layout, local->item);
  size_t at = layout->in_size;
  int ok = 1;
  for (uint32_t f = 0; ok && f < layout->in_count; ++f) {
    if (!table[f].pointer || !strchr("iob", layout->in[f].kind))
      continue;
    void *mine = NULL;
    if (table[f].alias >= 0) {
      mine = local->buffers[table[f].alias] ? local->buffers[table[f].alias]
                                            : (void *)NULL;
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
        at += sizeof bytes + bytes;
      }
    }
    memcpy(local->item + layout->in[f].offset, &mine, sizeof mine);
  }
  free(table);
  if (!ok || at != size) {
    hpvm_mpi_local_item_free(local);
    return 0;
  }
  return 1;
}

void hpvm_mpi_local_item_free(hpvm_mpi_local_item_t *local) {
  for (uint32_t f = 0; local->buffers && f < local->count; ++f)
    free(local->buffers[f]);
  free(local->buffers);
  free(local->item);
  memset(local, 0, sizeof *local);
}

/* Output pointers travel as (field + 1) << 40 | offset into that field's buffer; 0 is NULL. */
#define HPVM_MPI_OFFSET_BITS 40

hpvm_status_t hpvm_mpi_pack_result(const hpvm_mpi_layout_t *layout,
                                   const hpvm_mpi_local_item_t *local, const void *output,
                                   hpvm_mpi_bytes_t *out) {
  buffer_t *table = buffer_table(layout, local->item);
  size_t start = out->size;
  hpvm_mpi_bytes_append(out, output, layout->out_size);
  for (uint32_t o = 0; o < layout->out_count; ++o) {
    if (layout->out[o].kind != 'p')
      continue;
    char *p;
    memcpy(&p, (const char *)output + layout->out[o].offset, sizeof p);
    uint64_t code = 0;
    for (uint32_t f = 0; p && !code && f < layout->in_count; ++f)
      if (table[f].pointer && table[f].alias < 0 && p >= table[f].pointer &&
          p <= table[f].pointer + table[f].size)
        code = ((uint64_t)(f + 1) << HPVM_MPI_OFFSET_BITS) | (uint64_t)(p - table[f].pointer);
    if (p && !code) {
      free(table);
      return hpvm_status_create(HPVM_STATUS_INVALID_ARGUMENT,
                                "MPI layer: output %u of an item points outside the item's "
                                "buffers; it cannot travel back to rank 0", o);
    }
    memcpy(out->data + start + layout->out[o].offset, &code, sizeof code);
  }
  for (uint32_t f = 0; f < layout->in_count; ++f)
    if (travels(&table[f]) && table[f].written)
      hpvm_mpi_bytes_append(out, table[f].pointer, table[f].size);
  free(table);
  return NULL;
}

int hpvm_mpi_unpack_result(const hpvm_mpi_layout_t *layout, const void *item,
                           const char *data, size_t size, void *output) {
  if (size < layout->out_size)
    return 0;
  buffer_t *table = buffer_table(layout, item);
  size_t at = layout->out_size;
  for (uint32_t f = 0; f < layout->in_count; ++f)
    if (travels(&table[f]) && table[f].written) {
      if (at + table[f].size > size) {
        free(table);
        return 0;
      }
      memcpy(table[f].pointer, data + at, table[f].size);
      at += table[f].size;
    }
  if (output) {
    memcpy(output, data, layout->out_size);
    for (uint32_t o = 0; o < layout->out_count; ++o) {
      if (layout->out[o].kind != 'p')
        continue;
      uint64_t code;
      memcpy(&code, data + layout->out[o].offset, sizeof code);
      uint64_t f = code >> HPVM_MPI_OFFSET_BITS;
      char *p = NULL;
      if (f && f <= layout->in_count)
        p = table[f - 1].pointer + (code & (((uint64_t)1 << HPVM_MPI_OFFSET_BITS) - 1));
      memcpy((char *)output + layout->out[o].offset, &p, sizeof p);
    }
  }
  free(table);
  return at == size;
}
