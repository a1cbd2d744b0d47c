//===- Col2Im.cpp - Col2Im as a grouped ConvTranspose ---------------------===//
//
// PyTorch's F.fold (VOLO's outlook attention, patch-based decoders) exports
// as ONNX's Col2Im: each column of the input, a block of C x prod(block)
// values, is added into the image at its block's place. That is the
// transposed convolution of the columns laid out on the grid of blocks, with
// C groups whose kernels are one-hot: input channel c * K + k (K =
// prod(block)) puts its value at kernel position k of output channel c. It is
// rewritten so before the graph walk (as Einsum's lowering), once the input's
// shape and image_shape and block_shape are known, and trains through the
// ConvTranspose's gradient (the kernels are constants).
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "mlir/IR/Diagnostics.h"

#include <string>
#include <vector>

using namespace mlir;

namespace mgs::onnx_import {

LogicalResult lowerCol2Ims(onnx::ModelProto &model, Location fileLoc, bool strict, bool &changed) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(*graph);
  return rewriteEach(
      model, "Col2Im", changed,
      [&](onnx::NodeProto &node, const std::string &label,
          const auto &constants) -> FailureOr<bool> {
        auto fail = [&](const std::string &why) {
          return emitError(fileLoc) << "node '" << label << "' (Col2Im): " << why
                                    << "; mgs takes a Col2Im whose input shape, image_shape and "
                                       "block_shape are known at import";
        };
        if (node.input_size() != 3 || node.output_size() != 1)
          return fail("it has " + std::to_string(node.input_size()) +
                      " inputs (input, image_shape, block_shape expected)");
        std::optional<std::vector<int64_t>> image = tensorInts(constants.lookup(node.input(1)));
        std::optional<std::vector<int64_t>> block = tensorInts(constants.lookup(node.input(2)));
        auto shape = shapes.find(node.input(0));
        const bool known = image && block && shape != shapes.end() && shape->second.size() == 3 &&
                           llvm::all_of(shape->second, [](int64_t d) { return d > 0; });
        if (!known) {
          if (!strict)
            return false; // perhaps known after another round of folding
          return fail(!image   ? "its image_shape '" + node.input(1) + "' is not a constant"
                      : !block ? "its block_shape '" + node.input(2) + "' is not a constant"
                               : "its input's shape is not a known [N, C * prod(block), L]");
        }
        const size_t rank = image->size();
        if (rank == 0 || block->size() != rank)
          return fail("image_shape and block_shape have " + std::to_string(rank) + " and " +
                      std::to_string(block->size()) + " dimensions");
        std::vector<int64_t> dilations = intsAttribute(node, "dilations", rank, 1),
                             strides = intsAttribute(node, "strides", rank, 1),
                             pads = intsAttribute(node, "pads", 2 * rank, 0);
        if (dilations.size() != rank || strides.size() != rank || pads.size() != 2 * rank)
          return fail("dilations, strides and pads must have " + std::to_string(rank) + ", " +
                      std::to_string(rank) + " and " + std::to_string(2 * rank) + " values");
        // The grid of blocks, and what is left past the last one (the
        // ConvTranspose's output_padding).
        const int64_t limit = int64_t{1} << 24; // (no overflow in what follows)
        int64_t kernelSize = 1, blocks = 1;
        std::vector<int64_t> grid, outputPadding;
        for (size_t i = 0; i < rank; ++i) {
          const int64_t size = (*image)[i], k = (*block)[i], d = dilations[i], s = strides[i];
          auto within = [&](int64_t v, int64_t low) { return v >= low && v <= limit; };
          if (!within(size, 1) || !within(k, 1) || !within(d, 1) || !within(s, 1) ||
              !within(pads[i], 0) || !within(pads[rank + i], 0))
            return fail("image_shape, block_shape, dilations and strides must be in [1, 2^24] "
                        "and pads in [0, 2^24] (dimension " +
                        std::to_string(i) + ")");
          const int64_t span = size + pads[i] + pads[rank + i] - d * (k - 1) - 1;
          if (span < 0)
            return fail("a block of " + std::to_string(k) + " (dilation " + std::to_string(d) +
                        ") does not fit in dimension " + std::to_string(i) + " of " +
                        std::to_string(size) + " with its padding");
          grid.push_back(span / s + 1);
          outputPadding.push_back(span % s);
          kernelSize *= k;
          blocks *= grid.back();
          if (kernelSize > limit || blocks > limit)
            return fail("its blocks or their grid are too large (" + std::to_string(kernelSize) +
                        " values a block)");
        }
        const int64_t n = shape->second[0], columns = shape->second[1], count = shape->second[2];
        if (columns % kernelSize != 0)
          return fail("its input has " + std::to_string(columns) +
                      " values a column, not a multiple of the block's " +
                      std::to_string(kernelSize));
        if (count != blocks)
          return fail("its input has " + std::to_string(count) + " columns where the image and " +
                      "its blocks give " + std::to_string(blocks));
        const int64_t channels = columns / kernelSize;
        if (columns > (int64_t{1} << 26) / kernelSize)
          return fail("its one-hot kernels would hold " + std::to_string(columns) + " x " +
                      std::to_string(kernelSize) + " values (at most 2^26)");

        const std::string base = node.name().empty() ? node.output(0) : node.name();
        std::vector<int64_t> gridShape{n, columns};
        gridShape.insert(gridShape.end(), grid.begin(), grid.end());
        appendReshape(*graph, base + "/Grid", node.input(0), gridShape, base + "/grid");
        onnx::TensorProto &kernel = appendConstant(*graph, base + "/Kernel", base + "/kernel");
        kernel.set_data_type(onnx::TensorProto::FLOAT);
        kernel.add_dims(columns);
        kernel.add_dims(1);
        for (int64_t k : *block)
          kernel.add_dims(k);
        for (int64_t row = 0; row < columns; ++row)
          for (int64_t at = 0; at < kernelSize; ++at)
            kernel.add_float_data(row % kernelSize == at ? 1.0f : 0.0f);
        onnx::NodeProto *deconv =
            appendNode(*graph, "ConvTranspose", base + "/ConvTranspose",
                       {base + "/grid", base + "/kernel"}, node.output(0));
        addIntAttribute(*deconv, "group", channels);
        addIntsAttribute(*deconv, "kernel_shape", *block);
        addIntsAttribute(*deconv, "strides", strides);
        addIntsAttribute(*deconv, "dilations", dilations);
        addIntsAttribute(*deconv, "pads", pads);
        addIntsAttribute(*deconv, "output_padding", outputPadding);
        return true;
      });
}

} // namespace mgs::onnx_import
