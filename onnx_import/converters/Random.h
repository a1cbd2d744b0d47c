//===- Random.h - Normally distributed draws --------------------*- C++ -*-===//
//
// ONNX RandomNormal and RandomNormalLike: a VAE's reparameterization noise
// (torch.randn_like), a diffusion model's. Registered in opConverters()'s
// table. (Uniform draws and Bernoulli become dropout masks: RandomMask.cpp.)
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_CONVERTERS_RANDOM_H
#define MGS_ONNX_IMPORT_CONVERTERS_RANDOM_H

#include "OpConverters.h"

namespace mgs::onnx_import {

/// One train.random_normal of the output's shape (RandomNormalLike: its
/// input's, which is not read otherwise), with the node's mean and scale. A
/// dtype other than float32 is an error naming the node; a `seed` is not
/// kept (the draws come from the training executable's --seed stream).
mlir::LogicalResult convertRandomNormal(NodeImporter &n);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_CONVERTERS_RANDOM_H
