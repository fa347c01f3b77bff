// SPDX-License-Identifier: GPL-3.0-or-later
// The demo trace: a BERT-like DDP training run, simulated step by step so that the NCCL all-reduce of each
// gradient bucket really waits for the slower rank (rank 0 busy-waits in its NCCL kernels).
#include "synth/archivewriter.h"

#include <algorithm>

namespace exposure::synth {

namespace {

struct KernelType
{
    const char* name;
    const char* mangled; // empty: extern "C" (name == canonical name)
    Ns duration; // on rank 0, a multiple of 10 ns
};

// Forward kernels of one transformer layer.
const KernelType kForward[] = {
    { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
      "cublas",
        "", 62'000 },
    { "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
      "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "_Z37fmha_cutlassF_bf16_aligned_64x64_rf_sm80N22PyTorchMemEffAttention15AttentionKernelIN7cutlass10bfloat16_"
        "tENS1_4arch4Sm80ELb1ELi64ELi64ELi64ELb1ELb1EE6ParamsE",
        48'000 },
    { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
      "cublas",
        "", 21'000 },
    { "at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>",
        "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_"
        "kernelIffLb0EEEviT0_"
        "PKT_S8_S8_PS5_S9_PS6_",
        9'000 },
    { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_"
      "cublas",
        "", 83'000 },
    { "at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(float)#1}, "
      "std::array<char*, 2ul> >",
        "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
        "8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_",
        14'000 },
    { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
      "cublas",
        "", 81'000 },
    { "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >",
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_", 7'000 },
    { "at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>",
        "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_"
        "kernelIffLb0EEEviT0_"
        "PKT_S8_S8_PS5_S9_PS6_",
        9'000 },
};

struct BackwardOp
{
    const char* region; // the autograd node on the CPU
    KernelType kernels[2];
    int count;
};

const BackwardOp kBackward[] = {
    { "NativeLayerNormBackward0",
        { { "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>(float const*, float "
            "const*, "
            "float const*, float const*, float const*, float*, int)",
              "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a228layer_norm_grad_input_"
              "kernelIffEEvPKT_"
              "S6_PKT0_S9_S6_PS4_i",
              12'000 },
            {} },
        1 },
    { "AddmmBackward0",
        { { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
            "kernel__5x_"
            "cublas_dgrad",
              "", 80'000 },
            { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
              "kernel__5x_"
              "cublas_wgrad",
                "", 84'000 } },
        2 },
    { "GeluBackward0",
        { { "at::native::vectorized_elementwise_kernel<4, "
            "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
            "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(float, "
            "float)#1}, std::array<char*, 3ul> >",
              "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_26GeluBackwardCUDAKernelImplERNS_"
              "18TensorIteratorBaseE"
              "NS0_8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlffE_St5arrayIPcLm3EEEEviT0_T1_",
              18'000 },
            {} },
        1 },
    { "AddmmBackward0",
        { { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_"
            "kernel__5x_"
            "cublas_dgrad",
              "", 82'000 },
            { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_"
              "kernel__5x_"
              "cublas_wgrad",
                "", 86'000 } },
        2 },
    { "ScaledDotProductEfficientAttentionBackward0",
        { { "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::"
            "Sm80, "
            "cutlass::bfloat16_t, true, false, true, 64, 64, 64, false>::Params)",
              "_Z41fmha_cutlassB_bf16_aligned_64x64_k64_"
              "sm80N22PyTorchMemEffAttention23AttentionBackwardKernelIN7cutlass4arch4"
              "Sm80ENS1_10bfloat16_tELb1ELb0ELb1ELi64ELi64ELi64ELb0EE6ParamsE",
              96'000 },
            {} },
        1 },
    { "AddmmBackward0",
        { { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
            "kernel__5x_"
            "cublas_dgrad",
              "", 58'000 },
            { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
              "kernel__5x_"
              "cublas_wgrad",
                "", 60'000 } },
        2 },
};

const KernelType kAdam[] = {
    { "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
      "(at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, bool, float*, float*>",
        "_ZN2at6native57_GLOBAL__N__7f5a3c39_24_FusedAdamWKernel_cu_multi_tensor_apply_kernelINS1_"
        "18TensorListMetadataILi"
        "4EEENS1_20FusedAdamMathFunctorIfLi4ELNS0_9ADAM_MODEE1ELb0EEEJPfddddbS8_S8_EEEvT_T0_DpT1_",
        52'000 },
};

const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

constexpr Ns kLaunch = 4'000; // CPU time of one cuLaunchKernel
constexpr Ns kLaunchGap = 1'000; // CPU time between two launches
constexpr Ns kLaunchLatency = 3'000; // earliest GPU start after the launch began

Ns scaled(Ns d, int rank, bool launchBound)
{
    // Rank r is (5*r)% slower; a launch-bound (small-batch) run's kernels are a quarter as long; keep multiples
    // of 10 ns.
    return (d * (100 + 5 * rank) / (launchBound ? 400 : 100)) / 10 * 10;
}

struct RankState
{
    RankSpec* spec = nullptr;
    CpuThreadSpec* cpu = nullptr;
    StreamSpec* compute = nullptr;
    StreamSpec* nccl = nullptr;
    Ns cpuT = 0;
    Ns gpuT = 0; // compute stream free from
    Ns ncclT = 0; // NCCL stream free from
    int rank = 0;
    bool launchBound = false;

    Ns launchCost() const { return launchBound ? 25'000 : kLaunch; }
    Ns launchGap() const { return launchBound ? 15'000 : kLaunchGap; }

    void idleGap(Ns until)
    {
        if (until > gpuT)
            compute->idle.push_back({ gpuT, until });
    }

    // One cuLaunchKernel on the CPU (at cpuT) and its kernel on the compute stream.
    void launch(const KernelType& k, Ns notBefore = 0)
    {
        cpu->regions.push_back({ "cuLaunchKernel", cpuT, cpuT + launchCost(), RegionRole::Wrapper, 0 });
        const Ns start = std::max({ gpuT, cpuT + kLaunchLatency, notBefore });
        idleGap(start);
        const Ns end = start + scaled(k.duration, rank, launchBound);
        KernelSpec ks;
        ks.name = k.name;
        ks.mangled = k.mangled;
        ks.start = start;
        ks.end = end;
        ks.blocksPerGrid = 132 * 4;
        ks.threadsPerBlock = 128 + 128 * (k.duration % 3);
        compute->kernels.push_back(std::move(ks));
        gpuT = end;
        cpuT += launchCost() + launchGap();
    }
};

// One step's gradient all-reduces, a bucket at a time: every rank's kernel ends when the last rank has joined plus
// the transfer time.
void allReduceBuckets(std::vector<RankState>& st, const std::vector<std::vector<Ns>>& bucketLaunch,
    const std::vector<std::vector<Ns>>& bucketReady, bool launchBound)
{
    const int nRanks = int(st.size());
    const int buckets = int(bucketLaunch.front().size());
    for (int b = 0; b < buckets; ++b) {
        Ns lastJoin = 0;
        std::vector<Ns> start(nRanks);
        for (int r = 0; r < nRanks; ++r) {
            start[r] = std::max({ st[r].ncclT, bucketLaunch[r][b] + kLaunchLatency, bucketReady[r][b] });
            lastJoin = std::max(lastJoin, start[r]);
        }
        const Ns transfer = (b + 1 == buckets ? 140'000 : 150'000) / (launchBound ? 4 : 1);
        for (int r = 0; r < nRanks; ++r) {
            KernelSpec k;
            k.name = kNccl;
            k.start = start[r];
            k.end = lastJoin + transfer;
            k.blocksPerGrid = 2;
            k.threadsPerBlock = 512;
            st[r].nccl->kernels.push_back(k);
            st[r].ncclT = k.end;
        }
    }
}

} // namespace

ArchiveSpec makeDemoSpec(const DemoOptions& o)
{
    ArchiveSpec spec;
    const int nRanks = std::max(1, o.ranks);
    const int layers = 6 * std::max(1, o.scale);
    const int layersPerBucket = 2;
    spec.ranks.reserve(nRanks);
    for (int r = 0; r < nRanks; ++r) {
        auto& rs = spec.addRank(r, "gpu-node-1");
        rs.addStream(r, 7); // compute (NULL stream)
        if (nRanks > 1)
            rs.addStream(r, 17); // NCCL: a single-GPU run has no communicator and no NCCL kernels
        rs.metricEvents = 16;
    }
    std::vector<RankState> st(nRanks);
    for (int r = 0; r < nRanks; ++r) {
        st[r].spec = &spec.ranks[r];
        st[r].cpu = &spec.ranks[r].threads[0];
        st[r].compute = &spec.ranks[r].streams[0];
        st[r].nccl = nRanks > 1 ? &spec.ranks[r].streams[1] : nullptr;
        st[r].rank = r;
        st[r].launchBound = o.launchBound;
        // Ranks start a little apart (process launch jitter).
        st[r].cpuT = 1'000'000 + Ns(r) * 37'000;
        st[r].gpuT = st[r].cpuT;
        st[r].ncclT = st[r].cpuT;
    }

    const int buckets = (layers + layersPerBucket - 1) / layersPerBucket;
    for (int step = 1; step <= std::max(1, o.steps); ++step) {
        std::vector<Ns> stepStart(nRanks);
        std::vector<std::vector<Ns>> bucketLaunch(nRanks, std::vector<Ns>(buckets));
        std::vector<std::vector<Ns>> bucketReady(nRanks, std::vector<Ns>(buckets));
        std::vector<Ns> backwardStart(nRanks), backwardEnd(nRanks);
        for (int r = 0; r < nRanks; ++r) {
            auto& s = st[r];
            stepStart[r] = s.cpuT;
            s.cpuT += 20'000; // data loader
            // Input batch: two HtoD copies.
            for (int c = 0; c < 2; ++c) {
                s.cpu->regions.push_back({ "cuMemcpyHtoDAsync_v2", s.cpuT, s.cpuT + 6'000, RegionRole::Wrapper, 0 });
                const Ns start = std::max(s.gpuT, s.cpuT + kLaunchLatency);
                s.idleGap(start);
                s.compute->copies.push_back({ CopyKind::HtoD, start, start + 5'000, 32u * 128u * 8u });
                s.gpuT = start + 5'000;
                s.cpuT += 7'000;
            }
            // Forward.
            const Ns fwdStart = s.cpuT;
            for (int l = 0; l < layers; ++l) {
                const Ns layerStart = s.cpuT;
                for (const auto& k : kForward)
                    s.launch(k);
                s.cpu->regions.push_back(
                    { "BertLayer_" + std::to_string(l % 12), layerStart, s.cpuT, RegionRole::Function, -1 });
            }
            s.cpu->regions.push_back({ "forward", fwdStart, s.cpuT, RegionRole::Function, -1 });
            s.cpuT += 10'000;
            // Backward: layers in reverse; a gradient bucket is ready every layersPerBucket layers.
            backwardStart[r] = s.cpuT;
            int bucket = 0;
            for (int l = layers - 1; l >= 0; --l) {
                for (const auto& op : kBackward) {
                    const Ns opStart = s.cpuT;
                    for (int k = 0; k < op.count; ++k)
                        s.launch(op.kernels[k]);
                    s.cpu->regions.push_back({ op.region, opStart, s.cpuT, RegionRole::Function, -1 });
                }
                if (nRanks > 1 && ((layers - l) % layersPerBucket == 0 || l == 0)) {
                    // DDP's reducer hook launches the all-reduce of the finished bucket.
                    s.cpu->regions.push_back(
                        { "cuLaunchKernel", s.cpuT, s.cpuT + s.launchCost(), RegionRole::Wrapper, 1 });
                    bucketLaunch[r][bucket] = s.cpuT;
                    bucketReady[r][bucket] = s.gpuT;
                    s.cpuT += s.launchCost() + s.launchGap();
                    ++bucket;
                }
            }
            backwardEnd[r] = s.cpuT;
            s.cpu->regions.push_back({ "backward", backwardStart[r], s.cpuT, RegionRole::Function, -1 });
        }
        if (nRanks > 1)
            allReduceBuckets(st, bucketLaunch, bucketReady, o.launchBound);
        for (int r = 0; r < nRanks; ++r) {
            auto& s = st[r];
            // Optimizer: waits for the last all-reduce (the compute stream waits on NCCL's event).
            const Ns optStart = s.cpuT;
            for (const auto& k : kAdam)
                for (int i = 0; i < 2 * std::max(1, o.scale); ++i)
                    s.launch(k, s.ncclT);
            s.cpu->regions.push_back({ "Optimizer.step#AdamW.step", optStart, s.cpuT, RegionRole::Function, -1 });
            // loss.item(): the CPU waits for the GPU.
            const Ns syncStart = s.cpuT;
            const Ns syncEnd = std::max(s.cpuT + 2'000, s.gpuT + 2'000);
            s.cpu->regions.push_back({ "cuStreamSynchronize", syncStart, syncEnd, RegionRole::Wrapper, -1 });
            s.cpuT = syncEnd + 5'000;
            s.cpu->regions.push_back(
                { "ProfilerStep#" + std::to_string(step), stepStart[r], s.cpuT, RegionRole::Function, -1 });
            s.cpuT += 1'000;
        }
    }
    return spec;
}

} // namespace exposure::synth
