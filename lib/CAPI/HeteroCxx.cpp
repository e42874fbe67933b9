//===- HeteroCxx.cpp - hpvmLowerHeteroCxxFile -----------------------------===//
// The Hetero-C++ lowering (lib/Frontend/HeteroCxx) as a C function on files.
#include "HPVM/C/Compiler.h"
#include "HPVM/Frontend/HeteroCxx.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

bool hpvmLowerHeteroCxxFile(const char *inputPath, const char *outputPath, unsigned flags,
                            char **diagnostics) {
  std::string text;
  auto report = [&](llvm::StringRef diagnostic) { text += diagnostic; };
  bool ok = false;
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module;
  if (!inputPath || !outputPath) {
    report("hpvmLowerHeteroCxxFile: expected an input and an output path\n");
  } else if (!(module = llvm::parseIRFile(inputPath, error, context))) {
    std::string message;
    llvm::raw_string_ostream stream(message);
    error.print("hpvmLowerHeteroCxxFile", stream, /*ShowColors=*/false);
    report(message);
  } else if (hpvm::lowerHeteroCxx(*module, report,
                                     {(flags & HPVMHeteroCxxSequential) != 0,
                                      (flags & HPVMHeteroCxxNoStreaming) == 0})) {
    std::error_code code;
    llvm::ToolOutputFile file(outputPath, code, llvm::sys::fs::OF_None);
    if (code) {
      report(("hpvmLowerHeteroCxxFile: cannot write '" + llvm::Twine(outputPath) +
              "': " + code.message() + "\n")
                 .str());
    } else {
      llvm::StringRef path(outputPath);
      if (path == "-" || path.ends_with(".ll"))
        module->print(file.os(), nullptr);
      else
        llvm::WriteBitcodeToFile(*module, file.os());
      file.keep();
      ok = true;
    }
  }
  if (diagnostics) {
    *diagnostics = nullptr;
    if (!text.empty()) {
      *diagnostics = static_cast<char *>(std::malloc(text.size() + 1));
      std::memcpy(*diagnostics, text.c_str(), text.size() + 1);
    }
  }
  return ok;
}
