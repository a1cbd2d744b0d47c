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

size_t valueBytes(bool half) { return half ? sizeof(_Float16) : sizeof(float); }

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
  s.gather = false;
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
                                         size_t k, bool half, float *recvValues,
                                         int32_t *recvIndices) {
  Slot &s = slots[slot];
  const size_t P = static_cast<size_t>(host.size()), valuesBytes = k * valueBytes(half),
               message = valuesBytes + k * sizeof(int32_t);
  // send: this rank's message; recv: every rank's; out: the float values
  // copied before the narrowing, then the unpacked results.
  for (auto [b, bytes] : {std::pair{&s.send, message}, std::pair{&s.recv, message * P},
                          std::pair{&s.out, P * k * (sizeof(float) + sizeof(int32_t))}})
    if (Status st = ensure("allgather", *b, bytes); !st.ok())
      return st;
  char *send = static_cast<char *>(s.send.data);
  if (k) {
    std::vector<StagedCopy> copies = {{half ? s.out.data : send, values, k * sizeof(float)},
                                      {send + valuesBytes, indices, k * sizeof(int32_t)}};
    if (Status st = engine.toHost(slot, copies, true); !st.ok())
      return named("allgather", st);
  }
  s.gather = true;
  s.recvValues = recvValues;
  s.recvIndices = recvIndices;
  s.k = k;
  s.half = half;
  auto job = std::make_shared<Job>();
  job->what = "allgather";
  job->tag = slot;
  const float *wide = static_cast<const float *>(s.out.data);
  job->start = [this, send, wide, k, half, message, recv = s.recv.data] {
    if (half) {
      _Float16 *h = reinterpret_cast<_Float16 *>(send);
      for (size_t j = 0; j < k; ++j)
        h[j] = static_cast<_Float16>(wide[j]); // rounds to nearest even
    }
    return host.iallGather(send, message, recv);
  };
  s.job = job;
  submit(std::move(job));
  return Status::success();
}

Status StagedCollectives::wait(int slot) {
  Slot &s = slots[slot];
  std::shared_ptr<Job> job = std::move(s.job);
  if (Status st = finish(*job); !st.ok())
    return st;
  if (!s.gather) {
    if (!s.count)
      return Status::success();
    return named("allreduce",
                 engine.toDevice(slot, {{s.device, s.send.data, s.count * sizeof(float)}}));
  }
  if (!s.k)
    return Status::success();
  const size_t k = s.k, P = static_cast<size_t>(host.size()), valuesBytes = k * valueBytes(s.half),
               message = valuesBytes + k * sizeof(int32_t);
  float *values = static_cast<float *>(s.out.data);
  char *indices = static_cast<char *>(s.out.data) + P * k * sizeof(float);
  for (size_t r = 0; r < P; ++r) {
    const char *msg = static_cast<const char *>(s.recv.data) + message * r;
    if (s.half) {
      const _Float16 *h = reinterpret_cast<const _Float16 *>(msg);
      for (size_t j = 0; j < k; ++j)
        values[k * r + j] = static_cast<float>(h[j]);
    } else {
      std::memcpy(values + k * r, msg, valuesBytes);
    }
    std::memcpy(indices + k * r * sizeof(int32_t), msg + valuesBytes, k * sizeof(int32_t));
  }
  return named("allgather",
               engine.toDevice(slot, {{s.recvValues, values, P * k * sizeof(float)},
                                      {s.recvIndices, indices, P * k * sizeof(int32_t)}}));
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
