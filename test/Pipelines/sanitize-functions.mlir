// hpvm-sanitize-functions: every llvm.func defined at the top of the module
// gets the attribute of each sanitizer named (once), declarations and
// functions marked disable_sanitizer_instrumentation do not; an unknown
// sanitizer is an error naming it. hpvm-lower-to-llvm-pipeline runs it with
// its `sanitize` option (hpvm-cc -fsanitize=address|thread), and the
// attributes reach LLVM IR, where clang's sanitizer passes look for them.
// RUN: hpvm-opt %s --hpvm-sanitize-functions=sanitizers=address | FileCheck %s
// RUN: hpvm-opt %s --hpvm-sanitize-functions=sanitizers=thread | FileCheck %s --check-prefix=THREAD
// RUN: hpvm-opt %s --hpvm-sanitize-functions=sanitizers=address | hpvm-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// RUN: hpvm-opt %s --hpvm-lower-to-llvm-pipeline=sanitize=address | FileCheck %s --check-prefix=PIPELINE
// RUN: %expect-exit 1 hpvm-opt %s --hpvm-sanitize-functions=sanitizers=address,memroy 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK-LABEL: llvm.func @leaf
// CHECK-SAME: passthrough = ["nounwind", "sanitize_address"]
// CHECK-LABEL: llvm.func @marked
// CHECK-SAME: passthrough = ["sanitize_address"]
// CHECK-LABEL: llvm.func @opted_out
// CHECK-SAME: passthrough = ["disable_sanitizer_instrumentation"]
// CHECK-LABEL: llvm.func @declared
// CHECK-NOT: sanitize_address

// THREAD-LABEL: llvm.func @leaf
// THREAD-SAME: passthrough = ["nounwind", "sanitize_thread"]
// THREAD-LABEL: llvm.func @marked
// THREAD-SAME: passthrough = ["sanitize_address", "sanitize_thread"]

// LLVM: define void @leaf() #[[LEAF:[0-9]+]]
// LLVM: attributes #[[LEAF]] = { nounwind sanitize_address }

// PIPELINE-LABEL: llvm.func @leaf
// PIPELINE-SAME: sanitize_address

// UNKNOWN: error: hpvm-sanitize-functions: unknown sanitizer 'memroy'; expected address, thread, memory or hwaddress

llvm.func @leaf() attributes {passthrough = ["nounwind"]} {
  llvm.return
}

llvm.func @marked() attributes {passthrough = ["sanitize_address"]} {
  llvm.return
}

llvm.func @opted_out() attributes {passthrough = ["disable_sanitizer_instrumentation"]} {
  llvm.return
}

llvm.func @declared()
