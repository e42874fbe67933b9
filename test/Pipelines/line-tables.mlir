// hpvm-line-tables alone: a generated llvm.func (no subprogram of its own)
// gets one of line tables only, from its location, through
// ensure-debug-info-scope-on-llvm-func run as a nested pipeline (shown by
// --mlir-print-ir-after-all); a function with its own subprogram (host code
// imported from C with -g) keeps it.
// RUN: hpvm-opt %s --hpvm-line-tables --mlir-print-debuginfo | FileCheck %s
// RUN: hpvm-opt %s --hpvm-line-tables --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED

// CHECK-DAG: #[[UNIT:.*]] = #llvm.di_compile_unit<{{.*}}emissionKind = LineTablesOnly>
// CHECK-DAG: #[[GEN:di_subprogram[0-9]*]] = #llvm.di_subprogram<{{.*}}compileUnit = #[[UNIT]], {{.*}}name = "generated"{{.*}}line = 3
// CHECK-DAG: #[[HOST:di_subprogram[0-9]*]] = #llvm.di_subprogram<{{.*}}name = "host"{{.*}}line = 10
// CHECK-DAG: loc(fused<#[[GEN]]>[
// CHECK-DAG: loc(fused<#[[HOST]]>[

// NESTED: IR Dump After DIScopeForLLVMFuncOpPass (ensure-debug-info-scope-on-llvm-func)
// NESTED: IR Dump After HPVMLineTables (hpvm-line-tables)

#file = #llvm.di_file<"host.c" in "/src">
#unit = #llvm.di_compile_unit<id = distinct[0]<>, sourceLanguage = DW_LANG_C11, file = #file, producer = "clang", isOptimized = false, emissionKind = Full>
#type = #llvm.di_subroutine_type<callingConvention = DW_CC_normal>
#host = #llvm.di_subprogram<id = distinct[1]<>, compileUnit = #unit, scope = #file, name = "host", file = #file, line = 10, scopeLine = 10, subprogramFlags = Definition, type = #type>

llvm.func @generated(%x: i32) -> i32 {
  %0 = llvm.add %x, %x : i32 loc("leaf.c":4:7)
  llvm.return %0 : i32 loc("leaf.c":5:3)
} loc("leaf.c":3:1)

llvm.func @host() {
  llvm.return loc(fused<#host>["host.c":11:3])
} loc(fused<#host>["host.c":10:1])
