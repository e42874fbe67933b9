//===- Contraction.cpp - Reduction leaves as one packed contraction -------===//
// See Contraction.h: the plan and the sums variant of a leaf whose loop
// ContractionMatch.h matched. The plan evaluates the affine forms'
// coefficients with overflow checks and checks each obligation at the
// extremes of its form over the box of atoms (an affine form takes them at
// corners), so that when it goes on, the loop's addresses are exactly the
// affine ones it hands to the runtime.
#include "Contraction.h"

#include "ContractionMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "HPVM/Conversion/RuntimeABI.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::hpvm;
using namespace mlir::hpvm::contraction;

namespace {

//===----------------------------------------------------------------------===//
// The plan.
//===----------------------------------------------------------------------===//

class PlanEmitter {
public:
  PlanEmitter(Analysis &a, OpBuilder &b, Location loc, Block *entry)
      : a(a), b(b), loc(loc), context(b.getContext()) {
    i64 = b.getI64Type();
    i1 = b.getI1Type();
    overflow = LLVM::ConstantOp::create(b, loc, i1, b.getBoolAttr(false));
    unsigned inputs = a.leaf.getNumArguments();
    for (unsigned i = 0; i < inputs; ++i)
      mapping.map(a.leaf.getBody().front().getArgument(i),
                  entry->getArgument(i));
    for (unsigned d = 0; d < 4; ++d)
      extents[d] = entry->getArgument(inputs + d);
  }

  Analysis &a;
  OpBuilder &b;
  Location loc;
  MLIRContext *context;
  Type i64, i1;
  IRMapping mapping;
  Value overflow;
  /// x, y, tiles x, tiles y (the plan's last four inputs), then the trip count.
  Value extents[NumAtoms];

  Value constant(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  }

  /// `v` (invariant) computed in the plan.
  Value clone(Value v) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *op = v.getDefiningOp();
    if (auto query = dyn_cast<NumInstancesOp>(op)) {
      unsigned d = (query.getDim() == Dim::x ? 0 : 1) + 2 * query.getLevel();
      Value index =
          arith::IndexCastOp::create(b, loc, b.getIndexType(), extents[d]);
      mapping.map(v, index);
      return index;
    }
    for (Value operand : op->getOperands())
      clone(operand);
    Operation *copy = b.clone(*op, mapping);
    // Flags that make poison of values the leaf computes only on some paths.
    if (auto flags = dyn_cast<LLVM::IntegerOverflowFlagsInterface>(copy))
      flags.setOverflowFlags(LLVM::IntegerOverflowFlags::none);
    if (auto exact = dyn_cast<LLVM::ExactFlagInterface>(copy))
      exact.setIsExact(false);
    if (auto disjoint = dyn_cast<LLVM::DisjointFlagInterface>(copy))
      disjoint.setIsDisjoint(false);
    if (auto nneg = dyn_cast<LLVM::NonNegFlagInterface>(copy))
      nneg.setNonNeg(false);
    if (auto gep = dyn_cast<LLVM::GEPOp>(copy))
      gep.setNoWrapFlags(LLVM::GEPNoWrapFlags::none);
    return copy->getResult(0);
  }

  /// An invariant integer as a signed i64.
  Value asI64(Value v) {
    Value c = clone(v);
    Type type = c.getType();
    if (type.isIndex())
      return arith::IndexCastOp::create(b, loc, i64, c);
    if (type.getIntOrFloatBitWidth() < 64)
      return LLVM::SExtOp::create(b, loc, i64, c);
    return c;
  }

