//===- Inference.cpp - One forward pass on raw input files ----------------===//
//
// --inference (or a model compiled for inference): reads each --input file
// into the model's input, runs mgs_eval_step once and writes the outputs
// given --output.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "FileIO.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace mgs::rt::driver {

int Driver::runInference() {
  std::map<std::string, std::string> inputFiles, outputFiles;
  // --input / --output NAME=FILE: each names one of the model's tensors, once.
  auto bind = [&](const std::string &flag, const std::string &kind,
                  const std::vector<std::pair<std::string, std::string>> &given,
                  const std::vector<TensorSpec> &specs,
                  std::map<std::string, std::string> &files) -> int {
    for (const auto &[name, file] : given) {
      if (std::none_of(specs.begin(), specs.end(),
                       [&](const TensorSpec &s) { return s.name == name; })) {
        std::string known;
        for (const TensorSpec &s : specs)
          known += (known.empty() ? "'" : ", '") + s.name + "'";
        return usage(flag + " " + name + ": the model has no " + kind + " '" + name + "'; its " +
                     kind + (specs.size() == 1 ? " is " : "s are ") + known);
      }
      if (!files.emplace(name, file).second)
        return usage(flag + " " + name + " given twice");
    }
    return 0;
  };
  if (int rc = bind("--input", "input", o.inputs, m.inputs, inputFiles))
    return rc;
  for (const TensorSpec &s : m.inputs)
    if (!inputFiles.count(s.name))
      return usage("missing --input " + s.name + "=FILE (" + formatShape(s.dims) +
                   (s.int64 ? " int64: token ids)" : " float32)"));
  if (int rc = bind("--output", "output", o.outputs, m.outputs, outputFiles))
    return rc;
  // An output written over an input (or another output) loses it.
  std::map<std::string, std::string> written;
  for (const auto &[name, file] : outputFiles) {
    for (const auto &[input, inFile] : inputFiles)
      if (sameFile(file, inFile))
        return usage("--output " + name + "=" + file + " would overwrite --input " + input +
                     "'s file");
    for (const auto &[other, otherFile] : written)
      if (sameFile(file, otherFile))
        return usage("--output " + name + " and --output " + other + " name the same file '" +
                     file + "'");
    written.emplace(name, file);
  }

  if (int rc = loadParams())
    return rc;
  if (int rc = createContext())
    return rc;
  if (int rc = allocate(/*forTraining=*/false))
    return rc;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string &file = inputFiles[m.inputs[i].name];
    Reader r;
    if (Status s = r.open(file, "input file"); !s.ok())
      return error(s);
    if (r.remaining() != inputs[i].bytes())
      return error("input file '%s' has %llu bytes; input '%s' %s takes %llu (%s)",
                   file.c_str(), static_cast<unsigned long long>(r.remaining()),
                   m.inputs[i].name.c_str(), formatShape(m.inputs[i].dims).c_str(),
                   static_cast<unsigned long long>(inputs[i].bytes()),
                   m.inputs[i].int64 ? "int64: token ids" : "float32");
    if (Status s = r.read(inputs[i].get(), inputs[i].bytes(), "the input"); !s.ok())
      return error(s);
    const TensorSpec &spec = m.inputs[i];
    if (spec.int64) {
      const int64_t *ids = static_cast<const int64_t *>(inputs[i].get());
      for (int64_t k = 0; k < spec.numElements(); ++k) {
        const bool rows = beyondIndexRows(spec, static_cast<double>(ids[k]));
        if (rows || outsideIndexRange(spec, static_cast<double>(ids[k])))
          return error("input file '%s': element %lld holds %s%lld, outside %s", file.c_str(),
                       static_cast<long long>(k), rows ? "token id " : "",
                       static_cast<long long>(ids[k]),
                       (rows ? describeIndexBound(spec) : describeIndexRange(spec)).c_str());
      }
    }
    if (int rc = toDevice(inputs[i]))
      return rc;
  }

  if (mgs_eval_step(ctx, evalIo.data()) != MGSRT_OK)
    return error("mgs_eval_step failed: %s", mgsrt_ctx_message(ctx));
  for (Buffer &b : outputs)
    if (int rc = toHost(b))
      return rc;

  for (size_t i = 0; i < m.outputs.size(); ++i) {
    auto it = outputFiles.find(m.outputs[i].name);
    if (it == outputFiles.end()) {
      std::printf("output %s %s (not written; pass --output %s=FILE)\n", m.outputs[i].name.c_str(),
                  formatShape(m.outputs[i].dims).c_str(), m.outputs[i].name.c_str());
      continue;
    }
    AtomicWriter w;
    w.open(it->second);
    w.write(outputs[i].get(), outputs[i].bytes());
    if (Status s = w.commit(); !s.ok())
      return error(s);
    std::printf("output %s %s -> %s\n", m.outputs[i].name.c_str(),
                formatShape(m.outputs[i].dims).c_str(), it->second.c_str());
  }
  std::fflush(stdout);
  return 0;
}

} // namespace mgs::rt::driver
