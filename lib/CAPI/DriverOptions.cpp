//===- DriverOptions.cpp - Driver flags to pipeline options ---------------===//
// hpvmDriverOptions*: the flags of hpvm-cc and the Python package that the
// option table (HPVM/Pipelines/Options.def) declares, read into the options
// of hpvm-lower-to-llvm-pipeline, written back as the options string of
// hpvmCompileBuffer and printed as the pipeline they build.
#include "HPVM/C/Compiler.h"

#include "HPVM/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

struct HPVMDriverOptions {
  hpvm::CPUPipelineOptions pipeline;
};

namespace {
char *copyText(StringRef text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (copy) {
    std::memcpy(copy, text.data(), text.size());
    copy[text.size()] = '\0';
  }
  return copy;
}

void setError(char **error, const Twine &text) {
  if (error)
    *error = copyText(text.str());
}

/// A string option's value, quoted as its parser reads it back whole.
std::string quoted(StringRef value) {
  char quote = value.contains('"') ? '\'' : '"';
  return (Twine(quote) + value + Twine(quote)).str();
}

/// `key=value ` of the options string; empty strings left out (their
/// defaults, or none).
void writeOption(llvm::raw_ostream &out, StringRef key, bool value) {
  out << key << "=" << (value ? "true" : "false") << " ";
}
void writeOption(llvm::raw_ostream &out, StringRef key, unsigned value) {
  out << key << "=" << value << " ";
}
void writeOption(llvm::raw_ostream &out, StringRef key, const std::string &value) {
  if (!value.empty())
    out << key << "=" << quoted(value) << " ";
}

/// An option's value as text.
std::string valueText(bool value) { return value ? "true" : "false"; }
std::string valueText(unsigned value) { return std::to_string(value); }
std::string valueText(const std::string &value) { return value; }

/// `text` as the count of `flag`: LOW to HIGH, else an error naming them.
bool parseCount(StringRef flag, StringRef text, unsigned low, unsigned high,
                unsigned &value, char **error) {
  unsigned long long parsed = 0;
  if (text.empty() || !llvm::isDigit(text.front()) ||
      llvm::getAsUnsignedInteger(text, 10, parsed) || parsed < low || parsed > high) {
    setError(error, "'" + flag + "' expects a count from " + Twine(low) + " to " +
                        Twine(high) + ", found '" + text + "'");
    return false;
  }
  value = static_cast<unsigned>(parsed);
  return true;
}

/// `text` as one of `choices` ("a|b|c") for `flag`.
bool parseChoice(StringRef flag, StringRef text, StringRef choices, char **error) {
  SmallVector<StringRef> allowed;
  choices.split(allowed, '|');
  if (llvm::is_contained(allowed, text))
    return true;
  std::string expected;
  for (size_t i = 0; i < allowed.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i].str();
  setError(error, "'" + flag.take_front(100) + "' expects " + expected + ", found '" +
                      text.take_front(100) + "'");
  return false;
}

/// The table's flags (-f[no-]SWITCH, -fCOUNT=N, -fCHOICE=VALUE): 1 taken, 0
/// not one of them, -1 a bad value.
int takeTableFlag(hpvm::CPUPipelineOptions &options, StringRef arg, char **error) {
#define HPVM_SWITCH(FIELD, KEY, DEFAULT, FLAG, DRIVER_DEFAULT, PASS, PASS_FIELD, HELP,   \
                    DRIVER_HELP)                                                         \
  if (arg == "-f" FLAG || arg == "-fno-" FLAG) {                                         \
    options.FIELD = arg.starts_with("-f" FLAG);                                          \
    return 1;                                                                            \
  }
#define HPVM_COUNT(FIELD, KEY, FLAG, LOW, HIGH, ALSO, PASS, PASS_FIELD, HELP,            \
                   DRIVER_HELP)                                                          \
  if (arg.starts_with("-f" FLAG "=")) {                                                  \
    unsigned value = 0;                                                                  \
    if (!parseCount(arg, arg.drop_front(sizeof("-f" FLAG "=") - 1), LOW, HIGH, value,    \
                    error))                                                              \
      return -1;                                                                         \
    options.FIELD = value;                                                               \
    if (*ALSO)                                                                           \
      (void)options.parseFromString(ALSO "=true");                                       \
    return 1;                                                                            \
  }
#define HPVM_CHOICE(FIELD, KEY, DEFAULT, FLAG, CHOICES, PASS, PASS_FIELD, HELP,          \
                    DRIVER_HELP)                                                         \
  if (arg.starts_with("-f" FLAG "=")) {                                                  \
    StringRef value = arg.drop_front(sizeof("-f" FLAG "=") - 1);                         \
    if (!parseChoice(arg, value, CHOICES, error))                                        \
      return -1;                                                                         \
    options.FIELD = value.str();                                                         \
    return 1;                                                                            \
  }
