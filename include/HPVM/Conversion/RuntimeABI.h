//===- RuntimeABI.h - The compiler <-> runtime ABI, defined once -*- C++ -*-===//
//
// Everything generated code shares with the C runtime (runtime/include/hpvm/
// hpvm_rt.h), in one place, as IREE's HALDispatchABI or upstream's table of
// FunctionCallBuilders do:
//
//  * the constants (enums, sentinels) it passes, taken from the header itself;
//  * the LLVM type of each runtime struct it builds or reads, with names for
//    the field indices (InstanceRange::Rank, KernelParam::Host, ...);
//  * every runtime function it calls: name and LLVM signature (one table,
//    HPVM_RUNTIME_FUNCTIONS), declared through one accessor, `lookupOrCreate`.
//
// test/RuntimeABI/hpvm-runtime-abi-test.cpp checks this file against the C
// header: each struct's size and field offsets (llvm::DataLayout of the host)
// against sizeof/offsetof, and each function's signature against its C
// prototype. A change on one side without the other fails that test.
//
//===----------------------------------------------------------------------===//
#ifndef HPVM_CONVERSION_RUNTIMEABI_H
#define HPVM_CONVERSION_RUNTIMEABI_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "hpvm/hpvm_rt.h"

#include <cstdint>

namespace mlir {
class SymbolTableCollection;
} // namespace mlir

