// hpvm-line-tables on generated functions whose calls have no source line (a
// Hetero-C++ graph function, which its frontend writes without debug
// information): LLVM refuses a call of an inlinable function without a
// location in a function with a subprogram, so each such call gets the line
// of its function, else of the function's first located op, else line 0 of
// the program's first source file; the module then translates to LLVM IR.
// (Before, `hpvm-cc -g` failed on every Hetero-C++ program: "inlinable
// function call in a function with a DISubprogram location must have a debug
// location".)
// RUN: hpvm-opt %s --hpvm-line-tables --mlir-print-debuginfo | FileCheck %s
// RUN: hpvm-opt %s --hpvm-line-tables --mlir-print-debuginfo | hpvm-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: llvm.func @callee
// CHECK-LABEL: llvm.func @entry
// CHECK: llvm.call @callee() : () -> () loc(#[[ENTRYCALL:loc[0-9]*]])
// CHECK-LABEL: llvm.func @inner
// CHECK: llvm.call @callee() : () -> () loc(#[[INNERCALL:loc[0-9]*]])
// CHECK-DAG: #[[ENTRYCALL]] = loc("/src/host.c":0:0)
// CHECK-DAG: #[[INNERCALL]] = loc("leaf.c":7:3)

// LLVM-LABEL: define void @entry()
// LLVM: call void @callee(), !dbg
// LLVM-LABEL: define void @inner()
// LLVM: call void @callee(), !dbg

#file = #llvm.di_file<"host.c" in "/src">
#unit = #llvm.di_compile_unit<id = distinct[0]<>, sourceLanguage = DW_LANG_C11, file = #file, producer = "clang", isOptimized = false, emissionKind = Full>
#type = #llvm.di_subroutine_type<callingConvention = DW_CC_normal>
#host = #llvm.di_subprogram<id = distinct[1]<>, compileUnit = #unit, scope = #file, name = "host", file = #file, line = 10, scopeLine = 10, subprogramFlags = Definition, type = #type>

llvm.func @callee() {
  llvm.return loc("leaf.c":2:3)
} loc("leaf.c":1:1)

// Nothing located: line 0 of host.c.
llvm.func @entry() {
  llvm.call @callee() : () -> () loc(unknown)
  llvm.return loc(unknown)
} loc(unknown)

// The first located op gives the line.
llvm.func @inner() {
  llvm.call @callee() : () -> () loc(unknown)
  llvm.return loc("leaf.c":7:3)
} loc(unknown)

llvm.func @host() {
  llvm.return loc(fused<#host>["host.c":11:3])
} loc(fused<#host>["host.c":10:1])
