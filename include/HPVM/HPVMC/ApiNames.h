//===- ApiNames.h - The names of the HPVM-C API as constants ------*- C++ -*-===//
// hpvm::hpvmc_api::Hint is "__hpvm__hint", ...; the prefix of a family is
// InstanceIdPrefix, ... (HPVM/HPVMC/ApiNames.def, the one table).
#ifndef HPVM_HPVMC_APINAMES_H
#define HPVM_HPVMC_APINAMES_H

#include "llvm/ADT/StringRef.h"

namespace hpvm::hpvmc_api {
#define HPVMC_FUNCTION(ID, NAME) inline constexpr llvm::StringLiteral ID = NAME;
#define HPVMC_FAMILY(ID, PREFIX) inline constexpr llvm::StringLiteral ID##Prefix = PREFIX;
#include "HPVM/HPVMC/ApiNames.def"
/// The prefix every __hpvm__ function of the API shares.
inline constexpr llvm::StringLiteral Prefix = "__hpvm__";
} // namespace hpvm::hpvmc_api

#endif // HPVM_HPVMC_APINAMES_H
