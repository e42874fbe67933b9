//===- ExternalizeConstants.cpp - The hpvm-externalize-constants pass -----===//
// Large constant globals (a model's weights) leave the LLVM IR: each becomes
// an external declaration whose bytes an assembly file's .incbin copies into
// the object, from the module's parameter archive or from a side file.
#include "HPVM/Transforms/Passes.h"

#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"
#include "HPVM/Transforms/ParameterArchive.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mlir::hpvm {
#define GEN_PASS_DEF_HPVMEXTERNALIZECONSTANTS
#include "HPVM/Transforms/Passes.h.inc"
} // namespace mlir::hpvm

using namespace mlir;
using namespace mlir::hpvm;

namespace {

/// Alignment of every externalized constant: a cache line, and what the
/// widest vector loads of the kernels prefer.
constexpr uint64_t kConstantAlign = 64;

/// Bytes of one element of `type` when it is stored as whole bytes (integers
/// and floats of 8, 16, 32, 64 bits), else nothing (i1 and odd widths).
std::optional<uint64_t> elementBytes(Type type) {
  if (!type.isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return std::nullopt;
  return bits / 8;
}

/// Where a constant's bytes are: in memory (a dense attribute or a blob), or
/// in the parameter archive.
struct ConstantBytes {
  ArrayRef<char> data;                 // when in memory
  std::string splat;                   // a splat's one element, expanded on write
  const ParameterEntry *entry = nullptr; // when in the archive
  uint64_t size = 0;                     // the bytes of the whole constant
};

/// `path` as the module names it: a relative path is taken from the directory
/// of the file the module was parsed from (its location), else from the
/// current directory.
std::string resolvedArchivePath(ModuleOp module, StringRef path) {
  if (llvm::sys::path::is_absolute(path))
    return path.str();
  auto file = dyn_cast<FileLineColLoc>(module.getLoc());
  if (!file)
    return path.str();
  SmallString<256> joined(llvm::sys::path::parent_path(file.getFilename().getValue()));
  llvm::sys::path::append(joined, path);
  return joined.str().str();
}

class Externalizer {
public:
  Externalizer(ModuleOp module, StringRef asmPath, uint64_t minBytes)
      : module(module), asmPath(asmPath), minBytes(minBytes) {}

  LogicalResult run();

private:
  /// The parameter archive of the module (`hpvm.parameters`), opened once.
  FailureOr<const ParameterArchive *> archive(LLVM::GlobalOp global, StringRef key);
  /// The bytes of `global`'s initializer when it is to leave the IR; nothing
  /// when it stays (small, zeros, not elements of whole bytes).
  FailureOr<std::optional<ConstantBytes>> bytesOf(LLVM::GlobalOp global);
  /// Resolves a `dense_resource` key no blob backs into a dense initializer.
  LogicalResult materialize(LLVM::GlobalOp global, DenseResourceElementsAttr attr);
  /// The archive's entry for `key`, checked to hold the `size` bytes of `type`.
  FailureOr<const ParameterEntry *> archiveEntry(LLVM::GlobalOp global, StringRef key, Type type,
                                                 uint64_t size);
  LogicalResult writeSideFile();
  /// Gives the uses of the renamed constants their new names, in one walk.
  void renameUses(const DenseMap<StringAttr, StringAttr> &renamed);
  LogicalResult writeAssembly();

  ModuleOp module;
  StringRef asmPath;
  uint64_t minBytes;
  std::optional<ParameterArchive> opened;
  bool openFailed = false;

  struct Placed {
    std::string symbol;
    uint64_t size;
    const ParameterEntry *entry; // in the archive, else in the side file
    uint64_t sideOffset;
  };
  SmallVector<Placed> placed;
  SmallVector<ConstantBytes> sideData; // parallel to the side-file entries
  SmallVector<uint64_t> sideOffsets;
  uint64_t sideSize = 0;
};

FailureOr<const ParameterArchive *> Externalizer::archive(LLVM::GlobalOp global,
                                                          StringRef key) {
  if (opened)
    return &*opened;
  auto path = module->getAttrOfType<StringAttr>(HPVMDialect::getParametersAttrName());
  if (!path)
    return global.emitError() << "the constant '" << global.getSymName()
                              << "' is the dense_resource '" << key
                              << "', which no blob backs, and the module names no "
                                 "parameter archive ('hpvm.parameters'); expected the "
                                 "blob in the module's resources or an archive holding '"
                              << key << "'";
  if (openFailed)
    return failure();
  std::string error;
  std::optional<ParameterArchive> read =
      ParameterArchive::open(resolvedArchivePath(module, path.getValue()), error);
  if (!read) {
    openFailed = true;
    return module.emitError() << error;
  }
  opened = std::move(read);
  return &*opened;
}

FailureOr<std::optional<ConstantBytes>> Externalizer::bytesOf(LLVM::GlobalOp global) {
  if (!global.getConstant() || global.getInitializerBlock())
    return std::optional<ConstantBytes>();
  auto elements = dyn_cast_or_null<ElementsAttr>(global.getValueOrNull());
  if (!elements)
    return std::optional<ConstantBytes>();
  std::optional<uint64_t> width = elementBytes(elements.getElementType());
  if (!width)
    return std::optional<ConstantBytes>();
  uint64_t size = *width * elements.getNumElements();
  if (size < minBytes)
    return std::optional<ConstantBytes>();

  ConstantBytes bytes;
  bytes.size = size;
  if (auto dense = dyn_cast<DenseElementsAttr>(elements)) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      // All zeros: LLVM IR says zeroinitializer, which costs nothing.
      if (llvm::all_of(raw, [](char c) { return c == 0; }))
        return std::optional<ConstantBytes>();
      bytes.splat.assign(raw.begin(), raw.end());
    } else {
      bytes.data = raw;
    }
    return std::optional<ConstantBytes>(std::move(bytes));
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(elements);
  if (!resource)
    return std::optional<ConstantBytes>();
  StringRef key = resource.getRawHandle().getKey();
  if (AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
    if (blob->getData().size() != size)
      return global.emitError() << "the resource '" << key << "' holds "
                                << blob->getData().size() << " bytes; expected " << size
                                << " for " << elements.getType();
    bytes.data = blob->getData();
    return std::optional<ConstantBytes>(std::move(bytes));
  }
  FailureOr<const ParameterEntry *> entry = archiveEntry(global, key, elements.getType(), size);
  if (failed(entry))
    return failure();
  bytes.entry = *entry;
  return std::optional<ConstantBytes>(std::move(bytes));
}

FailureOr<const ParameterEntry *> Externalizer::archiveEntry(LLVM::GlobalOp global,
                                                             StringRef key, Type type,
                                                             uint64_t size) {
  FailureOr<const ParameterArchive *> found = archive(global, key);
  if (failed(found))
    return failure();
  const ParameterEntry *entry = (*found)->lookup(key);
  if (!entry)
    return global.emitError() << "the parameter '" << key << "' is not in the archive '"
                              << (*found)->getPath() << "' (" << (*found)->size()
                              << " entries); expected an entry of " << size << " bytes for "
                              << type;
  if (entry->size != size)
    return global.emitError() << "the parameter '" << key << "' of the archive '"
                              << (*found)->getPath() << "' holds " << entry->size
                              << " bytes; expected " << size << " for " << type;
  return entry;
}

LogicalResult Externalizer::materialize(LLVM::GlobalOp global,
                                        DenseResourceElementsAttr attr) {
  StringRef key = attr.getRawHandle().getKey();
  std::optional<uint64_t> width = elementBytes(attr.getElementType());
  if (!width)
    return global.emitError() << "the dense_resource '" << key << "' has elements of "
                              << attr.getElementType()
                              << "; expected integers or floats of whole bytes";
  FailureOr<const ParameterEntry *> entry =
      archiveEntry(global, key, attr.getType(), *width * attr.getNumElements());
  if (failed(entry))
    return failure();
  global.setValueAttr(DenseElementsAttr::getFromRawBuffer(attr.getType(), opened->bytes(**entry)));
  return success();
}

LogicalResult Externalizer::run() {
  SmallVector<LLVM::GlobalOp> globals(module.getOps<LLVM::GlobalOp>());
  if (asmPath.empty()) {
    for (LLVM::GlobalOp global : globals) {
      auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
      if (resource && !resource.getRawHandle().getBlob() &&
          failed(materialize(global, resource)))
        return failure();
    }
    module->removeAttr(HPVMDialect::getParametersAttrName());
    return success();
  }

  // A tag that differs between the modules of one program: their symbols
  // are hidden, but one shared library links them together.
  std::string tag = llvm::utohexstr(llvm::xxh3_64bits(asmPath) & 0xffffffffu);
  SymbolTable symbols(module);
  // The constants' new names, given to their uses in one walk at the end
  // (SymbolTable::rename walks the whole module for each symbol: BERT-base's
  // 200 constants took 2.4 s).
  DenseMap<StringAttr, StringAttr> renamed;
  for (LLVM::GlobalOp global : globals) {
    FailureOr<std::optional<ConstantBytes>> bytes = bytesOf(global);
    if (failed(bytes))
      return failure();
    if (!*bytes) {
      // Stays in the IR: a key no blob backs is read from the archive.
      auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
      if (resource && !resource.getRawHandle().getBlob() &&
          failed(materialize(global, resource)))
        return failure();
      continue;
    }
    auto elements = cast<ElementsAttr>(global.getValueOrNull());
    uint64_t size = *elementBytes(elements.getElementType()) * elements.getNumElements();
    std::string symbol = "__hpvm_const_" + tag + "_" + std::to_string(placed.size());
    auto name = StringAttr::get(module.getContext(), symbol);
    if (symbols.lookup(name))
      return global.emitError() << "cannot rename the constant to '" << symbol
                                << "': the module has a symbol of that name";
    renamed[global.getSymNameAttr()] = name;
    global.setSymName(symbol);
    Placed where{symbol, size, (*bytes)->entry, 0};
    if (!where.entry) {
      sideSize = llvm::alignTo(sideSize, kConstantAlign);
      where.sideOffset = sideSize;
      sideOffsets.push_back(sideSize);
      sideSize += size;
      sideData.push_back(std::move(**bytes));
    }
    placed.push_back(std::move(where));
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
    global.setUnnamedAddr(std::nullopt);
    global.setAlignment(std::max<uint64_t>(global.getAlignment().value_or(1), kConstantAlign));
  }
  renameUses(renamed);
  module->removeAttr(HPVMDialect::getParametersAttrName());
  // Nothing left the IR: no files (the caller assembles the file only when
  // it exists).
  if (placed.empty())
    return success();
  if (failed(writeSideFile()))
    return failure();
  return writeAssembly();
}

/// Writes a file through `write`; one error, naming `what` and the path,
/// when it cannot be opened or written.
LogicalResult writeFile(ModuleOp module, StringRef path, StringRef what,
                        function_ref<void(llvm::raw_ostream &)> write) {
  std::error_code error;
  {
    llvm::raw_fd_ostream out(path, error, llvm::sys::fs::OF_None);
    if (!error) {
      write(out);
      out.close();
      if (out.has_error()) {
        error = out.error();
        out.clear_error();
      }
    }
  }
  if (error)
    return module.emitError() << "cannot write " << what << " '" << path
                              << "': " << error.message();
  return success();
}

void Externalizer::renameUses(const DenseMap<StringAttr, StringAttr> &renamed) {
  if (renamed.empty())
    return;
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
    auto found = renamed.find(ref.getRootReference());
    if (found == renamed.end())
      return std::nullopt;
    return SymbolRefAttr::get(found->second, ref.getNestedReferences());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                        /*replaceTypes=*/false);
}

