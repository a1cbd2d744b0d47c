//===- GridSample.cpp - GridSample and DeformConv as gathers of rows -----===//
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
// torchvision's deform_conv2d (ONNX DeformConv, as torch.export writes it)
// samples the same way: each kernel tap reads the image bilinearly (zeros
// outside) at its place in the window plus its offset group's offset, times
// the mask (DCNv2), and the columns of taps meet each group's weights in a
// Gemm.
//
//===----------------------------------------------------------------------===//

#include "OnnxNodes.h"
#include "Prepare.h"

#include "mgs/Dialect/Train/IR/ShapeUtils.h"

#include "mlir/IR/Diagnostics.h"

#include <array>
#include <string>
#include <vector>

using namespace mlir;

namespace mgs::onnx_import {

namespace {

/// The ONNX nodes of a sampling rewrite (GridSample's, DeformConv's), named
/// after `base`, reading an image as rows of its channels.
struct Sampler {
  onnx::GraphProto &graph;
  std::string base;
  int64_t opset;
  int counter = 0;
  std::string rows, imageStart; ///< (N * pixels, C); each image's first row
  SmallVector<int64_t> sizes;   ///< the image's spatial sizes
  int64_t pixels = 1;           ///< their product

  std::string fresh(StringRef what) { return base + "/" + what.str() + std::to_string(counter++); }
  std::string constant(ArrayRef<int64_t> dims, ArrayRef<float> values) {
    std::string out = fresh("c");
    onnx::TensorProto &t = appendConstant(graph, out, out);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t.add_dims(d);
    t.mutable_float_data()->Add(values.begin(), values.end());
    return out;
  }
  std::string scalar(double v) { return constant({}, {static_cast<float>(v)}); }
  std::string op(StringRef type, ArrayRef<std::string> in) {
    std::string out = fresh(type);
    appendNode(graph, type, out, in, out);
    return out;
  }
  std::string clip(const std::string &v, double lo, double hi) {
    return op("Clip", {v, scalar(lo), scalar(hi)});
  }
  /// 1 where integer coordinate `at` is inside [0, size), else 0.
  std::string inside(const std::string &at, int64_t size) {
    return op("Mul", {clip(op("Add", {at, scalar(1.0)}), 0.0, 1.0),
                      clip(op("Sub", {scalar(double(size)), at}), 0.0, 1.0)});
  }
  /// The image `x` (N, C, sizes...) as rows of C values, one a pixel.
  void readRows(const std::string &x, int64_t n, int64_t c, ArrayRef<int64_t> spatial) {
    sizes.assign(spatial.begin(), spatial.end());
    pixels = 1;
    for (int64_t size : sizes)
      pixels *= size;
    const int64_t rank = static_cast<int64_t>(sizes.size());
    SmallVector<int64_t> channelsLast{0};
    for (int64_t k = 0; k < rank; ++k)
      channelsLast.push_back(k + 2);
    channelsLast.push_back(1);
    const std::string last = fresh("channels_last");
    rows = fresh("rows");
    appendTranspose(graph, last, x, channelsLast, last);
    appendReshape(graph, rows, last, {n * pixels, c}, rows);
    std::vector<float> starts;
    for (int64_t i = 0; i < n; ++i)
      starts.push_back(static_cast<float>(i * pixels));
    SmallVector<int64_t> startShape(rank + 1, 1);
    startShape[0] = n;
    imageStart = constant(startShape, starts);
  }
  /// The pixel at integer coordinates `at` (one per spatial axis, each
  /// (N, O1, ..., Or)), each image's own, times `weight` (none: 1) and with
  /// `zeros` times whether it is inside: (N, O1, ..., Or, C).
  std::string pixel(ArrayRef<std::string> at, std::string weight, bool zeros) {
    const int64_t rank = static_cast<int64_t>(sizes.size());
    std::string flat = imageStart;
    int64_t stride = pixels;
    for (int64_t k = 0; k < rank; ++k) {
      stride /= sizes[k];
      flat =
          op("Add",
             {flat, op("Mul", {clip(at[k], 0.0, double(sizes[k] - 1)), scalar(double(stride))})});
      if (zeros)
        weight =
            weight.empty() ? inside(at[k], sizes[k]) : op("Mul", {weight, inside(at[k], sizes[k])});
    }
    const std::string index = fresh("Cast");
    addIntAttribute(*appendNode(graph, "Cast", index, {flat}, index), "to",
                    onnx::TensorProto::INT64);
    const std::string values = fresh("Gather");
    addIntAttribute(*appendNode(graph, "Gather", values, {rows, index}, values), "axis", 0);
    if (weight.empty())
      return values;
    const std::string column = fresh("Unsqueeze");
    appendUnsqueeze(graph, column, weight, rank + 1, column, opset);
    return op("Mul", {values, column});
  }
  /// The linear sample at real coordinates `at` (padded, or with `zeros`
  /// clipped to [-2, size + 1]): the 2^r pixels around the point, along each
  /// axis the one below (Floor) weighted 1 - t, the one above weighted t.
  std::string linear(ArrayRef<std::string> at, bool zeros) {
    SmallVector<std::array<std::string, 2>> below, above;
    for (const std::string &v : at) {
      const std::string low = op("Floor", {v}), t = op("Sub", {v, low});
      below.push_back({low, op("Sub", {scalar(1.0), t})});
      above.push_back({op("Add", {low, scalar(1.0)}), t});
    }
    const int64_t rank = static_cast<int64_t>(at.size());
    std::string sampled;
    for (int64_t corner = 0; corner < (int64_t{1} << rank); ++corner) {
      SmallVector<std::string> coords;
      std::string weight;
      for (int64_t k = 0; k < rank; ++k) {
        const auto &[coord, w] = (corner >> k) & 1 ? above[k] : below[k];
        coords.push_back(coord);
        weight = weight.empty() ? w : op("Mul", {weight, w});
      }
      const std::string term = pixel(coords, weight, zeros);
      sampled = sampled.empty() ? term : op("Add", {sampled, term});
    }
    return sampled;
  }
};

} // namespace

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
        Sampler s{*graph, base, opset};
        s.readRows(node.input(0), n, c, sizes);

