//===- StagedCollectives.cpp - Device collectives over a host backend -----===//
//
// StagedCollectives.h. The staging thread starts the host collectives in the
// order the starts were made (every rank starts the same collectives in the
// same order, as the backends require), each once its copy to host has
// completed. A copy that failed still starts its collective, so the other
// ranks do not wait for it forever; the wait reports the failure.
//
//===----------------------------------------------------------------------===//

#include "Comm/StagedCollectives.h"

#include <cstring>

namespace mgs::rt {

namespace {

Status named(const char *what, const Status &s) {
  return s.ok() ? s : Status::error(s.code, std::string(what) + ": " + s.message);
}

} // namespace

StagedCollectives::StagedCollectives(CommBackend &host, CopyEngine &engine)
    : host(host), engine(engine), staging([this] { stagingLoop(); }) {}

StagedCollectives::~StagedCollectives() {
  for (Slot &s : slots)
    if (s.job)
      finish(*s.job);
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_all();
  staging.join();
  engine.synchronize();
  for (Slot &s : slots)
    for (HostBuffer *b : {&s.send, &s.recv, &s.out})
      if (b->data)
        engine.freeHost(b->data);
  if (broadcastBuffer.data)
    engine.freeHost(broadcastBuffer.data);
}

void StagedCollectives::stagingLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      job = std::move(queue.front());
      queue.pop_front();
    }
    Status copied = engine.waitToHost(job->tag);
    CommRequestPtr request = job->start();
    {
      std::lock_guard<std::mutex> lock(mu);
      job->copyStatus = std::move(copied);
      job->request = std::move(request);
      job->started = true;
    }
    cv.notify_all();
  }
}

void StagedCollectives::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(job));
  }
  cv.notify_all();
}

Status StagedCollectives::finish(Job &job) {
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return job.started; });
  }
  Status s = job.request->wait();
  if (!job.copyStatus.ok())
    return named(job.what, job.copyStatus);
  return named(job.what, s);
}

Status StagedCollectives::ensure(const char *what, HostBuffer &b, size_t bytes) {
  if (b.bytes >= bytes)
    return Status::success();
  if (b.data) {
    // A copy back from it may still be queued.
    if (Status s = engine.synchronize(); !s.ok())
      return named(what, s);
    engine.freeHost(b.data);
    b = HostBuffer{};
  }
  if (Status s = engine.allocHost(bytes, &b.data); !s.ok()) {
    b.data = nullptr;
    return named(what, s);
  }
  b.bytes = bytes;
  return Status::success();
}

Status StagedCollectives::allReduceStart(int slot, float *data, size_t n) {
  Slot &s = slots[slot];
  const size_t bytes = n * sizeof(float);
  if (Status st = ensure("allreduce", s.send, bytes); !st.ok())
    return st;
  if (n)
    if (Status st = engine.toHost(slot, {{s.send.data, data, bytes}}, false); !st.ok())
      return named("allreduce", st);
  s.kind = Slot::Kind::AllReduce;
  s.device = data;
  s.count = n;
  auto job = std::make_shared<Job>();
  job->what = "allreduce";
  job->tag = slot;
  float *buf = static_cast<float *>(s.send.data);
  job->start = [this, buf, n] { return host.iallReduce(buf, n, ReduceOp::Average); };
  s.job = job;
  submit(std::move(job));
  return Status::success();
}

Status StagedCollectives::allGatherStart(int slot, const float *values, const int32_t *indices,
                                         size_t k, WireValues wire, float *recvValues,
                                         int32_t *recvIndices) {
  Slot &s = slots[slot];
  const size_t P = static_cast<size_t>(host.size()), valuesBytes = k * wireBytes(wire),
               message = valuesBytes + k * sizeof(int32_t);
  // send: this rank's message; recv: every rank's; out: the float values
  // copied before the narrowing, then the unpacked results.
  for (auto [b, bytes] : {std::pair{&s.send, message}, std::pair{&s.recv, message * P},
                          std::pair{&s.out, P * k * (sizeof(float) + sizeof(int32_t))}})
    if (Status st = ensure("allgather", *b, bytes); !st.ok())
      return st;
  char *send = static_cast<char *>(s.send.data);
  if (k) {
    const bool narrow = wire != WireValues::F32; // packed on the host before sending
    std::vector<StagedCopy> copies = {{narrow ? s.out.data : send, values, k * sizeof(float)},
                                      {send + valuesBytes, indices, k * sizeof(int32_t)}};
    if (Status st = engine.toHost(slot, copies, true); !st.ok())
      return named("allgather", st);
  }
  s.kind = Slot::Kind::AllGather;
  s.recvValues = recvValues;
  s.recvIndices = recvIndices;
  s.k = k;
  s.wire = wire;
  auto job = std::make_shared<Job>();
  job->what = "allgather";
  job->tag = slot;
  const float *wide = static_cast<const float *>(s.out.data);
  job->start = [this, send, wide, k, wire, message, recv = s.recv.data] {
    if (wire != WireValues::F32)
      packValues(wire, wide, send, k);
    return host.iallGather(send, message, recv);
  };
  s.job = job;
  submit(std::move(job));
  return Status::success();
}

