// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-make-nsys-fixture DIR: writes a 2-rank Nsight Systems run (rank0.sqlite, rank1.sqlite, exports of the
// documented schema with small pages) to DIR, the input of the Nsight Systems corrupt-file matrix.
#include "support/nsystraces.h"

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

void writeRank(const std::string& path, std::int64_t pid)
{
    using namespace exposure::testing;
    {
        NsysWriter w(path);
        w.gpu(0, "NVIDIA H200");
        const std::int64_t main = nsysTid(pid, pid), other = nsysTid(pid, pid + 1);
        w.threadName(main, "pt_main_thread");
        for (int step = 0; step < 3; ++step) {
            const std::int64_t t = 1'000'000 + step * 200'000, c = step * 10;
            w.nvtx(main, t, t + 190'000, "ProfilerStep#" + std::to_string(step));
            w.nvtx(main, t + 100, t + 80'000, "forward");
            w.nvtx(main, t + 80'000, t + 170'000, "backward", true);
            w.runtime(main, t + 200, t + 300, c + 1, "cudaMemcpyAsync_v3020");
            w.memcpy(pid, 0, 7, t + 400, t + 1'400, c + 1, 4096, 1, 1, 3);
            w.runtime(main, t + 1'000, t + 1'010, c + 2, "cudaLaunchKernel_v7000");
            w.kernel(pid, 0, 7, t + 2'000, t + 72'000, c + 2, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_kernel");
            w.runtime(main, t + 81'000, t + 81'010, c + 3, "cudaLaunchKernel_v7000");
            w.kernel(pid, 0, 7, t + 82'000, t + 150'000, c + 3, "void cudnn::bn_bw_1C11_kernel_new<float>(float)");
            w.runtime(other, t + 90'000, t + 90'010, c + 4, "cudaLaunchKernel_v7000");
            w.kernel(pid, 0, 17, t + 92'000, t + 160'000, c + 4, "ncclKernel_AllReduce_RING_LL_Sum_float");
            w.runtime(main, t + 170'000, t + 185'000, c + 5, "cudaStreamSynchronize_v3020");
            w.sync(pid, t + 170'010, t + 184'990, c + 5, 3);
            w.memset(pid, 0, 7, t + 186'000, t + 186'500, 0, 1024);
        }
    }
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA page_size = 512; VACUUM;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fputs("Usage: exposure-make-nsys-fixture DIR\n", stderr);
        return 2;
    }
    std::error_code ec;
    std::filesystem::create_directories(argv[1], ec);
    try {
        writeRank(std::string(argv[1]) + "/rank0.sqlite", 100);
        writeRank(std::string(argv[1]) + "/rank1.sqlite", 200);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "exposure-make-nsys-fixture: %s: %s\n", argv[1], e.what());
        return 2;
    }
    return 0;
}