  Value checked(bool multiply, Value x, Value y) {
    auto pair = LLVM::LLVMStructType::getLiteral(context, {i64, i1});
    Value r =
        multiply
            ? LLVM::SMulWithOverflowOp::create(b, loc, pair, x, y).getResult()
            : LLVM::SAddWithOverflowOp::create(b, loc, pair, x, y).getResult();
    overflow = LLVM::OrOp::create(
        b, loc, overflow,
        LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{1}));
    return LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{0});
  }
  Value add(Value x, Value y) { return checked(false, x, y); }
  Value mul(Value x, Value y) { return checked(true, x, y); }

  Value poly(const Poly &p) {
    Value sum = constant(0);
    for (const Term &t : p) {
      Value term = constant(t.factor);
      for (Value s : t.symbols)
        term = mul(term, asI64(s));
      sum = add(sum, term);
    }
    return sum;
  }

  struct Coefs {
    Value atom[NumAtoms];
    Value constant;
  };
  Coefs coefs(const Form &f) {
    Coefs c;
    for (unsigned i = 0; i < NumAtoms; ++i)
      c.atom[i] = poly(f.coef[i]);
    c.constant = poly(f.constant);
    return c;
  }

  Value cmp(LLVM::ICmpPredicate p, Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) { return LLVM::AndOp::create(b, loc, x, y); }

  /// Whether the form stays in [lo, hi] over the box of atoms (extents >= 1).
  Value within(const Form &f, int64_t lo, int64_t hi) {
    Coefs c = coefs(f);
    Value zero = constant(0), one = constant(1);
    Value least = c.constant, most = c.constant;
    for (unsigned i = 0; i < NumAtoms; ++i) {
      if (f.coef[i].empty())
        continue;
      Value reach =
          mul(c.atom[i], LLVM::SubOp::create(b, loc, extents[i], one));
      Value positive = cmp(LLVM::ICmpPredicate::sgt, reach, zero);
      most = add(most, LLVM::SelectOp::create(b, loc, positive, reach, zero));
      least = add(least, LLVM::SelectOp::create(b, loc, positive, zero, reach));
    }
    return both(cmp(LLVM::ICmpPredicate::sge, least, constant(lo)),
                cmp(LLVM::ICmpPredicate::sle, most, constant(hi)));
  }
};

/// The step as a function of (a, b, acc): what the runtime calls to learn
/// whether the leaf's step is fused.
LLVM::LLVMFuncOp buildStep(Analysis &a, OpBuilder &b, SymbolTable &symbols) {
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMFunctionType::get(f32, {f32, f32, f32});
  Location loc = a.stepOp->getLoc();
  auto step = LLVM::LLVMFuncOp::create(
      b, loc, (a.leaf.getSymName() + "__sums_step").str(), type,
      LLVM::Linkage::Private);
  symbols.insert(step);
  Block *entry = step.addEntryBlock(b);
  OpBuilder sb = OpBuilder::atBlockBegin(entry);
  IRMapping mapping;
  mapping.map(a.loads[0].getResult(), entry->getArgument(0));
  mapping.map(a.loads[1].getResult(), entry->getArgument(1));
  mapping.map(a.acc, entry->getArgument(2));
  if (a.productOp)
    sb.clone(*a.productOp, mapping);
  Operation *copy = sb.clone(*a.stepOp, mapping);
  LLVM::ReturnOp::create(sb, loc, copy->getResult(0));
  return step;
}

/// What the plan's checks give: whether they all pass, and the runtime
/// contraction's operands (the one running along y, p, and the one along x,
/// q, with their strides in elements; the sums' shape and size in bytes).
struct CheckedOperands {
  Value ok;
  Value p, pRow, pDepth, q, qCol, qDepth, rows, cols, bytes;
};