        // PyTorch's reflect_coordinates: |v - low| folded into [0, 2 span)
        // by a floor, then reflected about span.
        auto reflect = [&](const std::string &v, double low, double span) {
          if (span <= 0)
            return s.op("Mul", {v, s.scalar(0.0)});
          const std::string y = s.op("Abs", {s.op("Sub", {v, s.scalar(low)})});
          const std::string folded =
              s.op("Sub", {y, s.op("Mul", {s.op("Floor", {s.op("Mul", {y, s.scalar(0.5 / span)})}),
                                           s.scalar(2 * span)})});
          return s.op("Add", {s.op("Sub", {s.scalar(span),
                                           s.op("Abs", {s.op("Sub", {folded, s.scalar(span)})})}),
                              s.scalar(low)});
        };
        // Integer or real coordinate `v` along spatial axis k padded: clipped
        // to the image (border), reflected then clipped (reflection), or as
        // it is (zeros: pixels outside count 0).
        auto pad = [&](const std::string &v, int64_t k) {
          const double size = static_cast<double>(sizes[k]);
          if (zeros)
            return v;
          if (reflection)
            return s.clip(alignCorners ? reflect(v, 0.0, size - 1) : reflect(v, -0.5, size), 0.0,
                          size - 1);
          return s.clip(v, 0.0, size - 1);
        };
        // Spatial axis k's coordinate (the grid's coordinate rank - 1 - k)
        // in pixels: padded (linear, nearest; zeros: clipped to [-2, size +
        // 1], where every pixel around it is still outside the image), or for
        // cubic sampling as it is (zeros: clipped to [-3, size + 2]; its 4
        // pixels a side are padded).
        auto coordinate = [&](int64_t k) {
          const double size = static_cast<double>(sizes[k]);
          const std::string at = s.fresh("axis");
          appendScalarConstant(*graph, at, rank - 1 - k, onnx::TensorProto::INT64, at);
          const std::string normalized = s.fresh("Gather");
          addIntAttribute(*appendNode(*graph, "Gather", normalized, {node.input(1), at},
                                      normalized),
                          "axis", rank + 1);
          const std::string shifted = s.op("Add", {normalized, s.scalar(1.0)});
          const std::string v =
              alignCorners
                  ? s.op("Mul", {s.op("Mul", {shifted, s.scalar(0.5)}), s.scalar(size - 1)})
                  : s.op("Mul",
                         {s.op("Sub", {s.op("Mul", {shifted, s.scalar(size)}), s.scalar(1.0)}),
                          s.scalar(0.5)});
          if (cubic) // (reflected taps of a far point are inside: it stays where it is)
            return zeros ? s.clip(v, -3.0, size + 2) : v;
          return zeros ? s.clip(v, -2.0, size + 1) : pad(v, k);
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
            return s.op(
                "Add",
                {s.op("Mul", {s.op("Sub", {s.op("Mul", {x, s.scalar(a + 2)}), s.scalar(a + 3)}),
                              s.op("Mul", {x, x})}),
                 s.scalar(1.0)});
          };
          auto far = [&](const std::string &x) { // ((A x - 5A) x + 8A) x - 4A, 1 < |x| < 2
            return s.op(
                "Sub",
                {s.op("Mul", {s.op("Add", {s.op("Mul", {s.op("Sub", {s.op("Mul", {x, s.scalar(a)}),
                                                                     s.scalar(5 * a)}),
                                                        x}),
                                           s.scalar(8 * a)}),
                              x}),
                 s.scalar(4 * a)});
          };
          SmallVector<std::array<std::pair<std::string, std::string>, 4>> taps;
          for (int64_t k = 0; k < rank; ++k) {
            const std::string low = s.op("Floor", {coordinates[k]});
            const std::string t = s.op("Sub", {coordinates[k], low});
            const std::string u = s.op("Sub", {s.scalar(1.0), t});
            const std::string weights[4] = {far(s.op("Add", {t, s.scalar(1.0)})), near(t), near(u),
                                            far(s.op("Add", {u, s.scalar(1.0)}))};
            std::array<std::pair<std::string, std::string>, 4> axis;
            for (int i = 0; i < 4; ++i)
              axis[i] = {pad(s.op("Add", {low, s.scalar(double(i - 1))}), k), weights[i]};
            taps.push_back(axis);
          }
          for (const auto &[y, wy] : taps[0])
            for (const auto &[x, wx] : taps[1]) {
              const std::string term = s.pixel({y, x}, s.op("Mul", {wy, wx}), zeros);
              sampled = sampled.empty() ? term : s.op("Add", {sampled, term});
            }
        } else if (!linear) {
          SmallVector<std::string> nearest;
          for (const std::string &v : coordinates)
            nearest.push_back(s.op("Round", {v}));
          sampled = s.pixel(nearest, "", zeros);
        } else {
          sampled = s.linear(coordinates, zeros);
        }
        SmallVector<int64_t> channelsFirst{0, rank + 1};
        for (int64_t k = 1; k <= rank; ++k)
          channelsFirst.push_back(k);
        appendTranspose(*graph, base + "/Transpose", sampled, channelsFirst, node.output(0));
        return true;
      });
}

