// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small generated torch.profiler (Kineto) traces for tests, written as .json or .json.gz.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QTemporaryDir>
#include <zlib.h>

namespace exposure::testing {

// One rank: a ProfilerStep on the main thread with a forward op launching a GEMM, an autograd backward op on a
// second thread launching a backward kernel, an NCCL kernel on stream 17, a memcpy, thread-name metadata.
inline QByteArray rankTrace(int rank, int worldSize, bool withInfo = true, const QByteArray& extraEvents = {})
{
    QByteArray info = withInfo ? QByteArray(R"("distributedInfo": {"backend": "nccl", "rank": )")
            + QByteArray::number(rank) + R"(, "world_size": )" + QByteArray::number(worldSize) + "},"
                               : QByteArray();
    return "{\n  \"schemaVersion\": 1,\n  " + info + R"json(
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
  {"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "main"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 10, "tid": 10, "ts": 1000.000, "dur": 100.5},
  {"ph": "X", "cat": "cpu_op", "name": "DistributedDataParallel.forward", "pid": 10, "tid": 10, "ts": 1001.250, "dur": 20.0},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1002.001, "dur": 3.0,
   "args": {"External id": 7, "cbid": 211, "correlation": 101}},
  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 10, "tid": 11, "ts": 1030.0, "dur": 30.0},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1031.0, "dur": 2.0,
   "args": {"correlation": 102}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1040.0, "dur": 2.0,
   "args": {"correlation": 103}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1005.123, "dur": 10.0005,
   "args": {"device": 0, "stream": 7, "correlation": 101, "grid": [320, 2, 1], "block": [128, 1, 1],
   "registers per thread": 96, "shared memory": 16384, "blocks per SM": 2.42, "est. achieved occupancy %": 38}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x64_tn", "pid": 0, "tid": 7, "ts": 1035.000, "dur": 20.0,
   "args": {"device": 0, "stream": 7, "correlation": 102}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 17,
   "ts": 1045.0, "dur": 30.0, "args": {"device": 0, "stream": 17, "correlation": 103, "Collective name": "allreduce", "In msg nelems": 1000000,
   "Out msg nelems": 1000000, "Group size": 2, "dtype": "Float", "In split size": "[]", "Process Group Name": "0",
   "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1000.5, "dur": 2.0,
   "args": {"device": 0, "stream": 7, "correlation": 99, "bytes": 4096}},
  {"ph": "s", "id": 101, "pid": 10, "tid": 10, "ts": 1002.001, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "DistributedDataParallel.forward", "pid": 0, "tid": 7, "ts": 1000.0, "dur": 90.0}
  )json" + extraEvents
        + R"json(
  ],
  "traceName": "x"
})json";
}

// The same rank in the schema of PyTorch 1.8 to 1.12 (2021): categories "Operator", "Runtime", "Kernel", "Memcpy",
// "Memset"; GPU tids as "stream 7"; "external id" in lower case; integer microseconds; no distributedInfo and no
// collective arguments (the NCCL kernels of that time are named ncclKernel_<collective>_<algorithm>_<protocol>_...).
// Kernels: GEMM [1005, 1015) and [1035, 1055) us on stream 7, all-reduce [1045, 1075) and send/recv [1090, 1095) us on
// stream 17; the second GEMM and the NCCL kernels carry no device or stream in args (taken from pid and tid).
inline QByteArray rankTrace2021()
{
    return R"json({
  "traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#4", "pid": 10, "tid": "10", "ts": 1000, "dur": 100,
   "args": {"Input dims": [], "external id": 1}},
  {"ph": "X", "cat": "Operator", "name": "DistributedDataParallel.forward", "pid": 10, "tid": "10", "ts": 1001, "dur": 20,
   "args": {"external id": 2}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": "10", "ts": 1002, "dur": 3,
   "args": {"cbid": 211, "correlation": 101, "external id": 2}},
  {"ph": "X", "cat": "Operator", "name": "autograd::engine::evaluate_function: AddmmBackward", "pid": 10, "tid": "11",
   "ts": 1030, "dur": 30, "args": {"external id": 3}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": "11", "ts": 1031, "dur": 2,
   "args": {"cbid": 211, "correlation": 102, "external id": 3}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": "11", "ts": 1040, "dur": 2,
   "args": {"cbid": 211, "correlation": 103, "external id": 3}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": "11", "ts": 1088, "dur": 1,
   "args": {"cbid": 211, "correlation": 105, "external id": 4}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemsetAsync", "pid": 10, "tid": "10", "ts": 1078, "dur": 1,
   "args": {"cbid": 51, "correlation": 104, "external id": 5}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7", "ts": 1005, "dur": 10,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 101, "external id": 2,
   "registers per thread": 126, "shared memory": 8192, "blocks per SM": 2.5, "warps per SM": 20.0,
   "grid": [80, 1, 1], "block": [256, 1, 1], "theoretical occupancy %": 12}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_64x64_tn", "pid": 0, "tid": "stream 7", "ts": 1035, "dur": 20,
   "args": {"correlation": 102, "external id": 3}},
  {"ph": "X", "cat": "Kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0,
   "tid": "stream 17", "ts": 1045, "dur": 30, "args": {"correlation": 103, "external id": 3}},
  {"ph": "X", "cat": "Kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "pid": 0,
   "tid": "stream 17", "ts": 1090, "dur": 5, "args": {"correlation": 105, "external id": 4}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7", "ts": 1000,
   "dur": 2, "args": {"device": 0, "context": 1, "stream": 7, "correlation": 99, "external id": 0, "bytes": 4096,
   "memory bandwidth (GB/s)": 2.048}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 1080, "dur": 1,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 104, "external id": 5, "bytes": 512}},
  {"ph": "M", "name": "thread_name", "pid": 10, "tid": "10", "args": {"name": "python"}},
  {"ph": "f", "id": 101, "pid": 0, "tid": "stream 7", "ts": 1005, "cat": "async", "name": "launch", "bp": "e"}
  ]
})json";
}

