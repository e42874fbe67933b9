// Large constant globals leave the module for an assembly file of .incbin
// directives: from the parameter archive where a dense_resource key is there,
// else from a side file. Small ones, all-zero splats and variables stay.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/parameter-archive.py %t/w.params \
// RUN:   conv=000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F \
// RUN:   bias=F0F1F2F3
// RUN: sed 's|@ARCHIVE@|%t/w.params|' %s > %t/in.mlir
// RUN: hpvm-opt --hpvm-externalize-constants="asm=%t/c.s min-bytes=16" %t/in.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=ASM < %t/c.s
// RUN: od -A d -t x1 -v %t/c.s.bin | FileCheck %s --check-prefix=BIN
// Without asm, archive keys are read into the initializers (self-contained IR).
// RUN: hpvm-opt --hpvm-externalize-constants %t/in.mlir | FileCheck %s --check-prefix=INLINE
// A relative archive path is taken from the module file's folder.
// RUN: sed 's|@ARCHIVE@|w.params|' %s > %t/relative.mlir
// RUN: cd / && hpvm-opt --hpvm-externalize-constants %t/relative.mlir | FileCheck %s --check-prefix=INLINE

module attributes {hpvm.parameters = "@ARCHIVE@"} {
  llvm.mlir.global private constant @weights(dense_resource<conv> : tensor<2x4xf32>) {addr_space = 0 : i32, alignment = 16 : i64} : !llvm.array<2 x array<4 x f32>>
  llvm.mlir.global private constant @small(dense_resource<bias> : tensor<1xf32>) {addr_space = 0 : i32} : !llvm.array<1 x f32>
  llvm.mlir.global private constant @table(dense<[1, 2, 3, 4, 5]> : tensor<5xi32>) {addr_space = 0 : i32} : !llvm.array<5 x i32>
  llvm.mlir.global private constant @ones(dense<1.0> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.mlir.global private constant @zeros(dense<0.0> : tensor<64xf32>) {addr_space = 0 : i32} : !llvm.array<64 x f32>
  llvm.mlir.global private @variable(dense<7> : tensor<8xi32>) {addr_space = 0 : i32} : !llvm.array<8 x i32>
  llvm.mlir.global private constant @blob(dense_resource<inline_blob> : tensor<4xi32>) {addr_space = 0 : i32} : !llvm.array<4 x i32>
  llvm.func @use() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @weights : !llvm.ptr
    %1 = llvm.mlir.addressof @table : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}

{-#
  dialect_resources: {
    builtin: {
      inline_blob: "0x04000000AAAAAAAABBBBBBBBCCCCCCCCDDDDDDDD"
    }
  }
#-}

// CHECK-NOT: hpvm.parameters
// CHECK: llvm.mlir.global external hidden constant @[[W:__hpvm_const_[0-9A-F]+_0]]() {addr_space = 0 : i32, alignment = 64 : i64, dso_local} : !llvm.array<2 x array<4 x f32>>
// CHECK: llvm.mlir.global private constant @small(dense<-3.84961827E+31> : tensor<1xf32>)
// CHECK: llvm.mlir.global external hidden constant @[[T:__hpvm_const_[0-9A-F]+_1]]() {{.*}}alignment = 64
// CHECK: llvm.mlir.global external hidden constant @[[O:__hpvm_const_[0-9A-F]+_2]]()
// CHECK: llvm.mlir.global private constant @zeros(dense<0.000000e+00> : tensor<64xf32>)
// CHECK: llvm.mlir.global private @variable(dense<7> : tensor<8xi32>)
// CHECK: llvm.mlir.global external hidden constant @[[B:__hpvm_const_[0-9A-F]+_3]]()
// CHECK: llvm.mlir.addressof @[[W]] : !llvm.ptr
// CHECK: llvm.mlir.addressof @[[T]] : !llvm.ptr

// The archive's bytes where they are (offset 128: after a 24-byte header and a
// 48-byte index, aligned to 64); the others from the side file. One .incbin per
// file, each constant a symbol inside the bytes it copies (the assembler reads
// the whole file for each .incbin).
// ASM: .section .rodata.hpvm_constants,"a",%progbits
// ASM: .p2align 6
// ASM-NEXT: .Lhpvm_archive_span:
// ASM-NEXT: .incbin "{{.*}}w.params", 128, 32
// ASM-NEXT: .globl [[W:__hpvm_const_[0-9A-F]+_0]]
// ASM-NEXT: .hidden [[W]]
// ASM-NEXT: .type [[W]], %object
// ASM-NEXT: .size [[W]], 32
// ASM-NEXT: .set [[W]], .Lhpvm_archive_span + 0
// ASM-NEXT: .p2align 6
// ASM-NEXT: .Lhpvm_side_span:
// ASM-NEXT: .incbin "{{.*}}c.s.bin", 0, 144
// ASM: .size [[T:__hpvm_const_[0-9A-F]+_1]], 20
// ASM-NEXT: .set [[T]], .Lhpvm_side_span + 0
// ASM: .size [[O:__hpvm_const_[0-9A-F]+_2]], 16
// ASM-NEXT: .set [[O]], .Lhpvm_side_span + 64
// ASM: .size [[B:__hpvm_const_[0-9A-F]+_3]], 16
// ASM-NEXT: .set [[B]], .Lhpvm_side_span + 128
// ASM-NOT: .incbin
// ASM: .section .note.GNU-stack
// The object has each symbol at its bytes.
// RUN: clang -c -x assembler %t/c.s -o %t/c.o
// RUN: llvm-objdump -t -s -j .rodata.hpvm_constants %t/c.o | FileCheck %s --check-prefix=OBJ
// OBJ-DAG: {{0+}} g O .rodata.hpvm_constants {{0+}}20 .hidden __hpvm_const_{{[0-9A-F]+}}_0
// OBJ-DAG: {{0+}}40 g O .rodata.hpvm_constants {{0+}}14 .hidden __hpvm_const_{{[0-9A-F]+}}_1
// OBJ-DAG: {{0+}}80 g O .rodata.hpvm_constants {{0+}}10 .hidden __hpvm_const_{{[0-9A-F]+}}_2
// OBJ-DAG: {{0+}}c0 g O .rodata.hpvm_constants {{0+}}10 .hidden __hpvm_const_{{[0-9A-F]+}}_3
// OBJ: Contents of section .rodata.hpvm_constants:
// OBJ-NEXT: 0000 00010203 04050607 08090a0b 0c0d0e0f
// OBJ: 00c0 aaaaaaaa bbbbbbbb cccccccc dddddddd

// The table, the splat expanded, the blob, each at a multiple of 64.
// BIN: 0000000 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00
// BIN-NEXT: 0000016 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
// BIN: 0000064 00 00 80 3f 00 00 80 3f 00 00 80 3f 00 00 80 3f
// BIN: 0000128 aa aa aa aa bb bb bb bb cc cc cc cc dd dd dd dd
// BIN-NEXT: 0000144

// INLINE-NOT: hpvm.parameters
// INLINE: llvm.mlir.global private constant @weights(dense<{{\[\[}}
// INLINE-SAME: tensor<2x4xf32>
// INLINE: llvm.mlir.global private constant @small(dense<-3.84961827E+31> : tensor<1xf32>)
// INLINE: llvm.mlir.global private constant @table(dense<[1, 2, 3, 4, 5]> : tensor<5xi32>)
