# lit configuration of the HPVM test suite: tools, substitutions and hardware features.
import ctypes
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "HPVM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "lib"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hpvm_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%hpvm_src_root", config.hpvm_src_root))
config.substitutions.append(("%hpvm_obj_root", config.hpvm_obj_root))
config.substitutions.append(("%hpvm_tools_dir", config.hpvm_tools_dir))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%benchmarks", os.path.join(config.hpvm_src_root, "benchmarks")))
config.substitutions.append(("%examples", os.path.join(config.hpvm_src_root, "examples")))
# Fake libcuda / libcudnn / libcublas over host memory (runtime/test/fake_*.c).
for fake in ("cudnn", "cublas", "cuda"):  # %fake_cuda is a prefix of %fake_cudnn
    config.substitutions.append(("%%fake_%s" % fake, os.path.join(
        config.hpvm_obj_root, "lib", "libhpvm-fake-%s.so" % fake)))
# `%expect-exit 1 cmd ...` succeeds only when cmd exits with status 1: error tests use it
# rather than `not`, which a crash after the expected message also satisfies.
config.substitutions.append(("%expect-exit", "%s %s" % (
    config.python_executable, os.path.join(config.hpvm_src_root, "scripts", "expect-exit.py"))))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.hpvm_tools_dir, config.llvm_tools_dir]
tools = ["hpvm-opt", "hpvm-translate", "hpvm-capi-test", "hpvm-compile-test", "hpvm-cc",
         "hpvm-runtime-abi-test"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.hpvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)


def has_cuda_device():
    """A CUDA driver that reports at least one device."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0:
        return False
    return cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def has_opencl_device():
    """An OpenCL ICD loader with at least one platform that has a device."""
    try:
        cl = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return False
    platforms = (ctypes.c_void_p * 8)()
    num_platforms = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(8, platforms, ctypes.byref(num_platforms)) != 0:
        return False
    CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
    for i in range(min(num_platforms.value, 8)):
        num_devices = ctypes.c_uint(0)
        if (cl.clGetDeviceIDs(ctypes.c_void_p(platforms[i]),
                              ctypes.c_ulonglong(CL_DEVICE_TYPE_ALL), 0, None,
                              ctypes.byref(num_devices)) == 0
                and num_devices.value > 0):
            return True
    return False


if has_cuda_device():
    config.available_features.add("cuda-device")
if has_opencl_device():
    config.available_features.add("opencl")
# MPI: mpirun and the runtime's MPI layer (built where the bootstrap installed Open MPI).
if shutil.which("mpirun") and os.path.exists(
        os.path.join(config.hpvm_obj_root, "runtime", "libhpvm_rt_mpi.a")):
    config.available_features.add("mpi")
# mpirun as the tests run it: on one machine with more ranks than cores, as root where the
# tests run as root (Open MPI refuses it unless told), never longer than two minutes.
config.substitutions.append(("%mpirun", "timeout 120 env OMPI_ALLOW_RUN_AS_ROOT=1 "
                             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe"))
if shutil.which("dot"):
    config.available_features.add("graphviz")
if shutil.which("llvm-spirv-15") or shutil.which("llvm-spirv"):
    config.available_features.add("llvm-spirv")
ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
config.substitutions.append(("%ptxas", ptxas))
# The CUDA toolkit around ptxas (hpvm-embed-kernels builds fat binaries with its fatbinary).
cuda_home = os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))
if os.path.exists(os.path.join(cuda_home, "bin", "fatbinary")):
    config.available_features.add("cuda-toolkit")
config.substitutions.append(("%cuda_home", cuda_home))