// One rank of a two-stage pipeline's send/receive pairs: NCCL SendRecv kernels of process group "3 (mesh_pp)" (ranks
// [0, 1]) with torch.profiler's arguments ("Seq", and "Dst Rank" / "Src Rank" where `peerRecorded`), on streams 20
// and 21 (lanes in that order after the CPU thread), times in us from the step region at 0:
//   rank 0 sends     [100, 200) Seq 1 (stream 20), [150, 260) Seq 2 (stream 21)
//   rank 1 receives  [130, 261) Seq 1 (stream 20), [120, 201) Seq 2 (stream 21)
// By end time the first send would meet the second receive; by identity each meets its own: pair 1 waits 30 us on
// rank 0 (transfer 70 and 131 us), pair 2 30 us on rank 1 (transfer 110 and 51 us).
inline QByteArray pipelinePairRank(int rank, bool peerRecorded = true)
{
    struct Op
    {
        int stream, ts, dur, seq;
    };
    const Op ops[2][2] = { { { 20, 100, 100, 1 }, { 21, 150, 110, 2 } }, { { 20, 130, 131, 1 }, { 21, 120, 81, 2 } } };
    const bool sends = rank == 0;
    QByteArray events
        = R"json({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000})json";
    for (const Op& op : ops[rank == 0 ? 0 : 1]) {
        events += ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                  "\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\", "
                  "\"pid\": 0, \"tid\": "
            + QByteArray::number(op.stream) + ", \"ts\": " + QByteArray::number(op.ts) + ", \"dur\": "
            + QByteArray::number(op.dur) + ", \"args\": {\"device\": 0, \"stream\": " + QByteArray::number(op.stream)
            + ", \"Collective name\": \"" + (sends ? "send" : "recv")
            + "\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, \"dtype\": \"Float\", \"Group size\": 2, "
              "\"Process Group Name\": \"3\", \"Process Group Description\": \"mesh_pp\", "
              "\"Process Group Ranks\": \"[0, 1]\", \"Seq\": "
            + QByteArray::number(op.seq)
            + (peerRecorded ? QByteArray(sends ? ", \"Dst Rank\": 1" : ", \"Src Rank\": 0") : QByteArray()) + "}}";
    }
    return R"json({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )json" + QByteArray::number(rank)
        + R"json(, "world_size": 2}, "traceEvents": [
{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
)json" + events
        + "\n]}";
}

// Writes `text` to `path` (gzip-compressed when the name ends in .gz); false if it cannot be written.
inline bool writeFile(const QString& path, const QByteArray& text)
{
    if (path.endsWith(QLatin1String(".gz"))) {
        gzFile f = gzopen(path.toLocal8Bit().constData(), "wb");
        if (!f)
            return false;
        const bool ok = gzwrite(f, text.constData(), unsigned(text.size())) == int(text.size()) || text.isEmpty();
        return gzclose(f) == Z_OK && ok;
    }
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

// Writes `text` to `name` in `dir` (gzip-compressed when the name ends in .gz); returns the path.
inline QString write(const QTemporaryDir& dir, const QString& name, const QByteArray& text)
{
    const QString path = dir.filePath(name);
    writeFile(path, text);
    return path;
}

// A run of `ranks` torch.profiler files (rankTrace(r, ranks) as "rank<r>.json") in the folder `name` of `dir`: its
// path, or an empty string where the folder or a file could not be written.
inline QString writeKinetoRun(const QTemporaryDir& dir, const QString& name, int ranks)
{
    if (!QDir(dir.path()).mkpath(name))
        return {};
    for (int r = 0; r < ranks; ++r)
        if (!writeFile(dir.filePath(name + QStringLiteral("/rank%1.json").arg(r)), rankTrace(r, ranks)))
            return {};
    return dir.filePath(name);
}

} // namespace exposure::testing
