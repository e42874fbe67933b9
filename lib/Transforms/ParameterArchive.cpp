//===- ParameterArchive.cpp - Reading a parameter archive ----------------===//
#include "HPVM/Transforms/ParameterArchive.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::hpvm;

namespace {
constexpr llvm::StringLiteral kMagic("HPVMPRM2");
constexpr llvm::StringLiteral kFirstMagic("HPVMPRM1");
constexpr uint64_t kHeaderBytes = 32;
/// The fixed part of an index entry: offset, size, checksum, key length.
constexpr uint64_t kEntryBytes = 24;

uint64_t read64(const char *at) { return llvm::support::endian::read64le(at); }
uint32_t read32(const char *at) { return llvm::support::endian::read32le(at); }

uint32_t crc32(uint32_t crc, StringRef bytes) {
  return llvm::crc32(crc, ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            bytes.size()));
}

std::string hex32(uint32_t value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format_hex(value, 10);
  return text;
}

/// What a file that is not a regular file is, in words.
const char *kindOf(llvm::sys::fs::file_type type) {
  using llvm::sys::fs::file_type;
  switch (type) {
  case file_type::directory_file:
    return "a folder";
  case file_type::character_file:
    return "a character device";
  case file_type::block_file:
    return "a block device";
  case file_type::fifo_file:
    return "a named pipe";
  case file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

struct Placement {
  uint64_t offset, size;
  StringRef key;
};
} // namespace

std::unique_ptr<llvm::MemoryBuffer>
mlir::hpvm::openRegularFile(StringRef absolute, const std::string &where, std::string &error) {
  namespace fs = llvm::sys::fs;
  fs::file_status status;
  if (std::error_code code = fs::status(absolute, status, /*follow=*/true)) {
    error = "cannot read " + where + ": " + code.message();
    return nullptr;
  }
  auto refuse = [&](fs::file_type type) {
    std::string link;
    fs::file_status own;
    SmallString<256> target;
    if (!fs::status(absolute, own, /*follow=*/false) &&
        own.type() == fs::file_type::symlink_file && !fs::real_path(absolute, target))
      link = " (a link to '" + target.str().str() + "')";
    error = where + link + " is " + kindOf(type) +
            "; expected a regular file";
    return nullptr;
  };
  if (status.type() != fs::file_type::regular_file)
    return refuse(status.type());
  llvm::Expected<fs::file_t> opened = fs::openNativeFileForRead(absolute);
  if (!opened) {
    error = "cannot read " + where + ": " + llvm::toString(opened.takeError());
    return nullptr;
  }
  fs::file_t file = *opened;
  // The file that was opened, which a rename may have made another one.
  std::error_code code = fs::status(file, status);
  if (!code && status.type() != fs::file_type::regular_file) {
    fs::closeFile(file);
    return refuse(status.type());
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      code ? llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>>(code)
           : llvm::MemoryBuffer::getOpenFile(file, absolute, status.getSize(),
                                             /*RequiresNullTerminator=*/false);
  fs::closeFile(file);
  if (!buffer) {
    error = "cannot read " + where + ": " + buffer.getError().message();
    return nullptr;
  }
  return std::move(*buffer);
}

std::optional<ParameterArchive> ParameterArchive::open(StringRef given,
                                                       std::string &error) {
  size_t nul = given.find('\0');
  if (nul != StringRef::npos) {
    std::string shown;
    llvm::raw_string_ostream stream(shown);
    llvm::printEscapedString(given, stream);
    error = "the parameter archive's path '" + shown + "' holds a NUL byte (at byte " +
            std::to_string(nul) + "); expected a file name without NUL bytes, which would "
            "end it there";
    return std::nullopt;
  }
  SmallString<256> absolute(given);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  std::string where = "the parameter archive '" + absolute.str().str() + "'";
  std::unique_ptr<llvm::MemoryBuffer> file = openRegularFile(absolute, where, error);
  if (!file)
    return std::nullopt;
  ParameterArchive archive;
  archive.path = absolute.str().str();
  archive.buffer = std::move(file);
  StringRef data = archive.buffer->getBuffer();
  uint64_t fileSize = data.size();
  if (data.starts_with(kFirstMagic)) {
    error = where + " is of the first format (\"HPVMPRM1\"), which has no checksums; "
            "expected \"HPVMPRM2\": write it again with the hpvm Python package "
            "(TensorGraph.save, hpvm-onnx)";
    return std::nullopt;
  }
  if (fileSize < kHeaderBytes || !data.starts_with(kMagic)) {
    error = where + " does not start with \"HPVMPRM2\" and a 32-byte header (" +
            std::to_string(fileSize) + " bytes); expected an archive written by the "
            "hpvm Python package";
    return std::nullopt;
  }
  uint64_t count = read64(data.data() + 8);
  uint64_t indexSize = read64(data.data() + 16);
  if (indexSize > fileSize - kHeaderBytes || count > indexSize / kEntryBytes) {
    error = where + " has an index of " + std::to_string(indexSize) + " bytes for " +
            std::to_string(count) + " entries in a file of " + std::to_string(fileSize) +
            " bytes; expected at least 24 bytes per entry, within the file";
    return std::nullopt;
  }
  if (uint32_t reserved = read32(data.data() + 28)) {
    error = where + ": bytes 28..31 of its header hold " + hex32(reserved) +
            "; expected zeros";
    return std::nullopt;
  }
  uint32_t stored = read32(data.data() + 24);
  uint32_t computed =
      crc32(crc32(0, data.take_front(24)), data.substr(kHeaderBytes, indexSize));
  if (stored != computed) {
    error = where + ": its header and index have the checksum " + hex32(computed) +
            "; expected " + hex32(stored) + " (the file was changed after it was written)";
    return std::nullopt;
  }
  uint64_t at = kHeaderBytes, end = kHeaderBytes + indexSize;
  std::vector<Placement> placements;
  std::vector<uint32_t> checksums;
  for (uint64_t i = 0; i < count; ++i) {
    std::string entryName = "entry " + std::to_string(i);
    if (end - at < kEntryBytes) {
      error = where + ": " + entryName + " runs past the index (" +
              std::to_string(indexSize) + " bytes)";
      return std::nullopt;
    }
    ParameterEntry entry{read64(data.data() + at), read64(data.data() + at + 8)};
    uint32_t checksum = read32(data.data() + at + 16);
    uint64_t keySize = read32(data.data() + at + 20);
    at += kEntryBytes;
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
    placements.push_back({entry.offset, entry.size, key});
    checksums.push_back(checksum);
  }
  // No two entries share a byte: a writer that placed one over another gives
  // both checksums right and one of them the other's weights.
  std::vector<Placement> sorted;
  for (const Placement &p : placements)
    if (p.size)
      sorted.push_back(p);
  std::sort(sorted.begin(), sorted.end(),
            [](const Placement &a, const Placement &b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    const Placement &before = sorted[i - 1], &next = sorted[i];
    if (next.offset < before.offset + before.size) {
      error = where + ": the entries '" + before.key.str() + "' (bytes " +
              std::to_string(before.offset) + ".." + std::to_string(before.offset) + "+" +
              std::to_string(before.size) + ") and '" + next.key.str() + "' (bytes " +
              std::to_string(next.offset) + ".." + std::to_string(next.offset) + "+" +
              std::to_string(next.size) + ") share bytes; expected each entry's bytes "
              "apart from the others'";
      return std::nullopt;
    }
  }
  // The entries' checksums on all cores (a model's hundreds of MB), then
  // checked in order: the first entry that differs is the one reported.
  std::vector<uint32_t> actuals(placements.size());
  llvm::parallelFor(0, placements.size(), [&](size_t i) {
    actuals[i] = crc32(0, data.substr(placements[i].offset, placements[i].size));
  });
  for (size_t i = 0; i < placements.size(); ++i) {
    const Placement &p = placements[i];
    uint32_t actual = actuals[i];
    if (actual != checksums[i]) {
      error = where + ": the bytes of the entry '" + p.key.str() + "' (" +
              std::to_string(p.size) + " at byte " + std::to_string(p.offset) +
              ") have the checksum " + hex32(actual) + "; expected " + hex32(checksums[i]) +
              " (the file was changed after it was written, or its data moved)";
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
