//===- ContractTest.cpp - The compiler-runtime contract, pinned ----------===//
//
// mgsrt/contract.h is what compiled code and the runtime agree on. These
// tests pin its layouts to those mgsrt.h documents (a change here changes the
// ABI: bump contract::manifest::kVersion so that old executables are
// refused), check that every entry point it names is one the runtime defines,
// and check the top-k rule.
//
//===----------------------------------------------------------------------===//

#include "mgsrt/contract.h"
#include "mgsrt/mgsrt.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using namespace mgs::contract;

TEST(ContractTest, EveryEntryPointIsDefinedByTheRuntime) {
  struct Entry {
    Kernel kernel;
    const char *name;
    void *address;
  };
  const Entry entries[] = {
#define MGSRT_TEST_ENTRY(name) {Kernel::name, #name, reinterpret_cast<void *>(&mgsrt_##name)},
      MGSRT_STEP_ENTRY_POINTS(MGSRT_TEST_ENTRY)
#undef MGSRT_TEST_ENTRY
  };
  std::set<std::string> symbols;
  for (const Entry &e : entries) {
    EXPECT_NE(e.address, nullptr) << e.name;
    EXPECT_EQ(std::string(kernelSymbol(e.kernel)), std::string("mgsrt_") + e.name);
    EXPECT_TRUE(symbols.insert(kernelSymbol(e.kernel)).second) << "duplicate " << e.name;
  }
  EXPECT_EQ(symbols.size(), 60u); // 53 compute kernels, 6 collectives, mark
}

TEST(ContractTest, FixedDescriptorLayouts) {
  EXPECT_EQ(UnaryDesc::Size, 4);
  EXPECT_EQ(UnaryDesc::AlphaBits, 2);
  EXPECT_EQ(UnaryDesc::BetaBits, 3);
  EXPECT_EQ(CountDesc::Size, 1);
  EXPECT_EQ(FromIndexDesc::Size, 3);
  EXPECT_EQ(FromIndexDesc::Hi, 2);
  EXPECT_EQ(GemmDesc::Size, 10);
  EXPECT_EQ(GemmDesc::C1, 8);
  EXPECT_EQ(GemmDesc::Precision, 9);
  EXPECT_EQ(BatchNormDesc::Size, 8);
  EXPECT_EQ(BatchNormDesc::EpsilonBits, 4);
  EXPECT_EQ(GatherDesc::Size, 3);
  EXPECT_EQ(LstmDesc::Size, 4);
  EXPECT_EQ(GruDesc::Size, 5);
  EXPECT_EQ(LayerNormDesc::Size, 3);
  EXPECT_EQ(GeluDesc::Size, 2);
  EXPECT_EQ(DropoutDesc::Size, 4);
  EXPECT_EQ(RandomNormalDesc::Size, 3);
  EXPECT_EQ(RandomNormalDesc::ScaleBits, 2);
  EXPECT_EQ(RandomUniformDesc::Size, 3);
  EXPECT_EQ(RandomUniformDesc::HighBits, 2);
  EXPECT_EQ(SoftmaxDesc::Size, 4);
  EXPECT_EQ(SoftmaxCrossEntropyDesc::Size, 5);
  EXPECT_EQ(ElementwiseLossDesc::Size, 5);
  EXPECT_EQ(ElementwiseLossDesc::Last, 3);
  EXPECT_EQ(TopKDesc::Size, 2);
  EXPECT_EQ(ScatterAddDesc::Size, 3);
  EXPECT_EQ(AllReduceDesc::Size, 2);
  EXPECT_EQ(AllGatherDesc::Size, 4);
  EXPECT_EQ(AllGatherDesc::Values, 3);
  EXPECT_EQ(GTopKDesc::Size, 3);
  EXPECT_EQ(GTopKDesc::Slot, 1);
  EXPECT_EQ(GTopKDesc::Count, 2);
  EXPECT_EQ(SparseAllReduceDesc::Size, 4);
  EXPECT_EQ(SparseAllReduceDesc::Slot, 1);
  EXPECT_EQ(SparseAllReduceDesc::Balanced, 3);
  EXPECT_EQ(WaitDesc::Size, 1);
  EXPECT_EQ(BroadcastDesc::Size, 2);
  EXPECT_EQ(MarkDesc::Size, 1);
}

