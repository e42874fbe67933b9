//===- ParameterArchive.h - A model's weights in one file ------*- C++ -*-===//
// A parameter archive holds named byte arrays (a model's weights) that a
// module refers to by `dense_resource<key>` instead of carrying them as text.
// The format (little-endian; docs/Transforms.md, hpvm-externalize-constants):
//
//   bytes 0..7    "HPVMPRM2"
//   bytes 8..15   u64 number of entries N
//   bytes 16..23  u64 size of the index, in bytes
//   bytes 24..27  u32 CRC-32 of bytes 0..23 followed by the index
//   bytes 28..31  zero
//   the index     N entries: u64 offset, u64 size, u32 CRC-32 of the entry's
//                 bytes, u32 key length, the key's bytes, zeros to the next
//                 multiple of 8
//   the data      each entry's bytes at its offset (after the index; no two
//                 entries share a byte; the writers align offsets to 64)
//
// CRC-32 is zlib's (ISO-HDLC, the one of Python's zlib.crc32). The first
// version ("HPVMPRM1": a 24-byte header and entries without checksums) is
// refused: nothing in it tells a shifted or overlapping entry from weights.
//
// Writers: the Python package (hpvm.tensor, hpvm.onnx). Readers: the pass
// hpvm-externalize-constants.
#ifndef HPVM_TRANSFORMS_PARAMETERARCHIVE_H
#define HPVM_TRANSFORMS_PARAMETERARCHIVE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::hpvm {

struct ParameterEntry {
  uint64_t offset = 0;
  uint64_t size = 0;
};

class ParameterArchive {
public:
  /// Opens and checks the archive at `path`: a regular file (after links),
  /// mapped, its index and every entry's bytes matching their checksums, no
  /// two entries sharing bytes. On failure, `error` says what was expected and
  /// what was found.
  static std::optional<ParameterArchive> open(StringRef path, std::string &error);

  const ParameterEntry *lookup(StringRef key) const;
  ArrayRef<char> bytes(const ParameterEntry &entry) const;
  /// The absolute path of the archive.
  StringRef getPath() const { return path; }
  size_t size() const { return entries.size(); }

private:
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  llvm::StringMap<ParameterEntry> entries;
};

/// Opens `path` when it is a regular file (after links), mapped or read at the
/// size the opened file has: a device (/dev/zero) would be read until memory
/// runs out, a named pipe would block forever. On failure, `error` says what
/// `where` (e.g. "the knob configuration 'k.json'") is and what was expected.
std::unique_ptr<llvm::MemoryBuffer> openRegularFile(StringRef path, const std::string &where,
                                                    std::string &error);

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_PARAMETERARCHIVE_H