#include "HPVM/Pipelines/Options.def"
  return 0;
}

/// --target=KIND: the devices the GPU-hinted nodes get kernels for.
int takeTarget(hpvm::CPUPipelineOptions &options, StringRef kind, char **error) {
  if (kind == "cpu") {
    options.devices = ArrayRef<std::string>();
  } else if (kind == "gpu" || kind == "cuda") {
    options.devices = ArrayRef<std::string>{"cuda"};
  } else if (kind == "opencl" || kind == "spirv") {
    options.devices = ArrayRef<std::string>{"opencl"};
  } else {
    setError(error, "unknown target '" + kind + "'; expected cpu, gpu or opencl");
    return -1;
  }
  return 1;
}
} // namespace

HPVMDriverOptions *hpvmDriverOptionsCreate(void) {
  auto *options = new HPVMDriverOptions;
#define HPVM_SWITCH(FIELD, KEY, DEFAULT, FLAG, DRIVER_DEFAULT, PASS, PASS_FIELD, HELP,   \
                    DRIVER_HELP)                                                         \
  options->pipeline.FIELD = DRIVER_DEFAULT;
#include "HPVM/Pipelines/Options.def"
  return options;
}

void hpvmDriverOptionsDestroy(HPVMDriverOptions *options) { delete options; }

int hpvmDriverOptionsTake(HPVMDriverOptions *options, const char *argument, char **error) {
  if (error)
    *error = nullptr;
  if (!options || !argument)
    return 0;
  StringRef arg(argument);
  if (arg.consume_front("--target="))
    return takeTarget(options->pipeline, arg, error);
  if (arg.consume_front("--knobs=")) {
    if (arg.empty() || !llvm::sys::fs::exists(arg)) {
      setError(error, "--knobs: no such configuration file: '" + arg + "'");
      return -1;
    }
    options->pipeline.knobs = arg.str();
    return 1;
  }
  // --distribute=KIND: -fhpvm-distribute=KIND's other spelling.
  if (arg.starts_with("--distribute="))
    return takeTableFlag(options->pipeline,
                         "-fhpvm-distribute=" + arg.drop_front(13).str(), error);
  return takeTableFlag(options->pipeline, arg, error);
}

bool hpvmDriverOptionsSet(HPVMDriverOptions *options, const char *key, const char *value,
                          char **error) {
  if (error)
    *error = nullptr;
  if (!options || !key || !value) {
    setError(error, "hpvmDriverOptionsSet: expected options, a key and a value");
    return false;
  }
  // Lists as they are (comma-separated; none when empty), strings quoted.
  StringRef name(key);
#define HPVM_LIST(FIELD, KEY, PASS, PASS_FIELD, HELP)                                   \
  if (name == KEY && !*value) {                                                          \
    options->pipeline.FIELD = ArrayRef<std::string>();                                   \
    return true;                                                                         \
  }                                                                                      \
  if (name == KEY)                                                                       \
    list = true;
  bool list = false;
#include "HPVM/Pipelines/Options.def"
  std::string text = (name + "=" + (list ? std::string(value) : quoted(value))).str();
  std::string errors;
  llvm::raw_string_ostream stream(errors);
  if (succeeded(options->pipeline.parseFromString(text, stream)))
    return true;
  setError(error, "hpvmDriverOptionsSet: invalid option '" + text + "': " +
                      (errors.empty() ? StringRef("a value its option does not take")
                                      : StringRef(errors).trim()));
  return false;
}

char *hpvmDriverOptionsGet(const HPVMDriverOptions *options, const char *key) {
  if (!options || !key)
    return nullptr;
  StringRef wanted(key);
  const hpvm::CPUPipelineOptions &pipeline = options->pipeline;
#define HPVM_OPTION(TYPE, FIELD, KEY, DEFAULT, PASS, PASS_FIELD, HELP)                 \
  if (wanted == KEY)                                                                     \
    return copyText(valueText(pipeline.FIELD.getValue()));
#define HPVM_LIST(FIELD, KEY, PASS, PASS_FIELD, HELP)                                   \
  if (wanted == KEY)                                                                     \
    return copyText(llvm::join(pipeline.FIELD.begin(), pipeline.FIELD.end(), ","));
#include "HPVM/Pipelines/Options.def"
  return nullptr;
}