TEST(ContractTest, VariableDescriptorLayouts) {
  // conv, S = 2: [S, N, C, M, group, in[2], kernel[2], out[2], strides[2],
  // pads_begin[2], pads_end[2], dilations[2], precision]
  EXPECT_EQ(ConvDesc::at(ConvDesc::In, 2), 5);
  EXPECT_EQ(ConvDesc::at(ConvDesc::PadsEnd, 2), 15);
  EXPECT_EQ(ConvDesc::at(ConvDesc::Precision, 2), 19);
  EXPECT_EQ(ConvDesc::size(2), 20);
  // pool, S = 3: the two flags after the seven arrays.
  EXPECT_EQ(PoolDesc::at(PoolDesc::In, 3), 4);
  EXPECT_EQ(PoolDesc::at(PoolDesc::CountIncludePad, 3), 25);
  EXPECT_EQ(PoolDesc::size(3), 27);
  // binary, rank 4: [op, R, out[4], lhs[4], rhs[4]]
  EXPECT_EQ(BinaryDesc::at(BinaryDesc::Rhs, 4), 10);
  EXPECT_EQ(BinaryDesc::size(4), 14);
  // matmul, batch rank 2: m, k, n, the two trans flags and the precision after the three
  // batch shapes.
  EXPECT_EQ(MatMulDesc::at(MatMulDesc::LhsBatch, 2), 3);
  EXPECT_EQ(MatMulDesc::at(MatMulDesc::N, 2), 9);
  EXPECT_EQ(MatMulDesc::at(MatMulDesc::TransRhs, 2), 11);
  EXPECT_EQ(MatMulDesc::at(MatMulDesc::Precision, 2), 12);
  EXPECT_EQ(MatMulDesc::size(2), 13);
  EXPECT_EQ(TransposeDesc::at(TransposeDesc::Perm, 3), 4);
  EXPECT_EQ(ConcatDesc::extentAt(2), 5);
  EXPECT_EQ(ConcatDesc::size(2), 5);
  EXPECT_EQ(PadDesc::padsAt(2), 3);
  EXPECT_EQ(PadDesc::valueBitsAt(2), 7);
  EXPECT_EQ(PadDesc::size(2), 8);
  // reduce, rank 3: [R, scale_bits, in[3], out[3]]
  EXPECT_EQ(ReduceDesc::at(ReduceDesc::In, 3), 2);
  EXPECT_EQ(ReduceDesc::at(ReduceDesc::Out, 3), 5);
  EXPECT_EQ(ReduceDesc::size(3), 8);
}

// A descriptor built by field name is one the kernel reads as meant: a 2x3
// binary add broadcasting a row.
TEST(ContractTest, KernelReadsADescriptorBuiltByName) {
  using D = BinaryDesc;
  int64_t desc[D::size(2)];
  desc[D::Op] = MGSRT_BINARY_ADD;
  desc[D::Rank] = 2;
  const int64_t out[2] = {2, 3}, lhs[2] = {2, 3}, rhs[2] = {1, 3};
  for (int i = 0; i < 2; ++i) {
    desc[D::at(D::Out, 2) + i] = out[i];
    desc[D::at(D::Lhs, 2) + i] = lhs[i];
    desc[D::at(D::Rhs, 2) + i] = rhs[i];
  }
  float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, y[6] = {};
  void *bufs[3] = {a, b, y};
  mgsrt_ctx_t *ctx = mgsrt_ctx_create(1);
  ASSERT_EQ(mgsrt_binary_fwd(ctx, desc, bufs), MGSRT_OK) << mgsrt_ctx_message(ctx);
  const float want[6] = {11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(y[i], want[i]) << i;
  mgsrt_ctx_destroy(ctx);
}

TEST(ContractTest, TopKCountIsTheFloorOfDensityTimesNAtLeastOne) {
  EXPECT_EQ(topkCount(1000, 0.001), 1);
  EXPECT_EQ(topkCount(999, 0.001), 1);   // floor 0: at least one
  EXPECT_EQ(topkCount(1999, 0.001), 1);  // floor, not round
  EXPECT_EQ(topkCount(2500, 0.001), 2);
  EXPECT_EQ(topkCount(1, 0.5), 1);
  EXPECT_EQ(topkCount(10, 1.0), 10);
  EXPECT_EQ(topkCount(25557032, 0.001), 25557);
}

TEST(ContractTest, ManifestVersionAndHeader) {
  EXPECT_EQ(manifest::kHeader, "mgs-manifest");
  EXPECT_EQ(manifest::kVersion, 3);
  EXPECT_EQ(manifest::kResidualPrefix, "mgs.residual/");
}

// The compiler's per-worker gradient state, by name: what the driver keeps
// out of --save, starts at zero and does not broadcast.
TEST(ContractTest, WorkerStateNames) {
  EXPECT_TRUE(manifest::isResidualName("mgs.residual/fc.weight..fc.bias"));
  EXPECT_TRUE(manifest::isAccumulatorName("mgs.accum/fc.weight"));
  EXPECT_FALSE(manifest::isAccumulatorName("mgs.residual/fc.weight"));
  EXPECT_TRUE(manifest::isWorkerStateName("mgs.accum/fc.weight"));
  EXPECT_TRUE(manifest::isWorkerStateName("mgs.residual/fc.weight"));
  EXPECT_FALSE(manifest::isWorkerStateName("fc.weight"));
  EXPECT_FALSE(manifest::isWorkerStateName("mgs.accum"));
}

} // namespace
