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

uint64_t elementBytes(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::FLOAT8E4M3FN:
  case onnx::TensorProto::FLOAT8E4M3FNUZ:
  case onnx::TensorProto::FLOAT8E5M2:
  case onnx::TensorProto::FLOAT8E5M2FNUZ:
    return 1;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::COMPLEX64:
    return 8;
  case onnx::TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

namespace fs = std::filesystem;

/// Whether the file's first bytes are all printable text (a protobuf model
/// starts with binary field tags).
/// Why a file that is not ONNX's protobuf may be text: "" when it is not
/// text; else a hint naming what it looks like (MLIR, or ONNX's text syntax).
static std::string textHint(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char head[256];
  in.read(head, sizeof head);
  const std::streamsize n = in.gcount();
  if (n <= 0)
    return "";
  for (std::streamsize i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t')
      return "";
  }
  std::string text(head, static_cast<size_t>(n));
  if (text.find("module") != std::string::npos || text.find("func.func") != std::string::npos ||
      text.find("train.") != std::string::npos)
    return " (it looks like MLIR: this tool reads ONNX models; mgs-opt runs mgs's passes on "
           "MLIR)";
  return " (it looks like text: a model in ONNX's text syntax is read from a file named "
         "*.onnxtext)";
}


/// Reads one tensor's external data (see inlineExternalData) into raw_data.
/// `what` names it in errors ("initializer 'w'").
static bool loadExternalTensor(const std::string &modelPath, const fs::path &dir,
                               const std::string &what, onnx::TensorProto &t,
                               std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + modelPath + "': " + what + ": external data: " + why;
    return false;
  };
  std::string location;
  uint64_t offset = 0, length = 0;
  bool haveLength = false;
  for (const auto &kv : t.external_data()) {
    // A plain decimal number (std::stoull would also take "-1" and " +7").
    auto number = [&](uint64_t &v) {
      const std::string &text = kv.value();
      if (text.empty() || text.size() > 19 ||
          !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
      v = std::stoull(text);
      return true;
    };
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" && !number(offset))
      return fail("'offset' is not a decimal number: '" + kv.value() + "'");
    else if (kv.key() == "length" && !(haveLength = number(length)))
      return fail("'length' is not a decimal number: '" + kv.value() + "'");
  }
  if (location.empty() || location.find('\0') != std::string::npos)
    return fail(location.empty() ? "no 'location'" : "the location holds a NUL byte");
  fs::path rel(location);
  auto outside = [&] {
    return fail("location '" + location +
                "' must name a file inside the model's directory (relative, no '..', no link "
                "leading out)");
  };
  if (rel.is_absolute() ||
      std::any_of(rel.begin(), rel.end(), [](const fs::path &part) { return part == ".."; }))
    return outside();
  const fs::path file = dir / rel;
  std::error_code ec;
  if (!fs::exists(file, ec))
    return fail("the file '" + file.string() + "' (its location '" + location +
                "') does not exist: the model's external data files go beside it");
  // Links are followed: where the file really is must still be inside.
  const fs::path realDir = fs::canonical(dir.empty() ? fs::path(".") : dir, ec);
  const fs::path realFile = ec ? fs::path() : fs::weakly_canonical(fs::absolute(file), ec);
  if (!ec) {
    auto [d, f] = std::mismatch(realDir.begin(), realDir.end(), realFile.begin(), realFile.end());
    if (d != realDir.end())
      return outside();
  }
  uintmax_t size = fs::file_size(file, ec);
  if (ec)
    return fail("cannot read '" + file.string() + "': " + ec.message());
  if (!haveLength)
    length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    return fail("offset " + std::to_string(offset) + " and length " + std::to_string(length) +
                " reach beyond the end of '" + file.string() + "' (" + std::to_string(size) +
                " bytes)");
  uint64_t elements = 1;
  for (int64_t dim : t.dims())
    if (dim < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements))
      return fail("its shape is invalid");
  if (uint64_t bytes = elementBytes(t.data_type());
      bytes && (__builtin_mul_overflow(elements, bytes, &elements) || elements != length))
    return fail("its " + std::to_string(length) + " bytes do not match its shape, which needs " +
                std::to_string(elements));
  std::ifstream in(file, std::ios::binary);
  std::string data(length, '\0');
  if (!in.seekg(static_cast<std::streamoff>(offset)) ||
      !in.read(data.data(), static_cast<std::streamsize>(length)))
    return fail("cannot read '" + file.string() + "': " + std::strerror(errno));
  t.set_raw_data(std::move(data));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}

/// ONNX's external data (onnx.save(..., save_as_external_data=True); torch's
/// export of models over 2 GB): each such tensor (an initializer, or a
/// Constant's or other node's tensor attribute, in the graph or a subgraph)
/// names a file relative to the model's directory, an offset and a length.
/// Its bytes are read into raw_data, so everything after sees an ordinary
/// tensor. ONNX's C++ library (1.12) has no loader for it: this is one.
static bool inlineGraphExternalData(const std::string &modelPath, const fs::path &dir,
                                    onnx::GraphProto &graph, std::string &error) {
  for (onnx::TensorProto &t : *graph.mutable_initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL &&
        !loadExternalTensor(modelPath, dir, "initializer '" + t.name() + "'", t, error))
      return false;
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      const std::string what = "attribute '" + attr.name() + "' of node '" +
                               (node.name().empty() ? node.op_type() : node.name()) + "'";
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL &&
          !loadExternalTensor(modelPath, dir, what, *attr.mutable_t(), error))
        return false;
      for (onnx::TensorProto &t : *attr.mutable_tensors())
        if (t.data_location() == onnx::TensorProto::EXTERNAL &&
            !loadExternalTensor(modelPath, dir, what, t, error))
          return false;
      if (attr.has_g() && !inlineGraphExternalData(modelPath, dir, *attr.mutable_g(), error))
        return false;
      for (onnx::GraphProto &g : *attr.mutable_graphs())
        if (!inlineGraphExternalData(modelPath, dir, g, error))
          return false;
    }
  return true;
}

static bool inlineExternalData(const std::string &modelPath, onnx::ModelProto &model,
                               std::string &error) {
  return inlineGraphExternalData(modelPath, fs::path(modelPath).parent_path(),
                                 *model.mutable_graph(), error);
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
    error += textHint(path);
    return false;
  }
  return inlineExternalData(path, model, error);
}

bool writeModelFile(const std::string &path, const onnx::ModelProto &model, std::string &error) {
  // A temporary beside it, synced to the disk, renamed over it, then the
  // folder synced: a crash leaves the old file or the new one, never part.
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok;
  int err = 0;
  {
    google::protobuf::io::FileOutputStream stream(fd);
    errno = 0;
    ok = model.SerializeToZeroCopyStream(&stream) && stream.Flush();
    err = stream.GetErrno() ? stream.GetErrno() : errno;
  }
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    // errno says why (ENOSPC on a full file system); the old file is kept.
    error = "cannot write '" + path + "': " + std::strerror(err ? err : EIO) +
            " (the old file, if any, is unchanged)";
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': renaming its temporary '" + tmp + "' over it: " +
            std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dirFd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    // Some file systems cannot sync a folder (EINVAL): the rename stands.
    bool synced = ::fsync(dirFd) == 0 || errno == EINVAL;
    err = errno;
    ::close(dirFd);
    if (!synced) {
      error = "cannot sync the folder of '" + path + "' after writing it: " + std::strerror(err);
      return false;
    }
  }
  return true;
}

} // namespace mgs::onnx_import
