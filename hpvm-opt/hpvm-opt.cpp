//===- hpvm-opt.cpp - The hpvm optimizer driver ---------------------------===//
// Parses, verifies, transforms and prints IR in the hpvm dialect and the dialects leaves use.
#include "HPVM/Dialect/HPVM/IR/HPVMDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::hpvm::test {
void registerTestPasses();
} // namespace mlir::hpvm::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::hpvm::test::registerTestPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::hpvm::HPVMDialect>();
  // The dialects leaf bodies are written in and the dialects lowerings target.
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::index::IndexDialect,
                  mlir::LLVM::LLVMDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::NVVM::NVVMDialect, mlir::omp::OpenMPDialect,
                  mlir::scf::SCFDialect, mlir::spirv::SPIRVDialect,
                  mlir::tensor::TensorDialect, mlir::ub::UBDialect,
                  mlir::vector::VectorDialect>();
  // Interfaces that upstream conversions and bufferization attach lazily.
  mlir::registerAllExtensions(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "HPVM optimizer driver\n", registry));
}
