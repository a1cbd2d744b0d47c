//===- ModelIO.cpp - Reading and writing ONNX model files -----------------===//

#include "ModelIO.h"

#include <onnx/defs/parser.h>

#include <google/protobuf/io/zero_copy_stream_impl.h>

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
  return true;
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
