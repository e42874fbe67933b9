//===- ParameterArchive.h - A model's weights in one file ------*- C++ -*-===//
// A parameter archive holds named byte arrays (a model's weights) that a
// module refers to by `dense_resource<key>` instead of carrying them as text.
// The format (little-endian):
//
//   bytes 0..7    "HPVMPRM1"
//   bytes 8..15   u64 number of entries N
//   bytes 16..23  u64 size of the index, in bytes
//   the index     N entries: u64 offset, u64 size, u32 key length, the key's
//                 bytes, zeros to the next multiple of 8
//   the data      each entry's bytes at its offset (after the index; the
//                 writers align offsets to 64)
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
  /// Opens and checks the archive at `path` (mapped, not read); on failure,
  /// `error` says what was expected and what was found.
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

} // namespace mlir::hpvm

#endif // HPVM_TRANSFORMS_PARAMETERARCHIVE_H
