//===- GridSample.cpp - GridSample as gathers of an image's rows ----------===//
//
// PyTorch's F.grid_sample (spatial transformer networks, optical-flow
// warping, deformable attention's sampling, VoxelMorph's 3-D registration)
// exports as ONNX's GridSample: each output position reads the image at a
// computed point, interpolating between the pixels around it. Before the
// graph walk, once the shapes of the image X (N, C, D1, ..., Dr) and the grid
// (N, O1, ..., Or, r) are known, it becomes ops mgs trains through:
//   - the point's pixel coordinates from the grid's normalized ones, as
//     PyTorch computes them (align_corners or not), padded: clipped to the
//     image ("border"), reflected about its edges then clipped
//     ("reflection": |v - low| folded by a Floor, as PyTorch's
//     reflect_coordinates), or clipped to [-2, size + 1] ("zeros": every
//     pixel around a point outside that range is outside the image, so the
//     sample and its gradient are 0 there as well as at the clipped point);
//   - linear: the 2^r pixels around it (Floor, and Floor + 1 along each
//     axis), each weighted by its distance along each axis and, with zeros
//     padding, by whether it is inside the image (a product of Clips of the
//     integer coordinates: 1 inside, 0 outside); nearest: the pixel Round
//     gives (half to even, as PyTorch);
//   - each pixel read by a Gather of the image's rows (N * D1 * ... * Dr, C)
//     at its flat index (computed in float: exact up to 2^24 rows), so the
//     image's gradient is the Gather's scatter and the grid's flows through
//     the weights (and the reflection's signs), as PyTorch's.
//   - cubic (images of 2 dimensions): the 4 x 4 pixels around it, each
//     padded, weighted by the cubic convolution (A = -0.75) of its distance.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "mlir/IR/Diagnostics.h"

#include <array>
#include <string>
#include <vector>

using namespace mlir;

