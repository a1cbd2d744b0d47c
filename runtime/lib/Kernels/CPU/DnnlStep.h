//===- DnnlStep.h - A oneDNN primitive run on the caller's layouts -*- C++ -*-===//
//
// A primitive with its arguments, each the caller's memory in its own layout
// and, where the primitive chose another (format `any`: oneDNN's blocked
// layouts), an internal memory in that one with the reorders to and from it.
// Conv.cpp runs its convolutions so on the caller's NCHW buffers; the layout
// benchmark (runtime/bench/ConvLayoutBench.cpp) times the same machinery on
// channels-last and blocked buffers. Only oneDNN here: a benchmark may
// include it.
//
//===----------------------------------------------------------------------===//

#ifndef MGSRT_KERNELS_CPU_DNNLSTEP_H
#define MGSRT_KERNELS_CPU_DNNLSTEP_H

#include <dnnl.hpp>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace mgs::rt::cpu {

/// One primitive argument: the caller's memory (its handle set per call, or
/// owned: allocated here, zeroed) and, when the primitive wants another
/// layout, an internal memory in that layout and the reorder between them.
struct DnnlArg {
  int dnnlArg = 0;
  bool output = false;
  dnnl::memory user, prim;
  dnnl::reorder reorder;
  bool needsReorder = false;

  void init(int arg, bool isOutput, const dnnl::memory::desc &userMd,
            const dnnl::memory::desc &primMd, const dnnl::engine &eng, bool owned = false) {
    dnnlArg = arg;
    output = isOutput;
    if (owned) {
      user = dnnl::memory(userMd, eng);
      std::memset(user.get_data_handle(), 0, userMd.get_size());
    } else {
      user = dnnl::memory(userMd, eng, DNNL_MEMORY_NONE);
    }
    needsReorder = !(userMd == primMd);
    if (needsReorder) {
      prim = dnnl::memory(primMd, eng);
      reorder = isOutput ? dnnl::reorder(prim, user) : dnnl::reorder(user, prim);
    } else {
      prim = user;
    }
  }
};

/// A primitive with its arguments: the inputs reordered in, the primitive,
/// the outputs reordered out.
struct DnnlStep {
  dnnl::primitive prim;
  std::string impl; // oneDNN's implementation (its impl_info_str), where asked
  std::vector<DnnlArg> args;
  std::unordered_map<int, dnnl::memory> argMap;

  /// After args are set: the primitive's argument map.
  void finish() {
    for (const DnnlArg &a : args)
      argMap[a.dnnlArg] = a.prim;
  }

  /// On the arguments' memories as they are (owned, or handles set).
  void run(dnnl::stream &strm) {
    for (DnnlArg &a : args)
      if (a.needsReorder && !a.output)
        a.reorder.execute(strm, a.user, a.prim);
    prim.execute(strm, argMap);
    for (DnnlArg &a : args)
      if (a.needsReorder && a.output)
        a.reorder.execute(strm, a.prim, a.user);
    strm.wait();
  }

  /// `ptrs[i]` is the caller's buffer for args[i].
  void run(dnnl::stream &strm, void *const *ptrs) {
    for (size_t i = 0; i < args.size(); ++i)
      args[i].user.set_data_handle(ptrs[i]);
    run(strm);
  }
};

} // namespace mgs::rt::cpu

#endif // MGSRT_KERNELS_CPU_DNNLSTEP_H