namespace mlir::hpvm::abi {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// hpvm_rt_device_kind_t of the CPU versions the backend emits.
inline constexpr int32_t kDeviceCPU = HPVM_RT_DEVICE_CPU;
/// HPVM_RT_PIPELINE_HOST (UINT32_MAX) as the i32 the generated calls pass.
inline constexpr int32_t kPipelineHost = static_cast<int32_t>(HPVM_RT_PIPELINE_HOST);
/// hpvm_rt_access_t after a request: the host may read and write.
inline constexpr int32_t kAccessInOut = HPVM_RT_ACCESS_INOUT;

/// hpvm_rt_kernel_param_kind_t of the kernel parameters of node versions.
inline constexpr int32_t kParamValue = HPVM_RT_PARAM_VALUE;
inline constexpr int32_t kParamBuffer = HPVM_RT_PARAM_BUFFER;
inline constexpr int32_t kParamWorkgroup = HPVM_RT_PARAM_WORKGROUP;

//===----------------------------------------------------------------------===//
// Structs: one LLVM type each, and the names of its fields
//===----------------------------------------------------------------------===//
//
// Generated code reaches their fields only through the accessors below
// (getFieldAddress<S>, storeField<S>, insertField<S>, ...), by these names.

/// hpvm_rt_instance_range_t: { i64 begin[3], i64 end[3], i64 extent[3],
/// i32 rank, i32 worker_index }, the box one parallel-for body call runs.
struct InstanceRange {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_instance_range_t";
  enum Field : int32_t { Begin = 0, End, Extent, Rank, WorkerIndex, NumFields };
  /// Begin, End and Extent are i64[3] arrays (getFieldAddress).
  static constexpr unsigned kLeadingTriples = 3;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_node_version_t: { i32 device, ptr fn } (hpvm_rt_node_fn_t).
struct NodeVersion {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_node_version_t";
  enum Field : int32_t { Device = 0, Fn, NumFields };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_stage_version_t: { i32 device, ptr fn } (hpvm_rt_stage_fn_t).
struct StageVersion {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_stage_version_t";
  enum Field : int32_t { Device = 0, Fn, NumFields };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_kernel_param_t: { i32 kind, i32 access, i64 size, ptr value,
/// ptr host }, one parameter of hpvm_rt_kernel_run.
struct KernelParam {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_kernel_param_t";
  enum Field : int32_t { Kind = 0, Access, Size, Value, Host, NumFields };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_module_image_t: { i32 format, ptr data, i64 size,
/// ptr fallback_data, i64 fallback_size }.
struct ModuleImage {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_module_image_t";
  enum Field : int32_t { Format = 0, Data, Size, FallbackData, FallbackSize, NumFields };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_kernel_site_t: { ptr node, ptr kernel, ptr cuda, ptr opencl,
/// ptr state, ptr library }, the global a node's kernel version is run
/// through.
struct KernelSite {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_kernel_site_t";
  enum Field : int32_t { Node = 0, Kernel, Cuda, OpenCL, State, Library, NumFields };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// hpvm_rt_tensor_library_call_t: { i32 op, i32 activation, f64 clip,
/// [4 x i64] sizes, [3 x i64] filter, [2 x i64] padding, [2 x i64] strides,
/// i64 groups, [4 x i64] output, [4 x i64] bias, i32 x_param, i32 w_param,
/// i32 bias_param, i32 output_param, i32 scalars_param, ptr scalars,
/// i64 scalars_size }, the library call a tensor node's site points to
/// (convert-hpvm-to-gpu, TensorLibraryCalls.h).
struct TensorLibraryCall {
  static constexpr llvm::StringLiteral cName = "hpvm_rt_tensor_library_call_t";
  enum Field : int32_t {
    Op = 0,
    Activation,
    Clip,
    Sizes,
    Filter,
    Padding,
    Strides,
    Groups,
    Output,
    Bias,
    XParam,
    WParam,
    BiasParam,
    OutputParam,
    ScalarsParam,
    Scalars,
    ScalarsSize,
    NumFields
  };
  static constexpr unsigned kLeadingTriples = 0;
  static LLVM::LLVMStructType get(MLIRContext *context);
};

/// The arrays of uint64_t the runtime takes by pointer: a grid or a
/// work-group (uint64_t[3]), a task graph node's grid (uint64_t[rank]), a
/// pipeline stage's item sizes.
struct Uint64Array {
  static LLVM::LLVMArrayType get(MLIRContext *context, unsigned size = 3);
  /// The address of element `index` of the array of `type` at `base`.
  static Value getElementAddress(OpBuilder &b, Location loc, LLVM::LLVMArrayType type,
                                 Value base, int32_t index);
};

/// The fields of a memref descriptor (the memref lowering's struct: pointers,
/// offset, sizes, strides), which the host passes to a kernel one by one
/// (getMemRefParamCount).
struct MemRefDescriptorField {
  enum Field : int64_t { Allocated = 0, Aligned, Offset, Sizes, Strides };
};
/// Field `field` (its element `d`, for Sizes and Strides) of `descriptor`.
Value extractMemRefField(OpBuilder &b, Location loc, Value descriptor,
                         MemRefDescriptorField::Field field,
                         std::optional<int64_t> d = std::nullopt);
/// `descriptor` with field `field` (its element `d`) set to `value`.
Value insertMemRefField(OpBuilder &b, Location loc, Value descriptor,
                        MemRefDescriptorField::Field field, Value value,
                        std::optional<int64_t> d = std::nullopt);

inline constexpr int32_t kTensorLibraryConv2D = HPVM_RT_TENSOR_LIBRARY_CONV2D;
inline constexpr int32_t kTensorLibraryMatmul = HPVM_RT_TENSOR_LIBRARY_MATMUL;

//===----------------------------------------------------------------------===//
// Accessors: the one way generated code reaches a field of a runtime struct
//===----------------------------------------------------------------------===//

/// The address of the field at `indices` (a field, then an element of it
/// when it is an array) of the struct of `type` at `base`: `base` itself for
/// the first field's first element; an element of one of the first
/// `leadingTriples` fields (i64[3] arrays, which instance ranges and the CPU
/// backend's frames start with) as an i64 word from `base`, the form LLVM
/// canonicalizes to; otherwise a GEP into the struct.
Value getFieldAddress(OpBuilder &b, Location loc, LLVM::LLVMStructType type, Value base,
                      ArrayRef<LLVM::GEPArg> indices, unsigned leadingTriples = 0);

/// The address of field `field` (of its element `element`, for an array
/// field) of the runtime struct `S` at `base`, as getFieldAddress forms it.
template <typename S>
Value getFieldAddress(OpBuilder &b, Location loc, Value base, typename S::Field field,
                      std::optional<int32_t> element = std::nullopt) {
  SmallVector<LLVM::GEPArg, 2> indices{static_cast<int32_t>(field)};
  if (element)
    indices.push_back(*element);
  return getFieldAddress(b, loc, S::get(b.getContext()), base, indices, S::kLeadingTriples);
}

/// The same address as a GEP into the struct whatever the field (for code
/// that later passes match on that form).
template <typename S>
Value getFieldGEP(OpBuilder &b, Location loc, Value base, typename S::Field field,
                  std::optional<int32_t> element = std::nullopt) {
  SmallVector<LLVM::GEPArg, 3> indices{0, static_cast<int32_t>(field)};
  if (element)
    indices.push_back(*element);
  return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                             S::get(b.getContext()), base, indices);
}

/// The address of field `field` of element `index` of `array`, an array of
/// `S` of type `arrayType`.
template <typename S>
Value getElementFieldAddress(OpBuilder &b, Location loc, LLVM::LLVMArrayType arrayType,
                             Value array, int32_t index, typename S::Field field) {
  assert(arrayType.getElementType() == S::get(b.getContext()) && "an array of S");
  return LLVM::GEPOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), arrayType, array,
      ArrayRef<LLVM::GEPArg>{0, index, static_cast<int32_t>(field)});
}

/// Stores `value` to field `field` of the `S` at `base`.
template <typename S>
void storeField(OpBuilder &b, Location loc, Value base, typename S::Field field, Value value,
                std::optional<int32_t> element = std::nullopt) {
  LLVM::StoreOp::create(b, loc, value, getFieldAddress<S>(b, loc, base, field, element));
}

/// Loads field `field` (as `type`) of the `S` at `base`.
template <typename S>
Value loadField(OpBuilder &b, Location loc, Type type, Value base, typename S::Field field,
                std::optional<int32_t> element = std::nullopt) {
  return LLVM::LoadOp::create(b, loc, type, getFieldAddress<S>(b, loc, base, field, element));
}

/// `aggregate`, an `S` value, with field `field` (its element `element`)
/// set to `value`.
template <typename S>
Value insertField(OpBuilder &b, Location loc, Value aggregate, typename S::Field field,
                  Value value, std::optional<int64_t> element = std::nullopt) {
  SmallVector<int64_t, 2> position{static_cast<int64_t>(field)};
  if (element)
    position.push_back(*element);
  return LLVM::InsertValueOp::create(b, loc, aggregate, value, position);
}

//===----------------------------------------------------------------------===//
// The parameters of a node's kernel
//===----------------------------------------------------------------------===//

/// The groups of parameters of a node's kernel, in order: the gpu.func that
/// convert-hpvm-to-gpu builds (KernelBuilder::build; buildTensorKernel for a
/// tensor node) takes them, and the host passes them to hpvm_rt_kernel_run
/// as its hpvm_rt_kernel_param_t array (convert-hpvm-to-cpu,
/// KernelSiteRunner::runKernel; launchTensorKernel). All four walk
/// getKernelParamGroups. A memref input is one parameter of the gpu.func and
/// the fields of its descriptor on the host (allocated and aligned pointer,
/// offset, sizes, strides), as the kernel's LLVM lowering expands it.
enum class KernelParamGroup {
  /// The node's inputs (always first): a boolean as a byte, an input in
  /// PerInstancePorts::inputs as the array of its values (a buffer).
  Inputs,
  /// The grid, three i64 (a kernel without a tile level only: a tile's
  /// kernel reads its work-groups).
  GridExtents,
  /// One i64 per grid query above the kernel's own levels.
  AncestorQueries,
  /// The struct of the outputs (a buffer the host copies back), when the
  /// node has outputs (a tensor kernel's scalar outputs only, when it has
  /// any).
  Outputs,
  /// One array (buffer) per output in PerInstancePorts::outputs, by port.
  PerInstanceOutputs,
  /// The tile's work-group memory, one parameter per allocation (a tensor
  /// kernel's: its tiled product's operand slices, hpvm.tensor_launch).
  WorkgroupMemory,
  /// A tensor kernel's constant tensors (weights), one memref each, in the
  /// order of the node's `hpvm.tensor_kernel` attribute.
  Constants,
  /// A tensor kernel's outputs: one memref per output, allocated by the host
  /// before the launch; every element is written.
  OutputBuffers,
};

/// What a kernel runs: a leaf's grid of instances, a tile (a grid of
/// work-groups, each a grid of instances) or a tensor node (one thread per
/// element of its outputs).
enum class KernelShape { Leaf, Tile, Tensor };

/// The kernel parameters a memref of `rank` takes: its descriptor's fields
/// as the kernels' lowering expands them (allocated and aligned pointers,
/// offset, the sizes, the strides), each a parameter of the host's array.
constexpr int64_t getMemRefParamCount(int64_t rank) { return 3 + 2 * rank; }

/// The groups of a kernel's parameters in order, for a kernel of `shape`.
SmallVector<KernelParamGroup, 6> getKernelParamGroups(KernelShape shape);

/// Which ports of a kernel's node are arrays of one value per instance, as
/// bit masks by port (PerInstancePorts, DataflowGraph.h): such an input is
/// one buffer parameter (KernelParamGroup::Inputs), such an output one of
/// PerInstanceOutputs. convert-hpvm-to-gpu records the masks it built a
/// leaf's kernel for on the leaf (hpvm.kernel_per_instance); the host runs
/// the kernel only where its own masks are the same.
struct PerInstanceMasks {
  uint64_t inputs = 0;
  uint64_t outputs = 0;
};
/// The value of hpvm.kernel_per_instance for `masks`: [inputs, outputs].
DenseI64ArrayAttr getPerInstanceMasksAttr(MLIRContext *context, PerInstanceMasks masks);
/// The masks hpvm.kernel_per_instance `attr` records, none when it is null.
std::optional<PerInstanceMasks> getPerInstanceMasks(DenseI64ArrayAttr attr);

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

/// Every runtime function the compiler calls: X(enumerator, C name,
/// signature). A signature is the result's code then the parameters' in
/// parentheses: v void, p pointer (any pointer, and hpvm_status_t), i i32
/// (also uint32_t and the enums), l i64 (also uint64_t and size_t), f f32,
/// d f64.
// clang-format off
#define HPVM_RUNTIME_FUNCTIONS(X)                                              \
  /* Errors */                                                                 \
  X(CheckAt,             hpvm_rt_check_at,             "v(pp)")                \
  X(AssertFailed,        hpvm_rt_assert_failed,        "v(pp)")                \
  X(StatusCode,          hpvm_status_code,             "i(p)")                 \
  X(StatusFree,          hpvm_status_free,             "v(p)")                 \
  /* Parallel-for and task graphs */                                           \
  X(ParallelFor,         hpvm_rt_parallel_for,         "p(ippp)")              \
  X(GraphCreate,         hpvm_rt_graph_create,         "p(ip)")                \
  X(GraphAddNode,        hpvm_rt_graph_add_node,       "p(pppipp)")            \
  X(GraphAddGrid,        hpvm_rt_graph_add_grid,       "p(ppppippp)")          \
  X(GraphRun,            hpvm_rt_graph_run,            "p(p)")                 \
  X(GraphDestroy,        hpvm_rt_graph_destroy,        "v(p)")                 \
  /* Launch and wait */                                                        \
  X(Launch,              hpvm_rt_launch,               "p(ppp)")               \
  X(Wait,                hpvm_rt_wait,                 "p(p)")                 \
  /* Streaming */                                                              \
  X(PipelineCreate,      hpvm_rt_pipeline_create,      "p(llip)")              \
  X(PipelineAddStage,    hpvm_rt_pipeline_add_stage,   "p(pppipipipp)")        \
  X(PipelineConnect,     hpvm_rt_pipeline_connect,     "p(piiii)")             \
  X(PipelineDestroy,     hpvm_rt_pipeline_destroy,     "v(p)")                 \
  X(StreamLaunch,        hpvm_rt_stream_launch,        "p(pp)")                \
  X(StreamPush,          hpvm_rt_stream_push,          "p(pp)")                \
  X(StreamPop,           hpvm_rt_stream_pop,           "p(pp)")                \
  X(StreamWait,          hpvm_rt_stream_wait,          "p(p)")                 \
  /* Memory tracker */                                                         \
  X(Track,               hpvm_rt_track,                "p(pl)")                \
  X(Untrack,             hpvm_rt_untrack,              "p(p)")                 \
  X(Discard,             hpvm_rt_discard,              "p(p)")                 \
  X(RequestHost,         hpvm_rt_request_host,         "p(pli)")               \
  /* Kernel versions of nodes */                                               \
  X(KernelRun,           hpvm_rt_kernel_run,           "p(ppppip)")            \
  X(KernelRunSplit,      hpvm_rt_kernel_run_split,     "p(ppppiiippp)")        \
  X(NoCPUVersion,        hpvm_rt_no_cpu_version,       "p(pp)")                \
  X(GridFits,            hpvm_rt_grid_fits,            "p(piliil)")            \
  X(TraceNode,           hpvm_rt_trace_node,           "v(pp)")                \
  X(TraceNodeDone,       hpvm_rt_trace_node_done,      "v(p)")                 \
  /* Tensor graphs launched with tensor objects */                             \
  X(TensorInput,         hpvm_rt_tensor_input,         "p(pipi)")              \
  X(TensorOutput,        hpvm_rt_tensor_output,        "p(ippi)")              \
  /* Tensor kernels */                                                         \
  X(TensorMatmulF32,     hpvm_rt_tensor_matmul_f32,    "v(ppppllllld)")        \
  X(TensorMatmulConstantF32, hpvm_rt_tensor_matmul_constant_f32,               \
    "v(ppppllllld)")                                                           \
  X(TensorMatmulHalf,    hpvm_rt_tensor_matmul_half,   "v(ppppllllldl)")       \
  X(TensorNarrowF32,     hpvm_rt_tensor_narrow_f32,    "v(ppll)")              \
  X(TensorConv2DF32,     hpvm_rt_tensor_conv2d_f32,                            \
    "v(ppppllllllllllllllld)")                                                 \
  X(TensorConv2DConstantF32, hpvm_rt_tensor_conv2d_constant_f32,               \
    "v(ppppllllllllllllllld)")                                                 \
  X(TensorConv2DApproxF32, hpvm_rt_tensor_conv2d_approx_f32,                   \
    "v(ppppllllllllllllllldlll)")                                              \
  X(TensorPoolF32,       hpvm_rt_tensor_pool_f32,      "v(pplllllllllllll)")   \
  /* Images with their channels in blocks of 16 */                             \
  X(TensorConv2DBlockedF32, hpvm_rt_tensor_conv2d_blocked_f32,                 \
    "v(ppppllllllllllllllldl)")                                                \
  X(TensorPoolBlockedF32, hpvm_rt_tensor_pool_blocked_f32,                     \
    "v(pplllllllllllll)")                                                      \
  X(TensorToBlockedF32,  hpvm_rt_tensor_to_blocked_f32, "v(ppllll)")           \
  X(TensorFromBlockedF32, hpvm_rt_tensor_from_blocked_f32, "v(ppllll)")        \
  /* Contractions (hpvm-vectorize's plans) */                                  \
  X(ContractF32,         hpvm_rt_contract_f32,         "i(pllplllllfppl)")     \
  X(ContractPays,        hpvm_rt_contract_pays,        "i(lll)")               \
  /* The buffer cache (the memref lowering's allocation functions) */          \
  X(MemrefAlloc,         _mlir_memref_to_llvm_alloc,   "p(l)")                 \
  X(MemrefFree,          _mlir_memref_to_llvm_free,    "v(p)")                 \
  X(BufferLastUse,       hpvm_rt_buffer_last_use,      "i(pl)")

/// The C library's functions generated code calls (launch blocks, arrays of
/// values per instance, barrier spills), in the same form; checked against
/// <stdlib.h>.
#define HPVM_LIBC_FUNCTIONS(X)                                                 \
  X(Malloc,              malloc,                       "p(l)")                 \
  X(Free,                free,                         "v(p)")
// clang-format on

enum class RuntimeFn : unsigned {
#define HPVM_RUNTIME_FN_ENUM(id, name, signature) id,
  HPVM_RUNTIME_FUNCTIONS(HPVM_RUNTIME_FN_ENUM)
  HPVM_LIBC_FUNCTIONS(HPVM_RUNTIME_FN_ENUM)
#undef HPVM_RUNTIME_FN_ENUM
};
/// How many functions HPVM_RUNTIME_FUNCTIONS and HPVM_LIBC_FUNCTIONS list.
inline constexpr unsigned kNumRuntimeFunctions = 0
#define HPVM_RUNTIME_FN_COUNT(id, name, signature) +1
    HPVM_RUNTIME_FUNCTIONS(HPVM_RUNTIME_FN_COUNT)
    HPVM_LIBC_FUNCTIONS(HPVM_RUNTIME_FN_COUNT)
#undef HPVM_RUNTIME_FN_COUNT
    ;

/// The functions generated code defines for the runtime to call (the
/// runtime's function pointer types), in the same form: X(enumerator, C
/// typedef, signature).
// clang-format off
#define HPVM_RUNTIME_CALLBACKS(X)                                              \
  X(ParallelForFn,       hpvm_rt_parallel_for_fn_t,    "v(pp)")                \
  X(NodeFn,              hpvm_rt_node_fn_t,            "p(ppl)")               \
  X(StageFn,             hpvm_rt_stage_fn_t,           "p(pplpp)")             \
  X(RootFn,              hpvm_rt_root_fn_t,            "p(p)")
// clang-format on

enum class RuntimeCallback : unsigned {
#define HPVM_RUNTIME_CALLBACK_ENUM(id, name, signature) id,
  HPVM_RUNTIME_CALLBACKS(HPVM_RUNTIME_CALLBACK_ENUM)
#undef HPVM_RUNTIME_CALLBACK_ENUM
};

/// The C name of `fn`.
StringRef getName(RuntimeFn fn);
/// The signature code of `fn` (HPVM_RUNTIME_FUNCTIONS).
StringRef getSignature(RuntimeFn fn);
/// The LLVM function type of `fn`.
LLVM::LLVMFunctionType getFunctionType(MLIRContext *context, RuntimeFn fn);
/// The C typedef of `callback`.
StringRef getName(RuntimeCallback callback);
/// The signature code of `callback` (HPVM_RUNTIME_CALLBACKS).
StringRef getSignature(RuntimeCallback callback);
/// The LLVM function type of the functions generated code passes as
/// `callback`.
LLVM::LLVMFunctionType getFunctionType(MLIRContext *context, RuntimeCallback callback);
/// The LLVM type of signature code `code` (v is the LLVM void type).
Type getTypeOfCode(MLIRContext *context, char code);

/// The declaration of `fn` in `module`: the existing one, or a new one at the
/// start of the module. Fails (with an error at the existing symbol) when
/// `module` holds another symbol of that name or a declaration of another
/// type. The only way the compiler declares a runtime function.
FailureOr<LLVM::LLVMFuncOp>
lookupOrCreate(OpBuilder &b, Operation *module, RuntimeFn fn,
               SymbolTableCollection *symbolTables = nullptr);

/// Calls `fn` (declared with lookupOrCreate) with `args`; returns its result,
/// or null for a void function or when the declaration failed.
Value call(OpBuilder &b, Location loc, Operation *module, RuntimeFn fn,
           ValueRange args, SymbolTableCollection *symbolTables = nullptr);

} // namespace mlir::hpvm::abi

#endif // HPVM_CONVERSION_RUNTIMEABI_H