LogicalResult Externalizer::writeSideFile() {
  std::string path = (asmPath + ".bin").str();
  return writeFile(module, path, "the constants file", [&](llvm::raw_ostream &out) {
    uint64_t at = 0;
    for (auto [bytes, offset] : llvm::zip_equal(sideData, sideOffsets)) {
      out.write_zeros(offset - at);
      at = offset;
      if (!bytes.splat.empty()) {
        // A splat: its element repeated (the size is a multiple of it).
        for (uint64_t done = 0; done < bytes.size; done += bytes.splat.size())
          out.write(bytes.splat.data(), bytes.splat.size());
      } else {
        out.write(bytes.data.data(), bytes.data.size());
      }
      at += bytes.size;
    }
  });
}

/// `path` as a string of the assembler: quotes and backslashes escaped.
std::string quoted(StringRef path) {
  std::string text = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\')
      text += '\\';
    text += c;
  }
  return text + "\"";
}

/// The directives that declare `symbol`, a constant of `size` bytes.
void declareSymbol(llvm::raw_ostream &out, StringRef symbol, uint64_t size) {
  out << "\t.globl " << symbol << "\n"
      << "\t.hidden " << symbol << "\n"
      << "\t.type " << symbol << ", %object\n"
      << "\t.size " << symbol << ", " << size << "\n";
}

