# find_package(HPVM): what a project outside this one needs to use an HPVM install.
#   HPVM::hpvm_rt, HPVM::hpvm_rt_shared  the runtime (hpvm/hpvm_rt.h, hpvm/hpvm.h)
#   HPVM::HPVMCAPI                       the dialect's C API (HPVM/C/HPVM.h; its mlir-c
#                                        headers come from MLIR's own install)
#   HPVM::HPVMCompiler                   the compiler as a C library (HPVM/C/Compiler.h)
#   HPVM_CC_EXECUTABLE, HPVM_OPT_EXECUTABLE, HPVM_TRANSLATE_EXECUTABLE   the tools
#   HPVM_INCLUDE_DIR                     <prefix>/include
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/HPVMRuntimeTargets.cmake")

get_filename_component(HPVM_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(HPVM_INCLUDE_DIR "${HPVM_PREFIX}/include")
set(HPVM_CC_EXECUTABLE "${HPVM_PREFIX}/bin/hpvm-cc")
set(HPVM_OPT_EXECUTABLE "${HPVM_PREFIX}/bin/hpvm-opt")
set(HPVM_TRANSLATE_EXECUTABLE "${HPVM_PREFIX}/bin/hpvm-translate")

if(NOT TARGET HPVM::HPVMCAPI AND EXISTS "${HPVM_PREFIX}/lib/libHPVMCAPI.so")
  add_library(HPVM::HPVMCAPI SHARED IMPORTED)
  set_target_properties(HPVM::HPVMCAPI PROPERTIES
    IMPORTED_LOCATION "${HPVM_PREFIX}/lib/libHPVMCAPI.so"
    INTERFACE_INCLUDE_DIRECTORIES "${HPVM_INCLUDE_DIR}")
endif()

if(NOT TARGET HPVM::HPVMCompiler AND EXISTS "${HPVM_PREFIX}/lib/libHPVMCompiler.so")
  add_library(HPVM::HPVMCompiler SHARED IMPORTED)
  set_target_properties(HPVM::HPVMCompiler PROPERTIES
    IMPORTED_LOCATION "${HPVM_PREFIX}/lib/libHPVMCompiler.so"
    INTERFACE_INCLUDE_DIRECTORIES "${HPVM_INCLUDE_DIR}")
endif()