Status StagedCollectives::stageEntries(const char *what, int slot, const float *values,
                                       const int32_t *indices, size_t k) {
  char *send = static_cast<char *>(slots[slot].send.data);
  if (!k)
    return Status::success();
  return named(what, engine.toHost(slot,
                                   {{send, values, k * sizeof(float)},
                                    {send + k * sizeof(float), indices, k * sizeof(int32_t)}},
                                   true));
}

void StagedCollectives::submitTask(int slot, const char *what, std::function<Status()> task) {
  auto job = std::make_shared<Job>();
  job->what = what;
  job->tag = slot;
  job->start = [this, what, task = std::move(task)] { return host.startTask(what, task); };
  slots[slot].job = job;
  submit(std::move(job));
}

namespace {
/// Runs `collective` on the rank's `count` staged entries, checking their
/// indices against [0, n) first (they were on the device when the collective
/// started). With a bad one the rank still takes part, with no entries, so
/// the other ranks finish, and the bad index's error is the result.
template <typename Collective>
Status withCheckedIndices(const int32_t *indices, int64_t count, int64_t n,
                          Collective collective) {
  if (Status bad = checkSparseIndices(indices, count, n); !bad.ok()) {
    collective(int64_t{0});
    return bad;
  }
  return collective(count);
}
} // namespace

Status StagedCollectives::gtopkStart(int slot, const float *values, const int32_t *indices,
                                     size_t k, size_t n, float *residual, float *outValues,
                                     int32_t *outIndices) {
  Slot &s = slots[slot];
  const size_t entries = k * (sizeof(float) + sizeof(int32_t));
  // send: the entries as sent; out: the results, then the dropped entries.
  for (HostBuffer *b : {&s.send, &s.out})
    if (Status st = ensure("gtopk", *b, b == &s.send ? entries : 2 * entries); !st.ok())
      return st;
  if (Status st = stageEntries("gtopk", slot, values, indices, k); !st.ok())
    return st;
  s.kind = Slot::Kind::GTopK;
  s.k = k;
  s.residual = residual;
  s.recvValues = outValues;
  s.recvIndices = outIndices;
  s.gtopk = std::make_shared<GlobalTopKResult>();
  const float *v = static_cast<const float *>(s.send.data);
  const int32_t *ix = reinterpret_cast<const int32_t *>(v + k);
  const int64_t count = static_cast<int64_t>(k), size = static_cast<int64_t>(n);
  submitTask(slot, "gtopk", [this, v, ix, count, size, result = s.gtopk] {
    return withCheckedIndices(ix, count, size, [&](int64_t entries) {
      return globalTopK(host, count, v, ix, entries, *result);
    });
  });
  return Status::success();
}

Status StagedCollectives::sparseAllReduceStart(int slot, const float *values,
                                               const int32_t *indices, size_t k, size_t n,
                                               bool balanced, float *out) {
  Slot &s = slots[slot];
  // send: the entries as sent; out: the dense result.
  if (Status st = ensure("sparse_allreduce", s.send, k * (sizeof(float) + sizeof(int32_t)));
      !st.ok())
    return st;
  if (Status st = ensure("sparse_allreduce", s.out, n * sizeof(float)); !st.ok())
    return st;
  if (Status st = stageEntries("sparse_allreduce", slot, values, indices, k); !st.ok())
    return st;
  s.kind = Slot::Kind::SparseAllReduce;
  s.device = out;
  s.count = n;
  const float *v = static_cast<const float *>(s.send.data);
  const int32_t *ix = reinterpret_cast<const int32_t *>(v + k);
  const int64_t count = static_cast<int64_t>(k), size = static_cast<int64_t>(n);
  float *dense = static_cast<float *>(s.out.data);
  submitTask(slot, "sparse_allreduce", [this, v, ix, count, size, balanced, dense] {
    return withCheckedIndices(ix, count, size, [&](int64_t entries) {
      return sparseAllReduce(host, size, v, ix, entries, balanced, /*average=*/true, dense);
    });
  });
  return Status::success();
}

