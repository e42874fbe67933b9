//===- hpvm-c-fuzz.cpp - libFuzzer target: HPVM-C source -> raised hpvm IR -===//
// The input is a C source file using the HPVM-C API (seeded with the run
// tests, test/HPVMC/run).  clang-22 compiles it to LLVM IR in a subprocess,
// with the flags hpvm-cc uses (clang is not linked into the project); the rest
// runs in process, as hpvm-cc's later stages would: the LLVM IR is imported
// into MLIR (hpvm-translate --import-llvm), raised (hpvm-opt --hpvm-raise-c),
// verified, checked to round-trip, and lowered by the CPU pipeline.  Inputs
// clang rejects are uninteresting; a crash, sanitizer report, hang or broken
// invariant after clang accepted the input is a finding.
#include "FuzzCommon.h"

#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"

#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HPVM_FUZZ_CLANG
#error "HPVM_FUZZ_CLANG (the clang that compiles HPVM-C) must be defined"
#endif
#ifndef HPVM_FUZZ_INCLUDE
#error "HPVM_FUZZ_INCLUDE (the directory of hpvm/hpvm.h) must be defined"
#endif

extern char **environ;

namespace {

std::string tempBase() {
  static std::string base = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/hpvm-c-fuzz-" +
           std::to_string(getpid());
  }();
  return base;
}

bool writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return false;
  bool ok = std::fwrite(data, 1, size, file) == size;
  return std::fclose(file) == 0 && ok;
}

/// Runs clang on `source`, writing LLVM IR to `output`; false when clang
/// rejects the input (or runs past 20 s: clang hangs are not ours to find).
bool compileToLLVM(const std::string &source, const std::string &output) {
  std::string include = HPVM_FUZZ_INCLUDE, hpvmInclude = include + "/hpvm";
  const char *argv[] = {HPVM_FUZZ_CLANG, "-O1", "-g", "-fno-discard-value-names",
                        "-std=gnu11", "-Wno-return-type", "-w", "-ferror-limit=1",
                        "-I", include.c_str(), "-I", hpvmInclude.c_str(),
                        "-DDEVICE=CPU_TARGET", "-S", "-emit-llvm", "-x", "c",
                        source.c_str(), "-o", output.c_str(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int error = posix_spawn(&pid, argv[0], &actions, nullptr,
                          const_cast<char *const *>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error) {
    std::fprintf(stderr, "hpvm-c-fuzz: cannot run %s\n", argv[0]);
    std::abort();
  }
  int status = 0;
  for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; ++waited) {
    if (waited == 2000) { // 20 s in 10 ms steps
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    usleep(10000);
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// hpvm-opt's dialects plus the LLVM IR import interfaces (what
/// hpvm-translate --import-llvm registers).
const mlir::DialectRegistry &importRegistry() {
  static const mlir::DialectRegistry *instance = [] {
    auto *registry = new mlir::DialectRegistry();
    hpvm_fuzz::registry().appendTo(*registry);
    mlir::registerAllFromLLVMIRTranslations(*registry);
    return registry;
  }();
  return *instance;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Larger sources only slow clang down; the run tests are a few KB.
  if (size > 16384)
    return 0;
  std::string source = tempBase() + ".c", ll = tempBase() + ".ll";
  if (!writeFile(source, data, size))
    return 0;
  bool compiled = compileToLLVM(source, ll);
  std::remove(source.c_str());
  if (!compiled) {
    hpvm_fuzz::note("clang refused the input");
    std::remove(ll.c_str());
    return 0;
  }

  llvm::LLVMContext llvmContext;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> llvmModule =
      llvm::parseIRFile(ll, diagnostic, llvmContext);
  std::remove(ll.c_str());
  if (!llvmModule)
    hpvm_fuzz::fail("clang's LLVM IR does not parse", nullptr);

  mlir::MLIRContext context(importRegistry(),
                            mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(&context, hpvm_fuzz::quietHandler);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::translateLLVMIRToModule(std::move(llvmModule), &context);
  if (!module) {
    hpvm_fuzz::note("the LLVM IR import refused the module");
    return 0; // the import refuses some IR (upstream's business, not ours)
  }
  // hpvm-raise-c: refusing a malformed graph with a diagnostic is expected.
  if (!hpvm_fuzz::runPipeline(*module, context, "builtin.module(hpvm-raise-c)")) {
    hpvm_fuzz::note("hpvm-raise-c refused the module");
    return 0;
  }
  if (mlir::failed(mlir::verify(*module)))
    hpvm_fuzz::fail("hpvm-raise-c succeeded but the module does not verify",
                    *module);
  hpvm_fuzz::checkRoundTrip(*module, context);
  hpvm_fuzz::note(hpvm_fuzz::runPipeline(*module, context, hpvm_fuzz::kCPUPipeline)
                      ? "raised and lowered"
                      : "raised; the CPU pipeline refused the module");
  return 0;
}