/// Checks that the loop runs and that its addresses are the affine forms the
/// runtime takes; computes the contraction's operands.
CheckedOperands emitChecks(Analysis &a, PlanEmitter &e) {
  OpBuilder &pb = e.b;
  Location loc = e.loc;
  auto ptr = LLVM::LLVMPointerType::get(e.context);
  Type i64 = e.i64;
  CheckedOperands result;
  Value zero = e.constant(0), one = e.constant(1);
  Value &ok = result.ok;
  ok = LLVM::ConstantOp::create(pb, loc, pb.getI1Type(), pb.getBoolAttr(true));
  auto require = [&](Value condition) { ok = e.both(ok, condition); };
  for (unsigned d = 0; d < 4; ++d)
    require(e.cmp(LLVM::ICmpPredicate::sge, e.extents[d], one));
  // The trip count: n when the guard lets the loop run (n >= 1: the loop
  // runs n times), else no iteration (then the leaf is left as it is).
  Value guard = e.clone(a.guardCondition);
  if (!a.guardTrueEnters)
    guard =
        LLVM::XOrOp::create(pb, loc, guard,
                            LLVM::ConstantOp::create(pb, loc, pb.getI1Type(),
                                                     pb.getBoolAttr(true)));
  require(guard);
  Value trip = e.asI64(a.tripCount);
  require(e.cmp(LLVM::ICmpPredicate::sge, trip, one));
  e.extents[AtomK] = trip;
  for (const Obligation &o : a.obligations)
    require(e.within(o.form, o.lo, o.hi));
  // Each operand: base + cx * X + cy * Y + ck * kk + c0 with X = tile x *
  // width + x (the same coefficient through both ids), in bytes. Along a
  // dimension of one tile (a grid that is not tiled) the tile id is 0 and
  // its coefficient does not matter.
  PlanEmitter::Coefs c[2];
  Value oneTile[2] = {e.cmp(LLVM::ICmpPredicate::eq, e.extents[AtomTileX], one),
                      e.cmp(LLVM::ICmpPredicate::eq, e.extents[AtomTileY], one)};
  for (unsigned i = 0; i < 2; ++i) {
    c[i] = e.coefs(a.addresses[i].second);
    require(LLVM::OrOp::create(
        pb, loc, oneTile[0],
        e.cmp(LLVM::ICmpPredicate::eq, c[i].atom[AtomTileX],
              e.mul(c[i].atom[AtomX], e.extents[AtomX]))));
    require(LLVM::OrOp::create(
        pb, loc, oneTile[1],
        e.cmp(LLVM::ICmpPredicate::eq, c[i].atom[AtomTileY],
              e.mul(c[i].atom[AtomY], e.extents[AtomY]))));
  }
  // Which one runs along x (q: no y) and which along y (p: no x).
  Value firstIsQ =
      e.both(e.cmp(LLVM::ICmpPredicate::eq, c[0].atom[AtomY], zero),
             e.cmp(LLVM::ICmpPredicate::eq, c[1].atom[AtomX], zero));
  Value secondIsQ =
      e.both(e.cmp(LLVM::ICmpPredicate::eq, c[1].atom[AtomY], zero),
             e.cmp(LLVM::ICmpPredicate::eq, c[0].atom[AtomX], zero));
  require(LLVM::OrOp::create(pb, loc, firstIsQ, secondIsQ));
  auto pick = [&](Value q, Value p, bool wantQ) {
    return wantQ ? LLVM::SelectOp::create(pb, loc, firstIsQ, q, p).getResult()
                 : LLVM::SelectOp::create(pb, loc, firstIsQ, p, q).getResult();
  };
  Value four = e.constant(4);
  Value base[2];
  for (unsigned i = 0; i < 2; ++i) {
    for (Value v :
         {c[i].atom[AtomX], c[i].atom[AtomY], c[i].atom[AtomK], c[i].constant})
      require(e.cmp(LLVM::ICmpPredicate::eq,
                    LLVM::SRemOp::create(pb, loc, v, four), zero));
    base[i] = LLVM::GEPOp::create(pb, loc, ptr, pb.getI8Type(),
                                  e.clone(a.addresses[i].first),
                                  ArrayRef<LLVM::GEPArg>{c[i].constant});
    Value address = LLVM::PtrToIntOp::create(pb, loc, i64, base[i]);
    require(e.cmp(LLVM::ICmpPredicate::eq,
                  LLVM::AndOp::create(pb, loc, address, e.constant(3)), zero));
  }
  auto elements = [&](Value bytes) {
    return LLVM::SDivOp::create(pb, loc, bytes, four);
  };
  result.q = LLVM::SelectOp::create(pb, loc, firstIsQ, base[0], base[1]);
  result.p = LLVM::SelectOp::create(pb, loc, firstIsQ, base[1], base[0]);
  result.qCol = elements(pick(c[0].atom[AtomX], c[1].atom[AtomX], true));
  result.qDepth = elements(pick(c[0].atom[AtomK], c[1].atom[AtomK], true));
  result.pRow = elements(pick(c[0].atom[AtomY], c[1].atom[AtomY], false));
  result.pDepth = elements(pick(c[0].atom[AtomK], c[1].atom[AtomK], false));
  result.cols = e.mul(e.extents[AtomX], e.extents[AtomTileX]);
  result.rows = e.mul(e.extents[AtomY], e.extents[AtomTileY]);
  result.bytes = e.mul(e.mul(result.cols, result.rows), four);
  require(LLVM::XOrOp::create(
      pb, loc, e.overflow,
      LLVM::ConstantOp::create(pb, loc, pb.getI1Type(), pb.getBoolAttr(true))));
  return result;
}

