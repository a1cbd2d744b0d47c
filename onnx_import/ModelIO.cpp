//===- ModelIO.cpp - Reading and writing ONNX model files -----------------===//

#include "ModelIO.h"

#include <onnx/defs/parser.h>

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace mgs::onnx_import {

namespace fs = std::filesystem;

/// Whether the file's first bytes are all printable text (a protobuf model
/// starts with binary field tags).
static bool looksLikeText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char head[256];
  in.read(head, sizeof head);
  const std::streamsize n = in.gcount();
  if (n <= 0)
    return false;
  for (std::streamsize i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t')
      return false;
  }
  return true;
}

/// ONNX's external data (onnx.save(..., save_as_external_data=True); torch's
/// export of models over 2 GB): each such initializer names a file relative
/// to the model's directory, an offset and a length. Its bytes are read into
/// raw_data, so everything after sees an ordinary initializer. ONNX's C++
/// library (1.12) has no loader for it: this is one.
static bool inlineExternalData(const std::string &modelPath, onnx::ModelProto &model,
                               std::string &error) {
  const fs::path dir = fs::path(modelPath).parent_path();
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    auto fail = [&](const std::string &why) {
      error = "'" + modelPath + "': initializer '" + t.name() + "': external data: " + why;
      return false;
    };
    std::string location;
    uint64_t offset = 0, length = 0;
    bool haveLength = false;
    for (const auto &kv : t.external_data()) {
      auto number = [&](uint64_t &v) {
        try {
          size_t used = 0;
          v = std::stoull(kv.value(), &used);
          return used == kv.value().size();
        } catch (const std::exception &) {
          return false;
        }
      };
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset" && !number(offset))
        return fail("'offset' is not a number: '" + kv.value() + "'");
      else if (kv.key() == "length" && !(haveLength = number(length)))
        return fail("'length' is not a number: '" + kv.value() + "'");
    }
    if (location.empty())
      return fail("no 'location'");
    fs::path rel(location);
    if (rel.is_absolute() ||
        std::any_of(rel.begin(), rel.end(), [](const fs::path &part) { return part == ".."; }))
      return fail("location '" + location +
                  "' must be a path inside the model's directory (relative, no '..')");
    const fs::path file = dir / rel;
    std::error_code ec;
    uintmax_t size = fs::file_size(file, ec);
    if (ec)
      return fail("cannot read '" + file.string() + "': " + ec.message());
    if (!haveLength)
      length = offset <= size ? size - offset : 0;
    if (offset > size || length > size - offset)
      return fail("bytes " + std::to_string(offset) + " to " + std::to_string(offset + length) +
                  " are beyond the end of '" + file.string() + "' (" + std::to_string(size) +
                  " bytes)");
    std::ifstream in(file, std::ios::binary);
    std::string bytes(length, '\0');
    if (!in.seekg(static_cast<std::streamoff>(offset)) ||
        !in.read(bytes.data(), static_cast<std::streamsize>(length)))
      return fail("cannot read '" + file.string() + "': " + std::strerror(errno));
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  return true;
}

bool readModelFile(const std::string &path, onnx::ModelProto &model, std::string &error) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    error = "cannot open '" + path + "': no such file";
    return false;
  }
  if (fs::is_directory(path, ec)) {
    error = "cannot read '" + path + "': it is a directory";
    return false;
  }
  uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    error = "cannot read '" + path + "': " + ec.message();
    return false;
  }
  if (size == 0) {
    error = "'" + path + "' is empty, not an ONNX model";
    return false;
  }

  if (path.size() >= 9 && path.compare(path.size() - 9, 9, ".onnxtext") == 0) {
    std::ifstream in(path);
    if (!in) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    std::string str = text.str();
    // ONNX's parser reports most errors in its status but lets some escape
    // as exceptions (std::stof on a malformed number in a tensor literal).
    try {
      auto status = onnx::OnnxParser::Parse(model, str.c_str());
      if (!status.IsOK()) {
        error = "'" + path + "' is not a valid ONNX text model: " + status.ErrorMessage();
        return false;
      }
    } catch (const std::exception &e) {
      error = "'" + path + "' is not a valid ONNX text model: ONNX's parser failed (" +
              e.what() + ")";
      return false;
    }
    return true;
  }

  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool parsed;
  {
    // Parse straight from the file: no second copy of a large model in memory.
    google::protobuf::io::FileInputStream stream(fd);
    parsed = model.ParseFromZeroCopyStream(&stream);
  }
  ::close(fd);
  if (!parsed) {
    error = "'" + path + "' is not a valid ONNX model: the protobuf data is malformed or truncated";
    if (looksLikeText(path))
      error += " (it looks like text: a model in ONNX's text syntax is read from a file named "
               "*.onnxtext)";
    return false;
  }
  return inlineExternalData(path, model, error);
}

bool writeModelFile(const std::string &path, const onnx::ModelProto &model, std::string &error) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot write '" + tmp + "': " + std::strerror(errno);
      return false;
    }
    if (!model.SerializeToOstream(&out) || !out.flush()) {
      error = "writing '" + tmp + "' failed";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

} // namespace mgs::onnx_import
