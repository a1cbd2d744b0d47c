//===- ModelSummaryTest.cpp - Op and parameter counts ---------------------===//

#include "mgs/Analysis/ModelSummary.h"
#include "mgs/InitAllDialects.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace {

constexpr const char *kModule = R"mlir(
  train.parameter @w trainable : tensor<10x64xf32>
  train.parameter @b trainable : tensor<10xf32>
  train.parameter @stat : tensor<3xf32>
  func.func @forward(%x: tensor<2x64xf32>) -> tensor<2x10xf32> {
    %w = train.get_param @w : tensor<10x64xf32>
    %b = train.get_param @b : tensor<10xf32>
    %y = train.gemm %x, %w, %b {alpha = 1.0 : f32, beta = 1.0 : f32, trans_a = false, trans_b = true}
        : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<2x10xf32>
    %r = train.relu %y : tensor<2x10xf32>
    %s = train.relu %r : tensor<2x10xf32>
    return %s : tensor<2x10xf32>
  }
)mlir";

TEST(ModelSummary, CountsOpsAndParameters) {
  mlir::DialectRegistry registry;
  mgs::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  auto s = mgs::ModelSummary::compute(*module);
  EXPECT_EQ(s.numOps, 3);
  EXPECT_EQ(s.opCounts.lookup("relu"), 2);
  EXPECT_EQ(s.opCounts.lookup("gemm"), 1);
  EXPECT_EQ(s.numTrainable, 2);
  EXPECT_EQ(s.trainableElements, 650);
  EXPECT_EQ(s.numState, 1);
  EXPECT_EQ(s.stateElements, 3);

  std::string line;
  llvm::raw_string_ostream os(line);
  s.print(os);
  EXPECT_EQ(line, "3 ops (gemm 1, relu 2), 2 trainable parameters (650 values), "
                  "1 state buffers (3 values)");
}

TEST(ModelSummary, ThousandsSeparators) {
  EXPECT_EQ(mgs::withThousandsSeparators(0), "0");
  EXPECT_EQ(mgs::withThousandsSeparators(999), "999");
  EXPECT_EQ(mgs::withThousandsSeparators(25557032), "25,557,032");
  EXPECT_EQ(mgs::withThousandsSeparators(-1234), "-1,234");
}

} // namespace