LogicalResult lowerDeformConvs(onnx::ModelProto &model, Location fileLoc, int64_t opset,
                               bool strict, bool &changed) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringMap<SmallVector<int64_t>> shapes = knownShapes(*graph);
  return rewriteEach(
      model, "DeformConv", changed,
      [&](onnx::NodeProto &node, const std::string &label, const auto &) -> FailureOr<bool> {
        auto fail = [&](const std::string &why) {
          return emitError(fileLoc) << "node '" << label << "' (DeformConv): " << why;
        };
        if (node.input_size() < 3 || node.output_size() != 1)
          return fail("it has " + std::to_string(node.input_size()) +
                      " inputs (X, W, offset, and B and mask optionally, expected)");
        auto shapeOf = [&](int i) -> const SmallVector<int64_t> * {
          if (node.input_size() <= i || node.input(i).empty())
            return nullptr;
          auto it = shapes.find(node.input(i));
          if (it == shapes.end() || it->second.size() != (i == 3 ? 1u : 4u) ||
              !llvm::all_of(it->second, [](int64_t d) { return d > 0; }))
            return nullptr;
          return &it->second;
        };
        const SmallVector<int64_t> *xs = shapeOf(0), *ws = shapeOf(1), *os = shapeOf(2);
        const bool hasBias = node.input_size() > 3 && !node.input(3).empty();
        const bool hasMask = node.input_size() > 4 && !node.input(4).empty();
        if (!xs || !ws || !os || (hasBias && !shapeOf(3)) || (hasMask && !shapeOf(4))) {
          if (!strict)
            return false; // perhaps known after another round of folding
          return fail("the shapes of its inputs are not known at import, or it is not 2-D; mgs "
                      "takes a DeformConv of an image X (N, C, H, W)");
        }
        const int64_t n = (*xs)[0], c = (*xs)[1], h = (*xs)[2], w = (*xs)[3];
        const int64_t oc = (*ws)[0], cg = (*ws)[1], kh = (*ws)[2], kw = (*ws)[3];
        const int64_t groups = intAttribute(node, "group", 1);
        const int64_t offsetGroups = intAttribute(node, "offset_group", 1);
        std::vector<int64_t> strides = intsAttribute(node, "strides", 2, 1),
                             dilations = intsAttribute(node, "dilations", 2, 1),
                             pads = intsAttribute(node, "pads", 4, 0);
        if (groups < 1 || offsetGroups < 1 || c != cg * groups || oc % groups != 0 ||
            c % offsetGroups != 0)
          return fail("group " + std::to_string(groups) + " and offset_group " +
                      std::to_string(offsetGroups) + " do not divide its " + std::to_string(c) +
                      " input and " + std::to_string(oc) + " output channels");
        const int64_t limit = int64_t{1} << 24;
        auto within = [&](int64_t v, int64_t low) { return v >= low && v <= limit; };
        if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
            !within(strides[0], 1) || !within(strides[1], 1) || !within(dilations[0], 1) ||
            !within(dilations[1], 1) ||
            !llvm::all_of(pads, [&](int64_t p) { return within(p, 0); }))
          return fail("strides and dilations must be 2 values in [1, 2^24], pads 4 in [0, 2^24]");
        const int64_t oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
        const int64_t ow = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
        const int64_t taps = kh * kw;
        const SmallVector<int64_t> wantOffset{n, offsetGroups * taps * 2, oh, ow};
        if (oh < 1 || ow < 1 || *os != wantOffset)
          return fail("its offset has shape " + mgs::train::shapeToString(*os) +
                      " where its image, kernel, " +
                      "strides, dilations, pads and offset_group give " +
                      mgs::train::shapeToString(wantOffset));
        if (hasMask && *shapeOf(4) != SmallVector<int64_t>{n, offsetGroups * taps, oh, ow})
          return fail("its mask has shape " + mgs::train::shapeToString(*shapeOf(4)) + ", not [" +
                      std::to_string(n) + ", " + std::to_string(offsetGroups * taps) + ", " +
                      std::to_string(oh) + ", " + std::to_string(ow) + "]");
        if (hasBias && (*shapeOf(3))[0] != oc)
          return fail("its bias has " + std::to_string((*shapeOf(3))[0]) + " values for " +
                      std::to_string(oc) + " output channels");
        if (n * h * w > limit || n * oh * ow * c * taps > limit)
          return fail("its images or its sampled columns hold more than 2^24 values");

        Sampler s{*graph, (node.name().empty() ? node.output(0) : node.name()) + "/mgs_deform_conv",
                  opset};
        s.readRows(node.input(0), n, c, {h, w});
        auto index = [&](const std::string &in, int64_t at, int64_t axis) {
          const std::string i = s.fresh("index"), out = s.fresh("Gather");
          appendScalarConstant(*graph, i, at, onnx::TensorProto::INT64, i);
          addIntAttribute(*appendNode(*graph, "Gather", out, {in, i}, out), "axis", axis);
          return out;
        };
        auto slice = [&](const std::string &in, int64_t from, int64_t to, int64_t axis) {
          const std::string b = s.fresh("bounds"), out = s.fresh("Slice");
          appendInt64Constant(*graph, b + "s", {from}, b + "_starts");
          appendInt64Constant(*graph, b + "e", {to}, b + "_ends");
          appendInt64Constant(*graph, b + "a", {axis}, b + "_axes");
          appendNode(*graph, "Slice", out, {in, b + "_starts", b + "_ends", b + "_axes"}, out);
          return out;
        };
        auto unsqueeze = [&](const std::string &in, int64_t axis) {
          const std::string out = s.fresh("Unsqueeze");
          appendUnsqueeze(*graph, out, in, axis, out, opset);
          return out;
        };
        auto concat = [&](ArrayRef<std::string> in, int64_t axis) {
          if (in.size() == 1)
            return in[0];
          const std::string out = s.fresh("Concat");
          addIntAttribute(*appendNode(*graph, "Concat", out, in, out), "axis", axis);
          return out;
        };
        // Each tap's samples (N, oH, oW, C): at the tap's place in the window
        // of each output position plus its offset group's offset, bilinear
        // with zeros outside the image (as torchvision's), times its mask.
        SmallVector<std::string> columns;
        const int64_t perGroup = c / offsetGroups;
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            std::vector<float> ys, xs;
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t x = 0; x < ow; ++x) {
                ys.push_back(float(y * strides[0] - pads[0] + i * dilations[0]));
                xs.push_back(float(x * strides[1] - pads[1] + j * dilations[1]));
              }
            const std::string yBase = s.constant({1, oh, ow}, ys),
                              xBase = s.constant({1, oh, ow}, xs);
            const int64_t k = i * kw + j;
            SmallVector<std::string> byGroup;
            for (int64_t g = 0; g < offsetGroups; ++g) {
              const int64_t at = (g * taps + k) * 2;
              const std::string y =
                  s.clip(s.op("Add", {index(node.input(2), at, 1), yBase}), -2.0, double(h + 1));
              const std::string x = s.clip(s.op("Add", {index(node.input(2), at + 1, 1), xBase}),
                                           -2.0, double(w + 1));
              std::string v = s.linear({y, x}, /*zeros=*/true);
              if (offsetGroups > 1)
                v = slice(v, g * perGroup, (g + 1) * perGroup, 3);
              if (hasMask)
                v = s.op("Mul", {v, unsqueeze(index(node.input(4), g * taps + k, 1), 3)});
              byGroup.push_back(v);
            }
            columns.push_back(unsqueeze(concat(byGroup, 3), 4));
          }
        // The columns (N oH oW, C K), channel-major as W's (oC, C / group,
        // kH, kW), times each group's weights.
        const std::string cols = s.fresh("columns");
        appendReshape(*graph, cols, concat(columns, 4), {n * oh * ow, c * taps}, cols);
        SmallVector<std::string> outputs;
        for (int64_t g = 0; g < groups; ++g) {
          const std::string weights = s.fresh("weights");
          appendReshape(*graph, weights,
                        groups > 1 ? slice(node.input(1), g * oc / groups, (g + 1) * oc / groups, 0)
                                   : node.input(1),
                        {oc / groups, cg * taps}, weights);
          const std::string product = s.fresh("Gemm");
          addIntAttribute(
              *appendNode(
                  *graph, "Gemm", product,
                  {groups > 1 ? slice(cols, g * cg * taps, (g + 1) * cg * taps, 1) : cols, weights},
                  product),
              "transB", 1);
          outputs.push_back(product);
        }
        const std::string rowsOut = s.fresh("output_rows");
        appendReshape(*graph, rowsOut, concat(outputs, 1), {n, oh, ow, oc}, rowsOut);
        const std::string transposed = hasBias ? s.fresh("Transpose") : node.output(0);
        appendTranspose(*graph, s.fresh("Transpose"), rowsOut, {0, 3, 1, 2}, transposed);
        if (hasBias) {
          const std::string bias = s.fresh("bias");
          appendReshape(*graph, bias, node.input(3), {1, oc, 1, 1}, bias);
          appendNode(*graph, "Add", s.fresh("Add"), {transposed, bias}, node.output(0));
        }
        return true;
      });
}

} // namespace mgs::onnx_import
