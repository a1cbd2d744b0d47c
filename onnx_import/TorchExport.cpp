//===- TorchExport.cpp - What torch.export says of the model --------------===//
//
// The graph signature PyTorch's torch.export-based exporter records, and the
// check of the graph's initializers against it (TorchExport.h).
//
//===----------------------------------------------------------------------===//

#include "TorchExport.h"
#include "OnnxNodes.h"
#include "Prepare.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;

namespace mgs::onnx_import {

namespace {

/// One input of the traced program: "p_fc_weight: PARAMETER
/// target='fc.weight'" (BUFFER and CONSTANT_TENSOR entries alike; a
/// USER_INPUT has no target).
struct SignatureInput {
  std::string name; ///< the FX value, %p_fc_weight in the nodes' metadata
  std::string kind;
  std::string target; ///< the module path, the initializer's name
};

bool isModuleState(StringRef kind) {
  return kind == "PARAMETER" || kind == "BUFFER" || kind == "CONSTANT_TENSOR";
}

/// The entries of one section of the graph's signature ("# inputs" or
/// "# outputs"), each "NAME: KIND ATTRS" as (NAME, KIND ATTRS).
SmallVector<std::pair<StringRef, StringRef>> signatureSection(const onnx::GraphProto &graph,
                                                              StringRef section) {
  SmallVector<StringRef> lines;
  graphMetadata(graph, kExportSignatureKey).split(lines, '\n');
  SmallVector<std::pair<StringRef, StringRef>> entries;
  bool inSection = false;
  for (StringRef line : lines) {
    line = line.trim();
    if (line.starts_with("#")) {
      inSection = line == section;
      continue;
    }
    auto [name, rest] = line.split(": ");
    if (inSection && !rest.empty())
      entries.emplace_back(name, rest);
  }
  return entries;
}

/// The quoted target of an entry's attributes ("target='fc.weight'"); empty
/// without one.
StringRef entryTarget(StringRef attrs) {
  size_t at = attrs.find("target='");
  if (at == StringRef::npos)
    return {};
  StringRef target = attrs.drop_front(at + strlen("target='"));
  size_t end = target.find('\'');
  return end == StringRef::npos ? StringRef() : target.take_front(end);
}

/// The inputs of the graph's signature; nullopt without one, and for one
/// whose parameter or buffer lines do not read as such (another format: the
/// signature is then not used at all, rather than misread).
std::optional<std::vector<SignatureInput>> readSignature(const onnx::GraphProto &graph) {
  if (graphMetadata(graph, kExportSignatureKey).empty())
    return std::nullopt;
  std::vector<SignatureInput> inputs;
  for (auto [name, rest] : signatureSection(graph, "# inputs")) {
    auto [kind, attrs] = rest.split(' ');
    if (!isModuleState(kind))
      continue;
    StringRef target = entryTarget(attrs);
    if (name.empty() || target.empty())
      return std::nullopt;
    inputs.push_back({name.str(), kind.str(), target.str()});
  }
  return inputs;
}

/// The values an FX node's text reads: "%p_fc_weight" and the like.
llvm::StringSet<> fxValues(StringRef fx) {
  llvm::StringSet<> values;
  for (size_t at = fx.find('%'); at != StringRef::npos; at = fx.find('%', at + 1)) {
    StringRef name = fx.drop_front(at + 1).take_while(
        [](char c) { return llvm::isAlnum(c) || c == '_'; });
    if (!name.empty())
      values.insert(name);
  }
  return values;
}

/// The last component of a module path: "weight" of "blocks.0.ln2.weight".
StringRef leafName(StringRef target) {
  size_t dot = target.rfind('.');
  return dot == StringRef::npos ? target : target.drop_front(dot + 1);
}

/// Where a parameter went (one the graph lost, or a copy of one), as a node
/// whose FX node read it shows, and how sure that is (higher: surer).
struct Whereabouts {
  int rank = 0; ///< 0: not known
  std::string text;
  std::string node;
};

Whereabouts whereItWent(const onnx::NodeProto &node, int idx, const SignatureInput &param,
                        const llvm::StringSet<> &read,
                        const llvm::StringMap<const SignatureInput *> &byTarget,
                        const llvm::StringMap<int64_t> &lifted) {
  std::string name = labelOf(node, idx);
  std::string label = node.op_type() + " '" + name + "'";
  StringRef rules = nodeMetadata(node, kRewriteRuleKey);
  if (rules.contains("FuseBatchNormInto") && nodeMetadata(node, kFxNodeKey).contains("batch_norm"))
    return {4,
            "fused into " + label +
                " (the optimizer's FuseBatchNormInto* rewrite): its BatchNorm's batch "
                "statistics are gone",
            name};
  if (rules.contains("RemoveOptionalBias"))
    return {3, "removed from " + label + " (a bias of zeros, which the optimizer drops)", name};
  // Another parameter's initializer that the FX node did not read: the
  // optimizer merged the two (the one of the same role, if several).
  std::string merged, folded;
  for (const std::string &in : node.input()) {
    const SignatureInput *other = byTarget.lookup(in);
    if (other && other->kind == "PARAMETER" && !read.contains(other->name) &&
        (merged.empty() || leafName(in) == leafName(param.target)))
      merged = in;
    // (A scalar is the node's own constant, an epsilon or a scale.)
    if (lifted.lookup(in) > 1 && folded.empty())
      folded = in;
  }
  if (!merged.empty())
    return {2,
            "merged into '" + merged + "', which " + label +
                " reads instead (the optimizer merges initializers of equal value: they would "
                "train as one)",
            name};
  if (!folded.empty())
    return {1, "folded into the constant '" + folded + "' that " + label + " reads", name};
  return {};
}

/// A node whose FX node read `param` (an initializer of `size` elements) but
/// which reads one of the optimizer's constants of that size instead, where
/// no other parameter its FX node read is `missing` (the constant would be
/// theirs).
std::optional<Whereabouts> foldedCopy(const SignatureInput &param, int64_t size,
                                      const onnx::GraphProto &graph,
                                      ArrayRef<llvm::StringSet<>> reads,
                                      const llvm::StringSet<> &missing,
                                      const llvm::StringMap<int64_t> &lifted) {
  for (auto [idx, node] : llvm::enumerate(graph.node())) {
    if (!reads[idx].contains(param.name) || llvm::is_contained(node.input(), param.target) ||
        llvm::any_of(reads[idx].keys(), [&](StringRef value) { return missing.contains(value); }))
      continue;
    for (const std::string &in : node.input())
      if (lifted.lookup(in) == size) {
        std::string name = labelOf(node, static_cast<int>(idx));
        return Whereabouts{1,
                           "a copy folded into the constant '" + in + "' that " +
                               node.op_type() + " '" + name + "' reads, while other nodes read '" +
                               param.target + "' (a tied weight: the two would train apart)",
                           name};
      }
  }
  return std::nullopt;
}

std::string quotedList(ArrayRef<const SignatureInput *> params, size_t most) {
  std::string text;
  for (auto [i, param] : llvm::enumerate(params)) {
    if (i == most) {
      text += " and " + std::to_string(params.size() - most) + " more";
      break;
    }
    text += (i ? ", '" : "'") + param->target + "'";
  }
  return text;
}

/// The most parameters or nodes an error of the two graph checks names.
constexpr size_t kMostListed = 8;

/// What the two graph checks advise for inference.
constexpr const char *kInferenceTakesIt =
    "(for inference, mgsc --inference and mgs-import-onnx --inference take this graph)";

/// Attaches a note at the node of each of `count` items (noteOf(i): the
/// node's name and the text), the first `most` of them, then "and N more
/// NOUN so" at the file.
template <typename NoteOf>
void attachNodeNotes(InFlightDiagnostic &diag, Location fileLoc, size_t count, size_t most,
                     StringRef noun, NoteOf noteOf) {
  for (size_t i = 0; i < count; ++i) {
    if (i == most) {
      diag.attachNote(fileLoc) << "and " << count - most << " more " << noun << " so";
      break;
    }
    auto [node, text] = noteOf(i);
    diag.attachNote(NameLoc::get(StringAttr::get(fileLoc->getContext(), node), fileLoc)) << text;
  }
}

} // namespace

/// The metadata entry `key` of a node or graph (ONNX 1.16+).
template <typename Proto>
static StringRef metadataEntry(const Proto &proto, StringRef key) {
#ifdef MGS_ONNX_METADATA_PROPS
  for (const auto &prop : proto.metadata_props())
    if (prop.key() == key)
      return prop.value();
#else
  (void)proto;
  (void)key;
#endif
  return {};
}

StringRef nodeMetadata(const onnx::NodeProto &node, StringRef key) {
  return metadataEntry(node, key);
}

StringRef graphMetadata(const onnx::GraphProto &graph, StringRef key) {
  return metadataEntry(graph, key);
}

std::optional<FxCall> fxCall(const onnx::NodeProto &node) {
  StringRef fx = nodeMetadata(node, kFxNodeKey);
  size_t at = fx.find("target=torch.ops.aten.");
  size_t open = fx.find("args = (");
  if (at == StringRef::npos || open == StringRef::npos)
    return std::nullopt;
  FxCall call;
  std::tie(call.op, call.overload) = fx.drop_front(at + strlen("target=torch.ops.aten."))
                                         .take_until([](char c) { return c == ']'; })
                                         .split('.');
  fx.drop_front(open + strlen("args = ("))
      .take_until([](char c) { return c == ')'; })
      .split(call.args, ',');
  for (StringRef &arg : call.args)
    arg = arg.trim();
  return call;
}

bool exportedBatchNormTraining(const onnx::NodeProto &node) {
  // Training is the sixth argument of each such op (%in, %p_bn_weight,
  // %p_bn_bias, %b_bn_running_mean, %b_bn_running_var, True, 0.1, 1e-05),
  // the fourth of _native_batch_norm_legit.no_stats, which has no running
  // statistics.
  std::optional<FxCall> call = fxCall(node);
  if (!call || !llvm::is_contained({"_native_batch_norm_legit_functional",
                                    "_native_batch_norm_legit", "native_batch_norm", "batch_norm"},
                                   call->op))
    return false;
  size_t training = call->overload == "no_stats" ? 3 : 5;
  return call->args.size() > training && call->args[training] == "True";
}

LogicalResult checkBufferMutations(const onnx::GraphProto &graph, Location fileLoc) {
  // What mgs updates itself: a BatchNorm's running statistics (inputs 3
  // and 4) and their batch count.
  llvm::StringSet<> statistics;
  for (const auto &node : graph.node())
    if (node.op_type() == "BatchNormalization")
      for (int i = 3; i < 5 && i < node.input_size(); ++i)
        statistics.insert(node.input(i));
  SmallVector<StringRef> unsupported;
  for (auto [name, rest] : signatureSection(graph, "# outputs")) {
    StringRef target = entryTarget(rest);
    if (rest.starts_with("BUFFER_MUTATION ") && !target.empty() && !statistics.contains(target) &&
        !target.ends_with("num_batches_tracked"))
      unsupported.push_back(target);
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag = emitError(fileLoc);
  diag << "the model updates " << unsupported.size() << " buffer(s) in its forward ('";
  llvm::interleave(unsupported, diag, "', '");
  diag << "'; torch.export's signature: BUFFER_MUTATION), as spectral normalization's power "
          "iteration does under no_grad: mgs updates only BatchNorm's running statistics, and "
          "would differentiate through the update and keep the buffers as exported, so the "
          "model would not train as in PyTorch";
  return failure();
}

LogicalResult checkExportedParameters(const onnx::GraphProto &graph, Location fileLoc) {
  std::optional<std::vector<SignatureInput>> signature = readSignature(graph);
  if (!signature)
    return success();
  llvm::StringMap<int64_t> inits; // their element counts
  for (const auto &init : graph.initializer())
    inits[init.name()] = llvm::product_of(init.dims());
  llvm::StringMap<const SignatureInput *> byTarget;
  for (const SignatureInput &input : *signature)
    if (isModuleState(input.kind))
      byTarget[input.target] = &input;
  // The optimizer's constants (FLOAT initializers the signature does not
  // name; written as Constant nodes when it is off), their element counts.
  llvm::StringMap<int64_t> lifted;
  std::string firstConstant;
  for (const auto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT && !byTarget.count(init.name())) {
      lifted[init.name()] = inits.lookup(init.name());
      if (firstConstant.empty())
        firstConstant = init.name();
    }

  // Each parameter that is no initializer: where the nodes whose FX nodes
  // read it say it went (the surest of their answers).
  SmallVector<llvm::StringSet<>> reads;
  for (const auto &node : graph.node())
    reads.push_back(fxValues(nodeMetadata(node, kFxNodeKey)));
  llvm::StringSet<> missing; // their FX names
  for (const SignatureInput &input : *signature)
    if (input.kind == "PARAMETER" && !inits.contains(input.target))
      missing.insert(input.name);
  int64_t parameters = 0;
  SmallVector<const SignatureInput *> lost, absent;
  SmallVector<Whereabouts> where;
  for (const SignatureInput &param : *signature) {
    if (param.kind != "PARAMETER")
      continue;
    ++parameters;
    if (!missing.contains(param.name)) {
      // A tied weight of which one use reads a folded copy (a transpose the
      // optimizer computed): the copy would train apart from the rest.
      if (std::optional<Whereabouts> copy =
              foldedCopy(param, inits.lookup(param.target), graph, reads, missing, lifted)) {
        lost.push_back(&param);
        where.push_back(std::move(*copy));
      }
      continue;
    }
    Whereabouts best;
    for (auto [idx, node] : llvm::enumerate(graph.node()))
      if (reads[idx].contains(param.name)) {
        Whereabouts here =
            whereItWent(node, static_cast<int>(idx), param, reads[idx], byTarget, lifted);
        if (here.rank > best.rank)
          best = std::move(here);
      }
    if (best.rank) {
      lost.push_back(&param);
      where.push_back(std::move(best));
    } else {
      absent.push_back(&param);
    }
  }
  // Without node metadata: the optimizer's constants beside absent
  // parameters show it ran.
  if (lost.empty() && (absent.empty() || firstConstant.empty()))
    return success(); // the absent ones: unused by forward, or tied to one kept

  InFlightDiagnostic diag = emitError(fileLoc);
  diag << "this graph is not the model's training graph: PyTorch's exporter optimized it "
          "(torch.onnx.export's optimize=True, its default)";
  if (!lost.empty())
    diag << ", which removed, merged or folded " << lost.size() << " of the model's "
         << parameters << " parameters: they would not train as in PyTorch: "
         << quotedList(lost, kMostListed);
  if (!absent.empty()) {
    if (lost.empty())
      diag << ", and " << absent.size() << " of the model's " << parameters << " parameters";
    else
      diag << "; " << absent.size() << " more";
    diag << (absent.size() == 1 ? " is" : " are")
         << " not in it (unused by forward, tied to another, or folded away";
    if (!firstConstant.empty())
      diag << ": the graph holds the optimizer's constants, such as '" << firstConstant << "'";
    diag << "): " << quotedList(absent, kMostListed);
  }
  diag << "; export with torch.onnx.export(..., optimize=False), or with dynamo=False, "
          "training=torch.onnx.TrainingMode.TRAINING "
       << kInferenceTakesIt;
  attachNodeNotes(diag, fileLoc, lost.size(), kMostListed, "parameters", [&](size_t i) {
    return std::pair{StringRef(where[i].node),
                     "parameter '" + lost[i]->target + "': " + where[i].text};
  });
  return diag;
}

LogicalResult checkEvalModeExport(const onnx::ModelProto &model, Location fileLoc) {
  if (model.producer_name() != "pytorch")
    return success();
  const onnx::GraphProto &graph = model.graph();
  llvm::StringSet<> folded; // FLOAT initializers the exporter named after their reader
  for (const auto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT &&
        StringRef(init.name()).starts_with("onnx::Conv_"))
      folded.insert(init.name());
  if (folded.empty())
    return success();
  // The convolutions whose weight or bias is one of them.
  SmallVector<std::pair<const onnx::NodeProto *, std::string>> convs;
  for (const auto &node : graph.node()) {
    if (node.op_type() != "Conv" || !node.domain().empty())
      continue;
    for (int i = 1; i < std::min(node.input_size(), 3); ++i)
      if (folded.contains(node.input(i))) {
        convs.push_back({&node, node.input(i)});
        break;
      }
  }
  if (convs.empty())
    return success();
  // A training-mode export (BatchNorm with training_mode, or Dropout) folds
  // only with constant folding on: a weight computed from parameters
  // (weight_norm, weight standardization), whose parameters are lost too.
  bool trainingMode = llvm::any_of(graph.node(), [](const onnx::NodeProto &n) {
    if (n.op_type() == "Dropout")
      return true;
    if (n.op_type() != "BatchNormalization")
      return false;
    return intAttribute(n, "training_mode", 0) != 0;
  });
  InFlightDiagnostic diag = emitError(fileLoc);
  diag << (trainingMode ? "PyTorch's exporter"
                        : "this graph is the model's evaluation form, not its training graph: "
                          "PyTorch's TorchScript exporter")
       << " folded the weights of " << convs.size()
       << (convs.size() == 1 ? " convolution" : " convolutions")
       << " into constants of its own naming (";
  for (auto [i, conv] : llvm::enumerate(convs)) {
    if (i == kMostListed) {
      diag << ", ...";
      break;
    }
    diag << (i ? ", '" : "'") << conv.second << "'";
  }
  if (trainingMode)
    diag << "): constant folding (torch.onnx.export's do_constant_folding=True, its default) "
            "computed them from the parameters they are made of (weight_norm, weight "
            "standardization), which would then not train; export with "
            "do_constant_folding=False ";
  else
    diag << "), as it does in evaluation mode (training=torch.onnx.TrainingMode.EVAL, "
            "torch.onnx.export's default): each BatchNorm fused into the convolution before "
            "it, dropout left out. Those parameters would not train as in PyTorch; export with "
            "torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, "
            "do_constant_folding=False) ";
  diag << kInferenceTakesIt;
  attachNodeNotes(diag, fileLoc, convs.size(), kMostListed, "convolutions", [&](size_t i) {
    const auto &[node, init] = convs[i];
    return std::pair{StringRef(node->name()),
                     "Conv '" + node->name() + "' reads the folded '" + init + "'"};
  });
  return diag;
}

ExportedNonParameters exportedNonParameters(const onnx::GraphProto &graph) {
  ExportedNonParameters result;
  std::optional<std::vector<SignatureInput>> signature = readSignature(graph);
  if (!signature)
    return result;
  llvm::StringSet<> state;
  for (const SignatureInput &input : *signature) {
    if (!isModuleState(input.kind))
      continue;
    state.insert(input.target);
    if (input.kind != "PARAMETER")
      result.buffers.insert(input.target);
  }
  for (const auto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT && !state.contains(init.name()))
      result.constants.insert(init.name());
  return result;
}

} // namespace mgs::onnx_import