namespace mgs::onnx_import {

LogicalResult lowerGridSamples(onnx::ModelProto &model, Location fileLoc, int64_t opset,
                               bool strict, bool &changed) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(*graph);
  return rewriteEach(
      model, "GridSample", changed,
      [&](onnx::NodeProto &node, const std::string &label, const auto &) -> FailureOr<bool> {
        auto fail = [&](const std::string &why) {
          return emitError(fileLoc) << "node '" << label << "' (GridSample): " << why;
        };
        if (node.input_size() != 2 || node.output_size() != 1)
          return fail("it has " + std::to_string(node.input_size()) +
                      " inputs and " + std::to_string(node.output_size()) +
                      " outputs (X and grid in, Y out expected)");
        auto text = [&](StringRef name, StringRef otherwise) {
          const onnx::AttributeProto *a = findAttribute(node, name);
          return a ? a->s() : otherwise.str();
        };
        const std::string mode = text("mode", "bilinear"), padding = text("padding_mode", "zeros");
        const bool linear = mode == "bilinear" || mode == "linear";
        const bool cubic = mode == "bicubic" || mode == "cubic";
        if (!linear && !cubic && mode != "nearest")
          return fail("mode '" + mode + "'; ONNX's are 'linear' ('bilinear'), 'nearest' and " +
                      "'cubic' ('bicubic')");
        if (padding != "zeros" && padding != "border" && padding != "reflection")
          return fail("padding_mode '" + padding +
                      "'; ONNX's are 'zeros', 'border' and 'reflection'");
        const bool alignCorners = intAttribute(node, "align_corners", 0) != 0;
        const bool zeros = padding == "zeros", reflection = padding == "reflection";

        auto image = shapes.find(node.input(0)), grid = shapes.find(node.input(1));
        auto positive = [](ArrayRef<int64_t> s) {
          return llvm::all_of(s, [](int64_t d) { return d > 0; });
        };
        const bool known = image != shapes.end() && grid != shapes.end() &&
                           positive(image->second) && positive(grid->second) &&
                           image->second.size() >= 3 &&
                           grid->second.size() == image->second.size();
        if (!known) {
          if (!strict)
            return false; // perhaps known after another round of folding
          return fail("the shapes of X (N, C, D1, ..., Dr) and grid (N, O1, ..., Or, r) are not "
                      "known at import");
        }
        // The image's r spatial sizes; the grid's last axis holds a point's
        // coordinates along them last first (x along the last axis, y...).
        const SmallVector<int64_t> &x = image->second, &g = grid->second;
        const int64_t n = x[0], c = x[1], rank = static_cast<int64_t>(x.size()) - 2;
        const SmallVector<int64_t> sizes(x.begin() + 2, x.end());
        if (g[0] != n || g.back() != rank)
          return fail("its grid has " + std::to_string(g[0]) + " samples of " +
                      std::to_string(g.back()) + " coordinates for " + std::to_string(n) +
                      " images of " + std::to_string(rank) + " dimensions");
        if (cubic && rank != 2)
          return fail("mode '" + mode + "' on images of " + std::to_string(rank) +
                      " dimensions; cubic sampling is of 2 (as ONNX's and PyTorch's)");
        int64_t pixels = 1;
        for (int64_t size : sizes)
          pixels *= size;
        if (n * pixels > (int64_t{1} << 24))
          return fail("its images hold " + std::to_string(n * pixels) +
                      " pixels; mgs indexes at most 2^24 (a batch's)");

        const std::string base =
            (node.name().empty() ? node.output(0) : node.name()) + "/mgs_grid_sample";
        int counter = 0;
        auto fresh = [&](StringRef what) {
          return base + "/" + what.str() + std::to_string(counter++);
        };
        auto constant = [&](ArrayRef<int64_t> dims, ArrayRef<float> values) {
          std::string out = fresh("c");
          onnx::TensorProto &t = appendConstant(*graph, out, out);
          t.set_data_type(onnx::TensorProto::FLOAT);
          for (int64_t d : dims)
            t.add_dims(d);
          t.mutable_float_data()->Add(values.begin(), values.end());
          return out;
        };
        auto scalar = [&](double v) { return constant({}, {static_cast<float>(v)}); };
        auto op = [&](StringRef type, ArrayRef<std::string> in) {
          std::string out = fresh(type);
          appendNode(*graph, type, out, in, out);
          return out;
        };
        auto clip = [&](const std::string &v, double lo, double hi) {
          return op("Clip", {v, scalar(lo), scalar(hi)});
        };

        // The image as rows of C values, one a pixel, each image's from its
        // start.
        SmallVector<int64_t> channelsLast{0};
        for (int64_t k = 0; k < rank; ++k)
          channelsLast.push_back(k + 2);
        channelsLast.push_back(1);
        const std::string last = fresh("channels_last"), rows = fresh("rows");
        appendTranspose(*graph, last, node.input(0), channelsLast, last);
        appendReshape(*graph, rows, last, {n * pixels, c}, rows);
        std::vector<float> starts;
        for (int64_t i = 0; i < n; ++i)
          starts.push_back(static_cast<float>(i * pixels));
        SmallVector<int64_t> startShape(rank + 1, 1);
        startShape[0] = n;
        const std::string imageStart = constant(startShape, starts);

        // PyTorch's reflect_coordinates: |v - low| folded into [0, 2 span)
        // by a floor, then reflected about span.
        auto reflect = [&](const std::string &v, double low, double span) {
          if (span <= 0)
            return op("Mul", {v, scalar(0.0)});
          const std::string y = op("Abs", {op("Sub", {v, scalar(low)})});
          const std::string folded =
              op("Sub", {y, op("Mul", {op("Floor", {op("Mul", {y, scalar(0.5 / span)})}),
                                       scalar(2 * span)})});
          return op("Add", {op("Sub", {scalar(span), op("Abs", {op("Sub", {folded, scalar(span)})})}),
                            scalar(low)});
        };
        // Integer or real coordinate `v` along spatial axis k padded: clipped
        // to the image (border), reflected then clipped (reflection), or as
        // it is (zeros: pixels outside count 0).
        auto pad = [&](const std::string &v, int64_t k) {
          const double size = static_cast<double>(sizes[k]);
          if (zeros)
            return v;
          if (reflection)
            return clip(alignCorners ? reflect(v, 0.0, size - 1) : reflect(v, -0.5, size), 0.0,
                        size - 1);
          return clip(v, 0.0, size - 1);
        };
        // Spatial axis k's coordinate (the grid's coordinate rank - 1 - k)
        // in pixels: padded (linear, nearest; zeros: clipped to [-2, size +
        // 1], where every pixel around it is still outside the image), or for
        // cubic sampling as it is (zeros: clipped to [-3, size + 2]; its 4
        // pixels a side are padded).
        auto coordinate = [&](int64_t k) {
          const double size = static_cast<double>(sizes[k]);
          const std::string at = fresh("axis");
          appendScalarConstant(*graph, at, rank - 1 - k, onnx::TensorProto::INT64, at);
          const std::string normalized = fresh("Gather");
          addIntAttribute(*appendNode(*graph, "Gather", normalized, {node.input(1), at},
                                      normalized),
                          "axis", rank + 1);
          const std::string shifted = op("Add", {normalized, scalar(1.0)});
          const std::string v =
              alignCorners
                  ? op("Mul", {op("Mul", {shifted, scalar(0.5)}), scalar(size - 1)})
                  : op("Mul", {op("Sub", {op("Mul", {shifted, scalar(size)}), scalar(1.0)}),
                               scalar(0.5)});
          if (cubic) // (reflected taps of a far point are inside: it stays where it is)
            return zeros ? clip(v, -3.0, size + 2) : v;
          return zeros ? clip(v, -2.0, size + 1) : pad(v, k);
        };
        // 1 where integer coordinate `at` is inside [0, size), else 0.
        auto inside = [&](const std::string &at, int64_t size) {
          return op("Mul", {clip(op("Add", {at, scalar(1.0)}), 0.0, 1.0),
                            clip(op("Sub", {scalar(double(size)), at}), 0.0, 1.0)});
        };
        // The pixel at integer coordinates `at` (one per spatial axis), each
        // image's own, times `weight` (N, O1, ..., Or; none: 1): (N, O1, ...,
        // Or, C).
        auto pixel = [&](ArrayRef<std::string> at, std::string weight) {
          std::string flat = imageStart;
          int64_t stride = pixels;
          for (int64_t k = 0; k < rank; ++k) {
            stride /= sizes[k];
            flat = op("Add", {flat, op("Mul", {clip(at[k], 0.0, double(sizes[k] - 1)),
                                               scalar(double(stride))})});
            if (zeros)
              weight = weight.empty() ? inside(at[k], sizes[k])
                                      : op("Mul", {weight, inside(at[k], sizes[k])});
          }
          const std::string index = fresh("Cast");
          addIntAttribute(*appendNode(*graph, "Cast", index, {flat}, index), "to",
                          onnx::TensorProto::INT64);
          const std::string values = fresh("Gather");
          addIntAttribute(*appendNode(*graph, "Gather", values, {rows, index}, values), "axis", 0);
          if (weight.empty())
            return values;
          const std::string column = fresh("Unsqueeze");
          appendUnsqueeze(*graph, column, weight, rank + 1, column, opset);
          return op("Mul", {values, column});
        };

        SmallVector<std::string> coordinates;
        for (int64_t k = 0; k < rank; ++k)
          coordinates.push_back(coordinate(k));
        std::string sampled;
        if (cubic) {
          // PyTorch's (and ONNX's) cubic convolution, A = -0.75: along each
          // axis the 4 pixels from Floor - 1 to Floor + 2, weighted by the
          // cubic of the distance t to the one below, each pixel padded.
          const double a = -0.75;
          auto near = [&](const std::string &x) { // ((A + 2) x - (A + 3)) x x + 1, |x| <= 1
            return op("Add", {op("Mul", {op("Sub", {op("Mul", {x, scalar(a + 2)}), scalar(a + 3)}),
                                         op("Mul", {x, x})}),
                              scalar(1.0)});
          };
          auto far = [&](const std::string &x) { // ((A x - 5A) x + 8A) x - 4A, 1 < |x| < 2
            return op(
                "Sub",
                {op("Mul",
                    {op("Add",
                        {op("Mul", {op("Sub", {op("Mul", {x, scalar(a)}), scalar(5 * a)}), x}),
                         scalar(8 * a)}),
                     x}),
                 scalar(4 * a)});
          };
          SmallVector<std::array<std::pair<std::string, std::string>, 4>> taps;
          for (int64_t k = 0; k < rank; ++k) {
            const std::string low = op("Floor", {coordinates[k]});
            const std::string t = op("Sub", {coordinates[k], low});
            const std::string u = op("Sub", {scalar(1.0), t});
            const std::string weights[4] = {far(op("Add", {t, scalar(1.0)})), near(t), near(u),
                                            far(op("Add", {u, scalar(1.0)}))};
            std::array<std::pair<std::string, std::string>, 4> axis;
            for (int i = 0; i < 4; ++i)
              axis[i] = {pad(op("Add", {low, scalar(double(i - 1))}), k), weights[i]};
            taps.push_back(axis);
          }
          for (const auto &[y, wy] : taps[0])
            for (const auto &[x, wx] : taps[1]) {
              const std::string term = pixel({y, x}, op("Mul", {wy, wx}));
              sampled = sampled.empty() ? term : op("Add", {sampled, term});
            }
        } else if (!linear) {
          SmallVector<std::string> nearest;
          for (const std::string &v : coordinates)
            nearest.push_back(op("Round", {v}));
          sampled = pixel(nearest, "");
        } else {
          // The 2^r pixels around the point: along each axis the one below
          // (Floor) weighted 1 - t, the one above weighted t.
          SmallVector<std::array<std::string, 2>> below, above;
          for (const std::string &v : coordinates) {
            const std::string low = op("Floor", {v}), t = op("Sub", {v, low});
            below.push_back({low, op("Sub", {scalar(1.0), t})});
            above.push_back({op("Add", {low, scalar(1.0)}), t});
          }
          for (int64_t corner = 0; corner < (int64_t{1} << rank); ++corner) {
            SmallVector<std::string> at;
            std::string weight;
            for (int64_t k = 0; k < rank; ++k) {
              const auto &[coord, w] = (corner >> k) & 1 ? above[k] : below[k];
              at.push_back(coord);
              weight = weight.empty() ? w : op("Mul", {weight, w});
            }
            const std::string term = pixel(at, weight);
            sampled = sampled.empty() ? term : op("Add", {sampled, term});
          }
        }
        SmallVector<int64_t> channelsFirst{0, rank + 1};
        for (int64_t k = 1; k <= rank; ++k)
          channelsFirst.push_back(k);
        appendTranspose(*graph, base + "/Transpose", sampled, channelsFirst, node.output(0));
        return true;
      });
}

} // namespace mgs::onnx_import