char *hpvmDriverOptionsString(const HPVMDriverOptions *options) {
  if (!options)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream out(text);
  const hpvm::CPUPipelineOptions &pipeline = options->pipeline;
#define HPVM_OPTION(TYPE, FIELD, KEY, DEFAULT, PASS, PASS_FIELD, HELP)                 \
  writeOption(out, KEY, pipeline.FIELD.getValue());
#define HPVM_LIST(FIELD, KEY, PASS, PASS_FIELD, HELP)                                   \
  if (!pipeline.FIELD.empty())                                                           \
    out << KEY "=" << llvm::join(pipeline.FIELD.begin(), pipeline.FIELD.end(), ",") << " ";
#include "HPVM/Pipelines/Options.def"
  return copyText(StringRef(text).rtrim());
}

char *hpvmDriverOptionsPipeline(const HPVMDriverOptions *options) {
  if (!options)
    return nullptr;
  OpPassManager pm("builtin.module");
  hpvm::buildHPVMLowerToLLVMPipeline(pm, options->pipeline);
  std::string text;
  llvm::raw_string_ostream out(text);
  pm.printAsTextualPipeline(out);
  return copyText(text);
}

char *hpvmDriverOptionsHelp(void) {
  std::string text;
#define HPVM_SWITCH(FIELD, KEY, DEFAULT, FLAG, DRIVER_DEFAULT, PASS, PASS_FIELD, HELP,   \
                    DRIVER_HELP)                                                         \
  text += DRIVER_HELP;
#define HPVM_COUNT(FIELD, KEY, FLAG, LOW, HIGH, ALSO, PASS, PASS_FIELD, HELP,            \
                   DRIVER_HELP)                                                          \
  text += DRIVER_HELP;
#define HPVM_CHOICE(FIELD, KEY, DEFAULT, FLAG, CHOICES, PASS, PASS_FIELD, HELP,          \
                    DRIVER_HELP)                                                         \
  text += DRIVER_HELP;
#include "HPVM/Pipelines/Options.def"
  return copyText(text);
}

char *hpvmDriverOptionsFlags(void) {
  std::string text;
#define HPVM_SWITCH(FIELD, KEY, DEFAULT, FLAG, DRIVER_DEFAULT, PASS, PASS_FIELD, HELP,   \
                    DRIVER_HELP)                                                         \
  text += "switch\t" FLAG "\t" KEY "\t" + std::string(DRIVER_DEFAULT ? "true" : "false") + "\n";
#define HPVM_COUNT(FIELD, KEY, FLAG, LOW, HIGH, ALSO, PASS, PASS_FIELD, HELP,            \
                   DRIVER_HELP)                                                          \
  text += "count\t" FLAG "\t" KEY "\t" #LOW "-" #HIGH "\n";
#define HPVM_CHOICE(FIELD, KEY, DEFAULT, FLAG, CHOICES, PASS, PASS_FIELD, HELP,          \
                    DRIVER_HELP)                                                         \
  text += "choice\t" FLAG "\t" KEY "\t" CHOICES "\n";
#include "HPVM/Pipelines/Options.def"
  return copyText(text);
}

bool hpvmDriverOptionsProbeVectorBits(HPVMDriverOptions *options, const char *clang,
                                      const char *const *flags, size_t count) {
  if (!options)
    return false;
  bool chosen = false;
  for (size_t i = 0; i < count; ++i)
    chosen = chosen || StringRef(flags[i]).starts_with("-march=") ||
             StringRef(flags[i]).starts_with("-mcpu=");
  if (!options->pipeline.vectorize || !chosen || !clang)
    return false;
  // The macros clang predefines for the CPU the -m flags name: 512 with
  // AVX-512, 256 with AVX, else 128 (SSE2, NEON); 0 (the host's) when clang
  // cannot say.
  SmallString<128> macros;
  if (llvm::sys::fs::createTemporaryFile("hpvm-target-macros", "h", macros))
    return false;
  llvm::FileRemover remover(macros);
  std::vector<StringRef> command{clang};
  for (size_t i = 0; i < count; ++i)
    if (StringRef(flags[i]).starts_with("-m"))
      command.push_back(flags[i]);
  for (StringRef rest : {"-dM", "-E", "-x", "c", "/dev/null", "-o"})
    command.push_back(rest);
  command.push_back(macros);
  unsigned bits = 0;
  if (llvm::sys::ExecuteAndWait(clang, command) == 0) {
    auto buffer = llvm::MemoryBuffer::getFile(macros);
    if (buffer) {
      StringRef text = (*buffer)->getBuffer();
      bits = text.contains("#define __AVX512F__ ") ? 512
             : text.contains("#define __AVX__ ")   ? 256
                                                   : 128;
    }
  }
  options->pipeline.vectorBits = bits;
  return true;
}
