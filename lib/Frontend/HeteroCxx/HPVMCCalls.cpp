//===- HPVMCCalls.cpp - The HPVM-C functions the lowering calls ------------===//
// Their declarations in the module (runtime/include/hpvm/hpvm.h declares them
// for C).
#include "Graph.h"


using namespace llvm;

namespace hpvm::hetero {

HPVMCApi::HPVMCApi(Module &module) {
  LLVMContext &c = module.getContext();
  Type *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c), *ptr = PointerType::get(c, 0);
  Type *voidType = Type::getVoidTy(c);
  auto get = [&](StringRef name, Type *result, ArrayRef<Type *> params, bool varargs = false) {
    return module.getOrInsertFunction(name, FunctionType::get(result, params, varargs));
  };
  hint = get("__hpvm__hint", voidType, {i32});
  attributes = get("__hpvm__attributes", voidType, {i32}, true);
  ret = get("__hpvm__return", voidType, {i32}, true);
  createNode = get("__hpvm__createNodeND", ptr, {i32}, true);
  bindIn = get("__hpvm__bindIn", voidType, {ptr, i32, i32, i32});
  bindOut = get("__hpvm__bindOut", voidType, {ptr, i32, i32, i32});
  edge = get("__hpvm__edge", ptr, {ptr, ptr, i32, i32, i32, i32});
  getNode = get("__hpvm__getNode", ptr, {});
  instanceId[0] = get("__hpvm__getNodeInstanceID_x", i64, {ptr});
  instanceId[1] = get("__hpvm__getNodeInstanceID_y", i64, {ptr});
  instanceId[2] = get("__hpvm__getNodeInstanceID_z", i64, {ptr});
  launch = get("__hpvm__launch", ptr, {i32}, true);
  wait = get("__hpvm__wait", voidType, {ptr});
  push = get("__hpvm__push", voidType, {ptr, ptr});
  track = get("llvm_hpvm_track_mem", voidType, {ptr, i64});
  untrack = get("llvm_hpvm_untrack_mem", voidType, {ptr});
  request = get("llvm_hpvm_request_mem", voidType, {ptr, i64});
}

} // namespace hpvm::hetero
