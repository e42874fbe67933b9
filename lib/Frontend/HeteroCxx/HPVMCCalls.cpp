//===- HPVMCCalls.cpp - The HPVM-C functions the lowering calls ------------===//
// Their declarations in the module, by the names of HPVM/HPVMC/ApiNames.def
// (runtime/include/hpvm/hpvm.h declares them for C).
#include "Graph.h"

#include "HPVM/HPVMC/ApiNames.h"

using namespace llvm;

namespace hpvm::hetero {

HPVMCApi::HPVMCApi(Module &module) {
  LLVMContext &c = module.getContext();
  Type *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c), *ptr = PointerType::get(c, 0);
  Type *voidType = Type::getVoidTy(c);
  auto get = [&](StringRef name, Type *result, ArrayRef<Type *> params, bool varargs = false) {
    return module.getOrInsertFunction(name, FunctionType::get(result, params, varargs));
  };
  hint = get(hpvmc_api::Hint, voidType, {i32});
  attributes = get(hpvmc_api::Attributes, voidType, {i32}, true);
  ret = get(hpvmc_api::Return, voidType, {i32}, true);
  createNode = get(hpvmc_api::CreateNode, ptr, {i32}, true);
  bindIn = get(hpvmc_api::BindIn, voidType, {ptr, i32, i32, i32});
  bindOut = get(hpvmc_api::BindOut, voidType, {ptr, i32, i32, i32});
  edge = get(hpvmc_api::Edge, ptr, {ptr, ptr, i32, i32, i32, i32});
  getNode = get(hpvmc_api::GetNode, ptr, {});
  instanceId[0] = get((hpvmc_api::InstanceIdPrefix + "x").str(), i64, {ptr});
  instanceId[1] = get((hpvmc_api::InstanceIdPrefix + "y").str(), i64, {ptr});
  instanceId[2] = get((hpvmc_api::InstanceIdPrefix + "z").str(), i64, {ptr});
  launch = get(hpvmc_api::Launch, ptr, {i32}, true);
  wait = get(hpvmc_api::Wait, voidType, {ptr});
  push = get(hpvmc_api::Push, voidType, {ptr, ptr});
  track = get(hpvmc_api::Track, voidType, {ptr, i64});
  untrack = get(hpvmc_api::Untrack, voidType, {ptr});
  request = get(hpvmc_api::Request, voidType, {ptr, i64});
}

} // namespace hpvm::hetero
