//===- OnnxSave.cpp - Trained weights back into the ONNX model ------------===//
//
// The C function a training executable's --save FILE.onnx calls (declared in
// runtime/include/mgsrt/driver.h; linked into executables by mgsc): the
// original model, same graph, with its initializers replaced by the trained
// values. No MLIR; exceptions from ONNX/protobuf stop here.
//
//===----------------------------------------------------------------------===//

#include "ModelIO.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <unordered_map>

namespace {

int fail(char *error, size_t errorSize, const std::string &message) {
  if (error && errorSize) {
    std::strncpy(error, message.c_str(), errorSize - 1);
    error[errorSize - 1] = '\0';
  }
  return 1;
}

int64_t numElements(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  return n;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
mgs_onnx_save_model(const char *source, const char *output, int64_t count,
                    const char *const *names, const float *const *values,
                    const int64_t *sizes, char *error, size_t errorSize) {
  try {
    onnx::ModelProto model;
    std::string message;
    if (!mgs::onnx_import::readModelFile(source, model, message))
      return fail(error, errorSize, message);
    std::unordered_map<std::string, onnx::TensorProto *> byName;
    for (auto &init : *model.mutable_graph()->mutable_initializer())
      byName[init.name()] = &init;
    for (int64_t i = 0; i < count; ++i) {
      auto it = byName.find(names[i]);
      if (it == byName.end())
        return fail(error, errorSize,
                    std::string("'") + source + "' has no initializer '" + names[i] + "'");
      onnx::TensorProto &t = *it->second;
      if (t.data_type() != onnx::TensorProto::FLOAT || numElements(t) != sizes[i])
        return fail(error, errorSize,
                    std::string("initializer '") + names[i] + "' of '" + source +
                        "' is not a float32 tensor of " + std::to_string(sizes[i]) +
                        " elements");
      t.clear_float_data();
      t.clear_data_location();
      t.clear_external_data();
      t.set_raw_data(values[i], sizes[i] * sizeof(float)); // little-endian, as ONNX stores it
    }
    if (!mgs::onnx_import::writeModelFile(output, model, message))
      return fail(error, errorSize, message);
    return 0;
  } catch (const std::exception &e) {
    return fail(error, errorSize, std::string("saving '") + output + "': " + e.what());
  }
}
