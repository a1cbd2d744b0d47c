//===- Options.h - The executable's command line (internal) -----*- C++ -*-===//
//
// The options of the executables mgsc produces, their parser and the usage
// text (which lists the training options unless the model was compiled for
// inference alone).
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_DRIVER_OPTIONS_H
#define MGSRT_DRIVER_OPTIONS_H

#include "mgsrt/driver.h"

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mgs::rt::driver {

/// The command line as parsed: the defaults where an option is not given.
struct Options {
  std::string program = "mgs-model";
  std::string executable;
  std::string data, labels, weights, checkpoint, resume, saveWeights, saveOnnx, calibrate;
  double calibrateDensity = 0.001;
  std::string trace;
  int64_t traceSteps = 3;
  bool haveFormat = false;
  DataFormat format = DataFormat::Digits;
  int64_t epochs = 10;
  int64_t batchSize = 0; // 0: not given
  double lr = 0.1, momentum = 0.9, weightDecay = 0.0;
  double warmupEpochs = 0.0;
  std::vector<int64_t> lrSteps;
  double lrGamma = 0.1;
  uint64_t seed = 1;
  double holdout = 0.2;
  int64_t progressEvery = 10;
  /// --on-nonfinite skip: drop a step whose loss or gradient is not finite
  /// (else stop with an error).
  bool skipNonfinite = false;
  /// --timeout: seconds without progress before the job is ended (0: never).
  double timeout = 300;
  bool inference = false, help = false;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::set<std::string> given; // the options on the command line
};

/// Options that only make sense when training / only when running inference.
extern const std::set<std::string> kTrainOnly;
extern const std::set<std::string> kInferenceOnly;

/// The usage for this executable's model (mgs_model_manifest()).
void printUsage(std::FILE *f, const std::string &program);

/// Parses argv into `o`; a bad command line is MGSRT_ERROR_INVALID_ARGUMENT
/// with the problem as its message.
Status parseOptions(int argc, char **argv, Options &o);

} // namespace mgs::rt::driver

#endif // MGSRT_DRIVER_OPTIONS_H
