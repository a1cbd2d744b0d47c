//===- Trace.cpp - The --trace timeline -----------------------------------===//
//
// Writes the context's recorded kernels, collectives and marks as
// chrome://tracing JSON.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "Driver.h"
#include "FileIO.h"

#include <cstdio>
#include <map>

namespace mgs::rt::driver {

// --trace: the recorded timeline as chrome://tracing JSON (one process per
// rank, kernels on thread 0, collectives on thread 1, the sparse all-reduce's
// phases on the communication thread on thread 2, marks as instants).
int Driver::writeTrace(int64_t iterations) {
  const mgsrt_trace_event_t *ev = nullptr;
  const int64_t n = mgsrt_ctx_trace(ctx, &ev);
  std::map<int64_t, std::string> markName(m.marks.begin(), m.marks.end());
  markName[-1] = "backprop starts";
  const double t0 = n ? ev[0].start : 0;
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": "
                "{\"name\": \"rank %d\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": "
                "{\"name\": \"kernels\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": "
                "{\"name\": \"collectives (start to completion)\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 2, \"args\": "
                "{\"name\": \"collective phases (communication thread)\"}}",
                rank, rank, rank, rank, rank);
  json += line;
  for (int64_t i = 0; i < n; ++i) {
    const mgsrt_trace_event_t &e = ev[i];
    const double ts = (e.start - t0) * 1e6, dur = (e.end - e.start) * 1e6;
    if (e.kind == MGSRT_TRACE_MARK) {
      auto it = markName.find(e.arg);
      std::string name = it == markName.end() ? "mark " + std::to_string(e.arg)
                                              : (e.arg < 0 ? it->second : "gradient " + it->second);
      json += ",\n{\"name\": \"" + jsonEscape(name) + "\"";
      std::snprintf(line, sizeof line,
                    ", \"ph\": \"i\", \"s\": \"t\", \"ts\": %.3f, \"pid\": %d, \"tid\": 0}", ts,
                    rank);
    } else if (e.kind == MGSRT_TRACE_PHASE) {
      std::snprintf(line, sizeof line,
                    ",\n{\"name\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                    "\"pid\": %d, \"tid\": 2, \"cat\": \"comm\", \"args\": {\"bytes_received\": "
                    "%lld}}",
                    e.name, ts, dur, rank, static_cast<long long>(e.arg));
    } else {
      const bool coll = e.kind == MGSRT_TRACE_COLLECTIVE;
      std::snprintf(line, sizeof line,
                    ",\n{\"name\": \"%s%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                    "\"pid\": %d, \"tid\": %d%s}",
                    e.name, coll ? (" slot " + std::to_string(e.arg)).c_str() : "", ts, dur,
                    rank, coll ? 1 : 0, coll ? ", \"cat\": \"comm\"" : "");
    }
    json += line;
  }
  json += "\n]}\n";
  mgsrt_ctx_record_trace(ctx, 0);
  std::string path = rankPath(o.trace);
  AtomicWriter w;
  w.open(path);
  w.write(json.data(), json.size());
  if (Status s = w.commit(); !s.ok())
    return error(s);
  traceWritten = true;
  std::printf("wrote the timeline of %lld iterations (%lld events) to %s%s\n",
              static_cast<long long>(iterations), static_cast<long long>(n), path.c_str(),
              workers > 1 ? " (rank r > 0: <file>.rank<r>)" : "");
  std::fflush(stdout);
  return 0;
}

} // namespace mgs::rt::driver