/// Goes on where the checks pass and the runtime's contraction pays: the
/// sums' buffer, filled by the runtime, or null (the leaf runs as it is).
LogicalResult emitContraction(Analysis &a, PlanEmitter &e,
                              LLVM::LLVMFuncOp plan, LLVM::LLVMFuncOp step,
                              const CheckedOperands &operands) {
  OpBuilder &pb = e.b;
  Location loc = e.loc;
  auto ptr = LLVM::LLVMPointerType::get(e.context);
  Type i32 = pb.getI32Type();
  Value trip = e.extents[AtomK];
  // Checks done: go or decline.
  Block *run = plan.addBlock(), *decline = plan.addBlock();
  LLVM::CondBrOp::create(pb, loc, operands.ok, run, decline);
  pb.setInsertionPointToStart(decline);
  Value null = LLVM::ZeroOp::create(pb, loc, ptr);
  LLVM::ReturnOp::create(pb, loc, null);

  ModuleOp module = a.leaf->getParentOfType<ModuleOp>();
  auto declare = [&](abi::RuntimeFn fn) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    return abi::lookupOrCreate(mb, module, fn);
  };
  // The runtime's buffer cache (the memref lowering's allocation functions):
  // a grid launched again reuses the sums' pages instead of faulting in new
  // ones.
  auto mallocFn = declare(abi::RuntimeFn::MemrefAlloc);
  auto freeFn = declare(abi::RuntimeFn::MemrefFree);
  auto contract = declare(abi::RuntimeFn::ContractF32);
  auto pays = declare(abi::RuntimeFn::ContractPays);
  if (failed(mallocFn) || failed(freeFn) || failed(contract) || failed(pays))
    return failure();
  // Whether the runtime's contraction beats the leaf's own loops at this size
  // (it costs a pass over the operands and a second launch).
  pb.setInsertionPointToStart(run);
  Block *allocate = plan.addBlock();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(
          pb, loc, LLVM::ICmpPredicate::eq,
          LLVM::CallOp::create(
              pb, loc, *pays,
              ValueRange{operands.rows, operands.cols, e.extents[AtomK]})
              .getResult(),
          LLVM::ConstantOp::create(pb, loc, i32, pb.getI32IntegerAttr(0))),
      decline, allocate);
  pb.setInsertionPointToStart(allocate);
  Value sums = LLVM::CallOp::create(pb, loc, *mallocFn,
                                    ValueRange{operands.bytes})
                   .getResult();
  Block *compute = plan.addBlock(), *failed = plan.addBlock(),
        *done = plan.addBlock();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(pb, loc, LLVM::ICmpPredicate::eq, sums,
                           LLVM::ZeroOp::create(pb, loc, ptr)),
      decline, compute);
  pb.setInsertionPointToStart(compute);
  Value initial = e.clone(a.init);
  Value stepAddress = LLVM::AddressOfOp::create(pb, loc, step);
  Value status =
      LLVM::CallOp::create(
          pb, loc, *contract,
          ValueRange{operands.p, operands.pRow, operands.pDepth, operands.q,
                     operands.qCol, operands.qDepth, operands.rows,
                     operands.cols, trip, initial, stepAddress, sums,
                     operands.cols})
          .getResult();
  LLVM::CondBrOp::create(
      pb, loc,
      LLVM::ICmpOp::create(
          pb, loc, LLVM::ICmpPredicate::eq, status,
          LLVM::ConstantOp::create(pb, loc, i32, pb.getI32IntegerAttr(0))),
      done, failed);
  pb.setInsertionPointToStart(failed);
  LLVM::CallOp::create(pb, loc, *freeFn, ValueRange{sums});
  LLVM::BrOp::create(pb, loc, decline);
  pb.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(pb, loc, sums);
  return success();
}

