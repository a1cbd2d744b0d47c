//===- status.h - A status code and its message -----------------*- C++ -*-===//
//
// The runtime's C++ error convention: a function that can fail returns a
// Status (an mgsrt_status_t of the C ABI and the message that goes with it)
// and hands its results back through reference parameters. At the C ABI the
// status becomes the context's sticky one (ctx->fail) or an entry point's
// return value; the driver (driver.h) prints its message. The C functions
// without a context (mgsrt_comm_create, mgs_onnx_save_model) fill a
// `char *error` buffer instead.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_STATUS_H
#define MGSRT_STATUS_H

#include "mgsrt/mgsrt.h"

#include <string>
#include <utility>

namespace mgs::rt {

/// A status code of the C ABI and its message.
struct Status {
  mgsrt_status_t code = MGSRT_OK;
  std::string message;

  bool ok() const { return code == MGSRT_OK; }
  static Status success() { return {}; }
  static Status error(mgsrt_status_t code, std::string message) {
    return {code, std::move(message)};
  }
};

} // namespace mgs::rt

#endif // MGSRT_STATUS_H