LogicalResult Externalizer::writeAssembly() {
  SmallString<256> side(asmPath);
  side += ".bin";
  llvm::sys::fs::make_absolute(side);
  return writeFile(module, asmPath, "the constants' assembly file", [&](llvm::raw_ostream &out) {
    out << "# The large constants of a module (hpvm-externalize-constants): each\n"
           "# symbol's bytes are copied from a file by the assembler.\n";
    out << "\t.section .rodata.hpvm_constants,\"a\",%progbits\n";
    // One .incbin per file, the constants symbols inside the bytes it copies:
    // the assembler reads the whole file for each .incbin (and keeps a copy of
    // it in memory when its size is a multiple of the page size), so one per
    // constant took the archive's size times the number of weights.
    for (bool inArchive : {true, false}) {
      StringRef file = inArchive ? StringRef(opened ? opened->getPath() : "")
                                 : StringRef(side);
      auto offsetOf = [&](const Placed &p) {
        return inArchive ? p.entry->offset : p.sideOffset;
      };
      SmallVector<const Placed *> spanned;
      uint64_t low = UINT64_MAX, high = 0;
      for (const Placed &p : placed) {
        if ((p.entry != nullptr) != inArchive)
          continue;
        if (offsetOf(p) % kConstantAlign == 0) {
          spanned.push_back(&p);
          low = std::min(low, offsetOf(p));
          high = std::max(high, offsetOf(p) + p.size);
          continue;
        }
        // An archive entry another writer placed off the alignment: its own copy.
        out << "\t.p2align " << llvm::Log2_64(kConstantAlign) << "\n";
        declareSymbol(out, p.symbol, p.size);
        out << p.symbol << ":\n"
            << "\t.incbin " << quoted(file) << ", " << offsetOf(p) << ", " << p.size
            << "\n";
      }
      if (spanned.empty())
        continue;
      StringRef span = inArchive ? ".Lhpvm_archive_span" : ".Lhpvm_side_span";
      out << "\t.p2align " << llvm::Log2_64(kConstantAlign) << "\n"
          << span << ":\n"
          << "\t.incbin " << quoted(file) << ", " << low << ", " << high - low << "\n";
      for (const Placed *p : spanned) {
        declareSymbol(out, p->symbol, p->size);
        out << "\t.set " << p->symbol << ", " << span << " + " << offsetOf(*p) - low
            << "\n";
      }
    }
    // No executable stack for the object (the linker would otherwise warn).
    out << "\t.section .note.GNU-stack,\"\",%progbits\n";
  });
}

struct HPVMExternalizeConstantsPass
    : hpvm::impl::HPVMExternalizeConstantsBase<HPVMExternalizeConstantsPass> {
  using HPVMExternalizeConstantsBase::HPVMExternalizeConstantsBase;

  void runOnOperation() override {
    Externalizer externalizer(getOperation(), asmFile, minBytes);
    if (failed(externalizer.run()))
      signalPassFailure();
  }
};

} // namespace
