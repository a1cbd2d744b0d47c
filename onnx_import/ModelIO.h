//===- ModelIO.h - Reading and writing ONNX model files ---------*- C++ -*-===//
//
// No MLIR here: this part of onnx_import is also linked into the training
// executables (for --save FILE.onnx, through OnnxSave.cpp's C function).
//
//===----------------------------------------------------------------------===//

#ifndef MGS_ONNX_IMPORT_MODELIO_H
#define MGS_ONNX_IMPORT_MODELIO_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace mgs::onnx_import {

/// Reads a binary .onnx file or, for a .onnxtext path, ONNX's text syntax.
/// On failure returns false with a message naming the file (missing, a
/// directory, empty, malformed or truncated protobuf, text syntax error).
bool readModelFile(const std::string &path, onnx::ModelProto &model, std::string &error);

/// Writes `model` as binary protobuf, atomically (a temporary file renamed
/// over `path`).
bool writeModelFile(const std::string &path, const onnx::ModelProto &model, std::string &error);

/// The bytes each value of an ONNX data type takes in raw_data, or 0 for the
/// types whose values are not fixed-size (STRING) or packed below a byte.
uint64_t elementBytes(int32_t dataType);

} // namespace mgs::onnx_import

#endif // MGS_ONNX_IMPORT_MODELIO_H