/// The plan: the checks, then the runtime's contraction into the sums.
LLVM::LLVMFuncOp buildPlan(Analysis &a, OpBuilder &b, LLVM::LLVMFuncOp step,
                           SymbolTable &symbols) {
  MLIRContext *context = b.getContext();
  LeafOp leaf = a.leaf;
  Location loc = leaf.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append(4, i64);
  auto type = LLVM::LLVMFunctionType::get(ptr, inputs);
  auto plan = LLVM::LLVMFuncOp::create(
      b, loc, (leaf.getSymName() + "__sums_plan").str(), type,
      LLVM::Linkage::Private);
  symbols.insert(plan);
  Block *entry = plan.addEntryBlock(b);
  OpBuilder pb = OpBuilder::atBlockBegin(entry);
  PlanEmitter e(a, pb, loc, entry);
  CheckedOperands operands = emitChecks(a, e);
  if (failed(emitContraction(a, e, plan, step, operands)))
    return {};
  return plan;
}

/// The leaf with the loop replaced by a load of the instance's sum.
LeafOp buildSums(Analysis &a, OpBuilder &b, SymbolTable &symbols) {
  LeafOp leaf = a.leaf;
  MLIRContext *context = b.getContext();
  Location loc = leaf.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  SmallVector<Type> inputs(leaf.getArgumentTypes());
  inputs.append({ptr, i64});
  auto type = FunctionType::get(context, inputs, leaf.getResultTypes());
  auto sums =
      LeafOp::create(b, loc, (leaf.getSymName() + "__sums").str(), type);
  sums.getBody().getBlocks().clear();
  sums.setPrivate();
  symbols.insert(sums);
  if (ArrayAttr argAttrs = leaf.getArgAttrsAttr()) {
    SmallVector<Attribute> attrs(argAttrs.getValue());
    attrs.append({b.getDictionaryAttr({}), b.getDictionaryAttr({})});
    sums.setArgAttrsAttr(b.getArrayAttr(attrs));
  }
  if (Attribute targets = leaf->getAttr(HPVMDialect::getTargetsAttrName()))
    sums->setAttr(HPVMDialect::getTargetsAttrName(), targets);
  IRMapping mapping;
  leaf.getBody().cloneInto(&sums.getBody(), mapping);
  Block &entry = sums.getBody().front();
  Value buffer = entry.addArgument(ptr, loc);
  Value rowLength = entry.addArgument(i64, loc);
  // The guard's edge into the loop goes to a block that loads the sum and
  // goes where the loop went, the sum in place of the loop's.
  Block *loop = mapping.lookup(a.loop);
  Block *enters = a.preheader ? mapping.lookup(a.preheader) : loop;
  Block *exit = mapping.lookup(a.exit);
  SmallVector<Value> out;
  for (Value v : a.exitOperands)
    out.push_back(mapping.lookupOrDefault(v));
  Value stepped = mapping.lookup(a.stepped);
  Block *load = new Block();
  sums.getBody().push_back(load);
  if (a.preheader) {
    // The preheader (free of effects) stays: values it defines may leave the
    // loop on its exit edge. It goes to the load instead of the loop.
    Operation *enter = enters->getTerminator();
    OpBuilder eb(enter);
    LLVM::BrOp::create(eb, loc, ValueRange{}, load);
    enter->erase();
  } else {
    // The guard enters the loop directly, with the counter's and the sum's
    // first values, which the load does not take.
    auto guardBranch =
        cast<LLVM::CondBrOp>(mapping.lookup(a.guard)->getTerminator());
    bool trueEnters = guardBranch.getTrueDest() == enters;
    (trueEnters ? guardBranch.getTrueDestOperandsMutable()
                : guardBranch.getFalseDestOperandsMutable())
        .clear();
    guardBranch->setSuccessor(load, trueEnters ? 0 : 1);
  }
  OpBuilder gb = OpBuilder::atBlockBegin(load);
  auto id = [&](Dim dim, unsigned level) {
    return arith::IndexCastOp::create(
        gb, loc, i64, InstanceIdOp::create(gb, loc, dim, level).getResult());
  };
  auto count = [&](Dim dim) {
    return arith::IndexCastOp::create(
        gb, loc, i64,
        NumInstancesOp::create(gb, loc, dim, /*level=*/0).getResult());
  };
  // Instance (x, y) of tile (tx, ty): element (tx * w + x, ty * h + y).
  Value x = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, id(Dim::x, 1), count(Dim::x)),
      id(Dim::x, 0));
  Value y = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, id(Dim::y, 1), count(Dim::y)),
      id(Dim::y, 0));
  Value index = LLVM::AddOp::create(
      gb, loc, LLVM::MulOp::create(gb, loc, y, rowLength), x);
  Value address = LLVM::GEPOp::create(gb, loc, ptr, gb.getF32Type(), buffer,
                                      ArrayRef<LLVM::GEPArg>{index});
  Value sum = LLVM::LoadOp::create(gb, loc, gb.getF32Type(), address);
  for (Value &v : out)
    if (v == stepped)
      v = sum;
  LLVM::BrOp::create(gb, loc, out, exit);
  stepped.replaceUsesWithIf(
      sum, [&](OpOperand &use) { return use.getOwner()->getBlock() != loop; });
  loop->dropAllDefinedValueUses();
  loop->dropAllReferences();
  loop->erase();
  return sums;
}

} // namespace

ContractionVariant mlir::hpvm::buildContraction(LeafOp leaf,
                                                SymbolTable &symbols) {
  ContractionVariant result;
  Analysis analysis(leaf);
  if (!leaf.getPassedOnInputs()) {
    result.reason = "an output is computed (only inputs passed on are known "
                    "without running the instances)";
    return result;
  }
  for (Type type : leaf.getArgumentTypes())
    if (!LLVM::isCompatibleType(type)) {
      result.reason = "an input is not an LLVM type";
      return result;
    }
  if (!analysis.run()) {
    result.reason = analysis.reason;
    return result;
  }
  OpBuilder b(leaf->getContext());
  b.setInsertionPointAfter(leaf);
  LLVM::LLVMFuncOp step = buildStep(analysis, b, symbols);
  result.plan = buildPlan(analysis, b, step, symbols);
  if (!result.plan) {
    symbols.erase(step);
    result.reason =
        "a runtime declaration clashes with a symbol of the program";
    return result;
  }
  result.sums = buildSums(analysis, b, symbols);
  return result;
}
