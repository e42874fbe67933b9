//===- ParameterArchive.cpp - Reading a parameter archive ----------------===//
#include "HPVM/Transforms/ParameterArchive.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::hpvm;

namespace {
constexpr llvm::StringLiteral kMagic("HPVMPRM1");
constexpr uint64_t kHeaderBytes = 24;

uint64_t read64(const char *at) {
  return llvm::support::endian::read64le(at);
}
} // namespace

std::optional<ParameterArchive> ParameterArchive::open(StringRef given,
                                                       std::string &error) {
  SmallString<256> absolute(given);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  std::string where = "the parameter archive '" + absolute.str().str() + "'";
  auto file = llvm::MemoryBuffer::getFile(absolute, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    error = "cannot read " + where + ": " + file.getError().message();
    return std::nullopt;
  }
  ParameterArchive archive;
  archive.path = absolute.str().str();
  archive.buffer = std::move(*file);
  StringRef data = archive.buffer->getBuffer();
  uint64_t fileSize = data.size();
  if (fileSize < kHeaderBytes || !data.starts_with(kMagic)) {
    error = where + " does not start with \"HPVMPRM1\" and a 24-byte header (" +
            std::to_string(fileSize) + " bytes); expected an archive written by the "
            "hpvm Python package";
    return std::nullopt;
  }
  uint64_t count = read64(data.data() + 8);
  uint64_t indexSize = read64(data.data() + 16);
  if (indexSize > fileSize - kHeaderBytes || count > indexSize / 24) {
    error = where + " has an index of " + std::to_string(indexSize) + " bytes for " +
            std::to_string(count) + " entries in a file of " + std::to_string(fileSize) +
            " bytes; expected at least 24 bytes per entry, within the file";
    return std::nullopt;
  }
  uint64_t at = kHeaderBytes, end = kHeaderBytes + indexSize;
  for (uint64_t i = 0; i < count; ++i) {
    std::string entryName = "entry " + std::to_string(i);
    if (end - at < 20) {
      error = where + ": " + entryName + " runs past the index (" +
              std::to_string(indexSize) + " bytes)";
      return std::nullopt;
    }
    ParameterEntry entry{read64(data.data() + at), read64(data.data() + at + 8)};
    uint64_t keySize = llvm::support::endian::read32le(data.data() + at + 16);
    at += 20;
    if (keySize == 0 || keySize > end - at) {
      error = where + ": " + entryName + " has a key of " + std::to_string(keySize) +
              " bytes; expected 1 or more, within the index";
      return std::nullopt;
    }
    StringRef key = data.substr(at, keySize);
    at = std::min(end, llvm::alignTo(at + keySize, 8));
    if (entry.offset < end || entry.offset > fileSize || entry.size > fileSize - entry.offset) {
      error = where + ": the entry '" + key.str() + "' claims bytes " +
              std::to_string(entry.offset) + ".." + std::to_string(entry.offset) + "+" +
              std::to_string(entry.size) + "; expected them after the index (byte " +
              std::to_string(end) + ") and within the file (" + std::to_string(fileSize) +
              " bytes)";
      return std::nullopt;
    }
    if (!archive.entries.try_emplace(key, entry).second) {
      error = where + " holds the key '" + key.str() + "' twice; expected each key once";
      return std::nullopt;
    }
  }
  return archive;
}

const ParameterEntry *ParameterArchive::lookup(StringRef key) const {
  auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

ArrayRef<char> ParameterArchive::bytes(const ParameterEntry &entry) const {
  return ArrayRef<char>(buffer->getBufferStart() + entry.offset, entry.size);
}
