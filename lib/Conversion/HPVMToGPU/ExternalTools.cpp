//===- ExternalTools.cpp - Device images made by other programs -----------===//
// The steps of hpvm-embed-kernels that run programs outside LLVM 22, where
// they are installed:
// * CUDA (ptxas, fatbinary): a fat binary with a cubin per architecture the
//   executable names and the PTX, which the driver JIT-compiles for any other
//   GPU.
// * OpenCL (llvm-spirv 15): the SPIR 1.2 bitcode of the SPIR-V module, for
//   devices that take no SPIR-V (PoCL 3.1), so that they need no translator
//   at run time.
#include "KernelSerialization.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

std::string mlir::hpvm::findCudaToolkit() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *path = std::getenv(variable); path && *path)
      return path;
  if (llvm::sys::fs::is_directory("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

std::string mlir::hpvm::findCudaTool(StringRef name) {
  std::string toolkit = mlir::hpvm::findCudaToolkit();
  if (!toolkit.empty()) {
    SmallString<128> path(toolkit);
    llvm::sys::path::append(path, "bin", name);
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
    return *found;
  return "";
}

namespace {
/// A temporary directory for the files a tool reads and writes, removed with
/// everything in it when the object goes.
class WorkDirectory {
public:
  explicit WorkDirectory(StringRef prefix) {
    if (llvm::sys::fs::createUniqueDirectory(prefix, directory))
      directory.clear();
  }
  ~WorkDirectory() {
    if (!directory.empty())
      llvm::sys::fs::remove_directories(directory);
  }
  /// Whether the directory exists; `error` says otherwise.
  bool ok(std::string &error) const {
    if (directory.empty())
      error = "cannot create a temporary directory";
    return !directory.empty();
  }
  std::string path(const Twine &name) const {
    SmallString<128> path(directory);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }
  /// Writes `bytes` to `name`; returns its path, or "" with `error` set.
  std::string write(const Twine &name, StringRef bytes, std::string &error) const {
    std::string file = path(name);
    std::error_code code;
    llvm::raw_fd_ostream stream(file, code);
    if (code) {
      error = "cannot write " + file + ": " + code.message();
      return "";
    }
    stream << bytes;
    return file;
  }
  /// Runs `arguments` (the first is the program), its output going to a log
  /// in the directory; on failure returns what it printed (or why it did not
  /// run) in `error`.
  bool run(ArrayRef<std::string> arguments, std::string &error) const {
    std::string log = path("tool.log");
    SmallVector<StringRef> argv(arguments.begin(), arguments.end());
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    std::string message;
    int status = llvm::sys::ExecuteAndWait(argv.front(), argv, std::nullopt,
                                           redirects, /*SecondsToWait=*/300,
                                           /*MemoryLimit=*/0, &message);
    if (status == 0)
      return true;
    error = argv.front().str() + ": ";
    auto buffer = llvm::MemoryBuffer::getFile(log);
    if (buffer && (*buffer)->getBufferSize())
      error += StringRef((*buffer)->getBuffer()).trim().str();
    else
      error += message.empty() ? "exit status " + std::to_string(status) : message;
    return false;
  }
  /// The contents of `name`, or std::nullopt with `error` set.
  std::optional<std::string> read(const Twine &name, StringRef writer,
                                  std::string &error) const {
    auto buffer = llvm::MemoryBuffer::getFile(path(name));
    if (!buffer) {
      error = (writer + " wrote no file").str();
      return std::nullopt;
    }
    return (*buffer)->getBuffer().str();
  }

private:
  SmallString<128> directory;
};
} // namespace

std::optional<std::string>
mlir::hpvm::buildCudaFatbin(StringRef ptx, ArrayRef<std::string> architectures,
                            std::string &error) {
  std::string ptxas = findCudaTool("ptxas"), fatbinary = findCudaTool("fatbinary");
  if (ptxas.empty() || fatbinary.empty() || architectures.empty())
    return std::nullopt;
  WorkDirectory work("hpvm-fatbin");
  if (!work.ok(error))
    return std::nullopt;
  std::string ptxPath = work.write("kernels.ptx", ptx, error);
  if (ptxPath.empty())
    return std::nullopt;
  std::vector<std::string> fatbin = {fatbinary, "-64",
                                     "--create=" + work.path("kernels.fatbin")};
  for (const std::string &architecture : architectures) {
    // "sm_90" -> 90
    StringRef number = StringRef(architecture).drop_front(3);
    std::string cubin = work.path("kernels." + architecture + ".cubin");
    if (!work.run({ptxas, "-arch=" + architecture, "-O3", ptxPath, "-o", cubin}, error))
      return std::nullopt;
    fatbin.push_back(("--image3=kind=elf,sm=" + number + ",file=" + cubin).str());
  }
  // The PTX for other GPUs, at the lowest architecture it was written for.
  fatbin.push_back(("--image3=kind=ptx,sm=" + StringRef(architectures.front()).drop_front(3) +
                    ",file=" + ptxPath)
                       .str());
  if (!work.run(fatbin, error))
    return std::nullopt;
  return work.read("kernels.fatbin", "fatbinary", error);
}

std::string mlir::hpvm::findSPIRVTranslator() {
  if (const char *configured = std::getenv("HPVM_LLVM_SPIRV"); configured && *configured) {
    if (llvm::sys::fs::can_execute(configured))
      return configured;
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(configured))
      return *found;
    return "";
  }
  for (StringRef name : {"llvm-spirv-15", "llvm-spirv"})
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
      return *found;
  return "";
}

std::optional<std::string> mlir::hpvm::translateToSPIR12(StringRef spirv,
                                                         std::string &error) {
  std::string translator = findSPIRVTranslator();
  if (translator.empty())
    return std::nullopt;
  WorkDirectory work("hpvm-spir");
  if (!work.ok(error))
    return std::nullopt;
  std::string input = work.write("kernels.spv", spirv, error);
  if (input.empty())
    return std::nullopt;
  if (!work.run({translator, "-r", input, "-o", work.path("kernels.bc")}, error))
    return std::nullopt;
  return work.read("kernels.bc", translator, error);
}
