/* spirv_scalar_nulls.h - OpConstantNull of scalar types as plain constants, for llvm-spirv 15.
 *
 * LLVM's SPIR-V backend (clang-22, llc-22, the compiler's own serialization) writes every zero
 * constant as OpConstantNull, which llvm-spirv 15 rejects for scalars (an assertion).  The
 * rewrite turns the OpConstantNull of bool, integer and float types into OpConstantFalse /
 * OpConstant 0 (the same values).  Header-only and allocation-free: the runtime uses it before
 * it translates a module itself.  The compiler, which includes no private runtime header, has
 * its own C++ copy for the modules it embeds (lib/Conversion/HPVMToGPU/SerializeSPIRV.cpp). */
#ifndef HPVM_DEVICE_OPENCL_SPIRV_SCALAR_NULLS_H
#define HPVM_DEVICE_OPENCL_SPIRV_SCALAR_NULLS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The id bound of a SPIR-V module of `count` words (the size of the scratch below), or 0 for
 * something that is not a SPIR-V module. */
static inline size_t hpvm_spirv_id_bound(const uint32_t *words, size_t count) {
  return count >= 5 && words[0] == 0x07230203u ? words[3] : 0;
}

/* Writes the rewritten module to `out` (room for 2 * count + 1 words) and returns its length in
 * words.  `scratch` holds `bound` zero bytes (hpvm_spirv_id_bound; bound 0 copies the module
 * unchanged).  The part after a malformed instruction is copied as it is. */
static inline size_t hpvm_spirv_scalar_nulls_rewrite(const uint32_t *in, size_t count,
                                                     uint32_t *out, uint8_t *scratch,
                                                     size_t bound) {
  enum { TYPE_BOOL = 20, TYPE_INT = 21, TYPE_FLOAT = 22, CONSTANT_FALSE = 42, CONSTANT = 43,
         CONSTANT_NULL = 46 };
  size_t at = 0, done = 0;
  if (bound) {
    memcpy(out, in, 5 * 4);
    at = done = 5;
    /* scratch per id: 0 not a scalar type, 1/2 words of its value, 3 bool */
    while (done < count) {
      uint32_t length = in[done] >> 16, opcode = in[done] & 0xFFFFu;
      if (length == 0 || length > count - done)
        break;
      const uint32_t *words = &in[done];
      if ((opcode == TYPE_INT || opcode == TYPE_FLOAT) && length >= 3 && words[1] < bound)
        scratch[words[1]] = words[2] > 32 ? 2 : 1;
      else if (opcode == TYPE_BOOL && length >= 2 && words[1] < bound)
        scratch[words[1]] = 3;
      if (opcode == CONSTANT_NULL && length == 3 && words[1] < bound && scratch[words[1]]) {
        uint8_t kind = scratch[words[1]];
        uint32_t value_words = kind == 3 ? 0 : kind;
        out[at++] = ((3 + value_words) << 16) | (kind == 3 ? CONSTANT_FALSE : CONSTANT);
        out[at++] = words[1];
        out[at++] = words[2];
        for (uint32_t i = 0; i < value_words; ++i)
          out[at++] = 0;
      } else {
        memcpy(&out[at], words, length * 4);
        at += length;
      }
      done += length;
    }
  }
  memcpy(&out[at], &in[done], (count - done) * 4);
  return at + (count - done);
}

#endif /* HPVM_DEVICE_OPENCL_SPIRV_SCALAR_NULLS_H */