Status StagedCollectives::wait(int slot) {
  Slot &s = slots[slot];
  std::shared_ptr<Job> job = std::move(s.job);
  std::shared_ptr<GlobalTopKResult> gtopk = std::move(s.gtopk);
  if (Status st = finish(*job); !st.ok())
    return st;
  switch (s.kind) {
  case Slot::Kind::AllReduce:
    if (!s.count)
      return Status::success();
    return named("allreduce",
                 engine.toDevice(slot, {{s.device, s.send.data, s.count * sizeof(float)}}));
  case Slot::Kind::SparseAllReduce:
    if (!s.count)
      return Status::success();
    return named("sparse_allreduce",
                 engine.toDevice(slot, {{s.device, s.out.data, s.count * sizeof(float)}}));
  case Slot::Kind::GTopK:
    return finishGTopK(slot, *gtopk);
  case Slot::Kind::AllGather:
    break;
  }
  if (!s.k)
    return Status::success();
  const size_t k = s.k, P = static_cast<size_t>(host.size()), valuesBytes = k * wireBytes(s.wire),
               message = valuesBytes + k * sizeof(int32_t);
  float *values = static_cast<float *>(s.out.data);
  char *indices = static_cast<char *>(s.out.data) + P * k * sizeof(float);
  for (size_t r = 0; r < P; ++r) {
    const char *msg = static_cast<const char *>(s.recv.data) + message * r;
    unpackValues(s.wire, msg, values + k * r, k);
    std::memcpy(indices + k * r * sizeof(int32_t), msg + valuesBytes, k * sizeof(int32_t));
  }
  return named("allgather",
               engine.toDevice(slot, {{s.recvValues, values, P * k * sizeof(float)},
                                      {s.recvIndices, indices, P * k * sizeof(int32_t)}}));
}

Status StagedCollectives::finishGTopK(int slot, const GlobalTopKResult &result) {
  Slot &s = slots[slot];
  const size_t k = s.k;
  if (!k)
    return Status::success();
  // out: [values k][indices k][dropped indices <= k][dropped values <= k].
  float *values = static_cast<float *>(s.out.data);
  int32_t *indices = reinterpret_cast<int32_t *>(values + k);
  int32_t *droppedIndices = indices + k;
  float *droppedValues = reinterpret_cast<float *>(droppedIndices + k);
  const float *sent = static_cast<const float *>(s.send.data); // [values k][indices k]
  writeGlobalTopK(result, host.size(), static_cast<int64_t>(k), values, indices);
  const int64_t dropped =
      droppedEntries(result, sent, reinterpret_cast<const int32_t *>(sent + k),
                     static_cast<int64_t>(k), droppedIndices, droppedValues);
  if (Status st = engine.toDevice(slot, {{s.recvValues, values, k * sizeof(float)},
                                         {s.recvIndices, indices, k * sizeof(int32_t)}});
      !st.ok())
    return named("gtopk", st);
  if (!dropped)
    return Status::success();
  return named("gtopk", engine.addToDevice(slot, s.residual, droppedIndices, droppedValues,
                                           static_cast<size_t>(dropped)));
}

Status StagedCollectives::broadcast(void *data, size_t bytes, int root) {
  if (Status st = ensure("broadcast", broadcastBuffer, bytes); !st.ok())
    return st;
  void *buf = broadcastBuffer.data;
  if (bytes)
    if (Status st = engine.toHost(kBroadcastTag, {{buf, data, bytes}}, false); !st.ok())
      return named("broadcast", st);
  auto job = std::make_shared<Job>();
  job->what = "broadcast";
  job->tag = kBroadcastTag;
  job->start = [this, buf, bytes, root] { return host.ibroadcast(buf, bytes, root); };
  submit(job);
  if (Status st = finish(*job); !st.ok() || !bytes)
    return st;
  return named("broadcast", engine.toDevice(kBroadcastTag, {{data, buf, bytes}}));
}

} // namespace mgs::rt
