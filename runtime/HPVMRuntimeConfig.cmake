# find_package(HPVMRuntime) for an install of the standalone runtime build: HPVM::hpvm_rt
# (static) and HPVM::hpvm_rt_shared.  The compiler's install has HPVMConfig.cmake instead.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/HPVMRuntimeTargets.cmake")
