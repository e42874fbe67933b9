/* The items of a distributed stream on the wire: their layout (from the compiler,
 * hpvm_rt_mpi_describe_items), and the packing of a pushed item with its buffers and of a
 * result with the buffers the graph wrote. */
#ifndef HPVM_RT_MPI_WIRE_H
#define HPVM_RT_MPI_WIRE_H

#include <hpvm/hpvm_rt.h>

#include <stddef.h>
#include <stdint.h>

/* One field of an item: its kind (d data; i, o, b a buffer read, written or both; n the
 * size in bytes of the buffer before it; p a pointer among the outputs; I, O, B, P the same
 * for memref descriptors, of `rank` dimensions of `element`-byte elements; F an output memref
 * whose buffer the graph allocated and hands to the host, a tensor's), size and offset. */
typedef struct {
  char kind;
  uint32_t size, align, rank, element;
  size_t offset;
} hpvm_mpi_field_t;

typedef struct {
  hpvm_mpi_field_t *in, *out;
  uint32_t in_count, out_count;
  /* The packed struct sizes the fields give (natural alignment). */
  size_t in_size, out_size;
} hpvm_mpi_layout_t;

/* A growable byte buffer. */
typedef struct {
  char *data;
  size_t size, capacity;
} hpvm_mpi_bytes_t;

/* Parses "<fields>;<fields>" (DescribeStreamItems.cpp); INVALID_ARGUMENT naming the field. */
hpvm_status_t hpvm_mpi_layout_parse(const char *text, hpvm_mpi_layout_t *layout);
void hpvm_mpi_layout_free(hpvm_mpi_layout_t *layout);

void hpvm_mpi_bytes_append(hpvm_mpi_bytes_t *bytes, const void *data, size_t size);

/* Rank 0: appends the item and the bytes of its buffers. */
void hpvm_mpi_pack_item(const hpvm_mpi_layout_t *layout, const void *item,
                        hpvm_mpi_bytes_t *out);

/* A worker's copy of an item: the item with its pointers on this rank's buffers. */
typedef struct {
  char *item;
  void **buffers;   /* per input field; NULL for non-buffers, nulls and aliases */
  void **originals; /* the bytes received of the buffers the graph may write */
  uint32_t count;
} hpvm_mpi_local_item_t;

/* A worker: the item of `data` (pack_item's bytes) with buffers of its own; false when the
 * bytes are short. */
int hpvm_mpi_unpack_item(const hpvm_mpi_layout_t *layout, const char *data, size_t size,
                         hpvm_mpi_local_item_t *local);
void hpvm_mpi_local_item_free(hpvm_mpi_local_item_t *local);

/* A worker: appends the popped `output` (its pointers as buffer index + offset), the bytes of
 * the F outputs outside the item's buffers (their buffers are freed then) and the bytes the
 * graph changed in the buffers it may write (runs of bytes that differ from those received);
 * an error when another output pointer is outside every buffer of the item. */
hpvm_status_t hpvm_mpi_pack_result(const hpvm_mpi_layout_t *layout,
                                   const hpvm_mpi_local_item_t *local, const void *output,
                                   hpvm_mpi_bytes_t *out);

/* Rank 0: copies the changed bytes of a result back into the host's buffers of `item`
 * (the pushed item) and writes the output (its pointers into those buffers, an F output sent
 * by value in a buffer of its own that the program frees) to `output` (NULL: dropped); false
 * when the bytes do not match the layout. */
int hpvm_mpi_unpack_result(const hpvm_mpi_layout_t *layout, const void *item,
                           const char *data, size_t size, void *output);

#endif
