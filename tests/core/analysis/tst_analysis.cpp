// SPDX-License-Identifier: GPL-3.0-or-later
// Analysis tests on traces built with TraceBuilder, where every expected value is known by construction.
#include "analysis/analysis.h"
#include "analysis/analysis_p.h"

#include <QTemporaryDir>
#include <QTest>
#include <fstream>

using namespace exposure;

namespace {

// One rank with a CPU thread and GPU streams 7 and 17 (and more on demand).
struct Fixture
{
    TraceBuilder b;
    int rank = b.addRank("Rank 0", "node0", 0, 0);
    int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
    int s7 = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    int s17 = b.addLane(rank, "CUDA[0:17]", LaneKind::GpuStream, 0, 17);

    int stream(int id) { return b.addLane(rank, "CUDA[0:" + std::to_string(id) + "]", LaneKind::GpuStream, 0, id); }
    void kernel(int lane, TimeNs s, TimeNs e, std::string_view name = "at::native::vectorized_elementwise_kernel<4>")
    {
        b.addInterval(rank, lane, s, e, name, RegionKind::Kernel);
    }
    void nccl(int lane, TimeNs s, TimeNs e)
    {
        b.addInterval(rank, lane, s, e, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            RegionKind::Kernel);
    }
    std::uint32_t region(
        TimeNs s, TimeNs e, std::string_view name, std::uint8_t depth = 0, RegionKind kind = RegionKind::HostRegion)
    {
        return b.addInterval(rank, cpu, s, e, name, kind, depth);
    }
    // A cuLaunchKernel call at [s, s+5) at `depth` that launches the next kernel on `lane`.
    void launch(int lane, TimeNs s, std::uint8_t depth)
    {
        const auto i = b.addInterval(rank, cpu, s, s + 5, "cuLaunchKernel", RegionKind::HostApi, depth);
        b.addLaunch(rank, lane, cpu, i);
    }
};

int laneOf(const Trace& t, std::string_view name)
{
    const auto& lanes = t.ranks[0].lanes;
    for (std::size_t i = 0; i < lanes.size(); ++i)
        if (lanes[i].name == name)
            return int(i);
    return -1;
}

} // namespace

class TestAnalysis : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void classifyNccl_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("collective");
        QTest::addColumn<QString>("algorithm");
        QTest::addColumn<QString>("protocol");
        QTest::addColumn<QString>("dataType");
        QTest::newRow("ncclKernel") << "ncclKernel_AllReduce_RING_LL_Sum_float"
                                    << "AllReduce"
                                    << "RING"
                                    << "LL"
                                    << "float";
        QTest::newRow("ncclDevKernel") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                       << "AllReduce"
                                       << "RING"
                                       << "LL"
                                       << "f32";
        QTest::newRow("broadcast") << "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                   << "Broadcast"
                                   << "RING"
                                   << "LL"
                                   << "";
        QTest::newRow("sendrecv") << "ncclDevKernel_SendRecv"
                                  << "SendRecv"
                                  << ""
                                  << ""
                                  << "";
        QTest::newRow("void prefix, LL128, tree") << "void ncclDevKernel_ReduceScatter_Sum_bf16_TREE_LL128(int)"
                                                  << "ReduceScatter"
                                                  << "TREE"
                                                  << "LL128"
                                                  << "bf16";
        QTest::newRow("collnet") << "ncclKernel_AllGather_COLLNET_DIRECT_SIMPLE_Sum_int8_t"
                                 << "AllGather"
                                 << "COLLNET_DIRECT"
                                 << "SIMPLE"
                                 << "int8_t";
    }
    void classifyNccl()
    {
        QFETCH(QString, name);
        const NameClass nc = Rules::defaults().classify(name.toStdString(), RegionKind::Kernel);
        QCOMPARE(nc.category, Category::Communication);
        QFETCH(QString, collective);
        QFETCH(QString, algorithm);
        QFETCH(QString, protocol);
        QFETCH(QString, dataType);
        QCOMPARE(QString::fromStdString(nc.collective), collective);
        QCOMPARE(QString::fromStdString(nc.subgroup), collective);
        QCOMPARE(QString::fromStdString(nc.algorithm), algorithm);
        QCOMPARE(QString::fromStdString(nc.protocol), protocol);
        QCOMPARE(QString::fromStdString(nc.dataType), dataType);
        QVERIFY(!nc.unclassified);
    }

    void classifyRealNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("category");
        QTest::addColumn<QString>("subgroup");
        QTest::addColumn<bool>("unclassified");
        QTest::addColumn<int>("phase");
        const int K = int(RegionKind::Kernel);
        const int C = int(Category::Compute);
        const int U = int(Phase::Unknown);
        // Names as they appear in the Score-P H200 and Kineto traces in ../shared/traces.
        QTest::newRow("nvjet") << "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_bias_TNT" << K << C << "gemm" << false
                               << U;
        QTest::newRow("cutlass")
            << "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align2>" << K << C
            << "gemm" << false << U;
        QTest::newRow("sdpa fprop")
            << "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0"
            << K << C << "attention" << false << int(Phase::Forward);
        QTest::newRow("sdpa bprop")
            << "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0"
            << K << C << "attention" << false << int(Phase::Backward);
        QTest::newRow("layer norm")
            << "at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>" << K << C
            << "normalization" << false << U;
        QTest::newRow("layer norm grad")
            << "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float, "
               "false>(float const*)"
            << K << C << "normalization" << false << int(Phase::Backward);
        QTest::newRow("adam")
            << "at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
               "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>"
            << K << C << "optimizer" << false << int(Phase::Optimizer);
        QTest::newRow("reduce") << "at::native::reduce_kernel<512, 1, at::native::ReduceOp<bool>>" << K << C
                                << "reduction" << false << U;
        QTest::newRow("elementwise") << "at::native::vectorized_elementwise_kernel<4, "
                                        "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
                                     << K << C << "elementwise" << false << U;
        QTest::newRow("gelu backward") << "at::native::vectorized_elementwise_kernel<8, "
                                          "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&)>"
                                       << K << C << "elementwise" << false << int(Phase::Backward);
        QTest::newRow("softmax backward")
            << "(anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 1, true, false>" << K
            << C << "attention" << false << int(Phase::Backward);
        QTest::newRow("unknown kernel") << "my_renamed_kernel_v2" << K << C << "other" << true << U;
        QTest::newRow("memcpy kind") << "memcpy HtoD" << int(RegionKind::Memcpy) << int(Category::Memcpy) << "HtoD"
                                     << false << U;
        QTest::newRow("kineto memset") << "Memset (Device)" << K << int(Category::Memcpy) << "memset" << false << U;
        QTest::newRow("kineto memcpy") << "Memcpy DtoD (Device -> Device)" << K << int(Category::Memcpy) << "DtoD"
                                       << false << U;
        QTest::newRow("compute idle") << "COMPUTE IDLE" << int(RegionKind::Idle) << int(Category::Idle) << "idle"
                                      << false << U;
        QTest::newRow("idle named as kernel") << "GPU IDLE" << K << int(Category::Idle) << "idle" << false << U;
        QTest::newRow("device sync") << "DEVICE SYNCHRONIZE" << int(RegionKind::Sync) << int(Category::Idle) << "sync"
                                     << false << U;
        QTest::newRow("buffer flush") << "BUFFER FLUSH" << K << int(Category::Idle) << "sync" << false << U;
        QTest::newRow("sync kind beats name")
            << "some_backward_kernel" << int(RegionKind::Sync) << int(Category::Idle) << "sync" << false << U;
    }
    void classifyRealNames()
    {
        QFETCH(QString, name);
        QFETCH(int, kind);
        const NameClass nc = Rules::defaults().classify(name.toStdString(), RegionKind(kind));
        QFETCH(int, category);
        QFETCH(QString, subgroup);
        QFETCH(bool, unclassified);
        QFETCH(int, phase);
        QCOMPARE(int(nc.category), category);
        QCOMPARE(QString::fromStdString(nc.subgroup), subgroup);
        QCOMPARE(nc.unclassified, unclassified);
        QCOMPARE(int(nc.namePhase), phase);
    }
    // Convolutional networks: kernel names as cuDNN, CUTLASS, PyTorch and MIOpen (ROCm) name them.
    void classifyConvNetNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("subgroup");
        QTest::addColumn<int>("phase");
        const int U = int(Phase::Unknown), F = int(Phase::Forward), B = int(Phase::Backward);
        // Convolutions: implicit GEMM (cuDNN xmma, CUTLASS), winograd, direct and FFT convolutions.
        QTest::newRow("cudnn implicit gemm")
            << "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
               "warpsize2x2x1_g1_tensor16x8x8_kernel_cudnn"
            << "convolution" << F;
        QTest::newRow("cudnn dgrad") << "sm86_xmma_dgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_"
                                        "tilesize64x64x64_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel"
                                     << "convolution" << B;
        QTest::newRow("cutlass wgrad")
            << "cutlass::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_128x128_32x3_nhwc_align4>"
            << "convolution" << B;
        QTest::newRow("cutlass fprop") << "cutlass_tensorop_h16816fprop_optimized_256x128_32x3_nhwc_align8"
                                       << "convolution" << F;
        QTest::newRow("implicit convolve")
            << "void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, true, false, "
               "true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, "
               "int, float, float, int, float const*, float const*, bool, int, int)"
            << "convolution" << U;
        QTest::newRow("winograd") << "void cudnn::winograd_nonfused::winogradForwardData4x4<float, "
                                     "float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"
                                  << "convolution" << F;
        QTest::newRow("scudnn") << "volta_scudnn_128x64_relu_interior_nn_v1"
                                << "convolution" << U;
        QTest::newRow("fft") << "void fft2d_r2c_32x32<float, false, 1u, true>(float2*, float const*, int, int, int, "
                                "int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)"
                             << "convolution" << U;
        QTest::newRow("depthwise")
            << "void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, "
               "int>(at::GenericPackedTensorAccessor<float const, 4ul, at::DefaultPtrTraits, int>, int, int)"
            << "convolution" << F;
        QTest::newRow("miopen asm conv") << "miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1"
                                         << "convolution" << U;
        QTest::newRow("miopen igemm") << "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_"
                                         "ta1x8x4x1_1x4x1x64_tb1x8x2x1_1x4x1x64"
                                      << "convolution" << F;
        QTest::newRow("miopen naive") << "naive_conv_fwd_nchw_float_double_float"
                                      << "convolution" << F;
        QTest::newRow("composable kernel") << "gridwise_convolution_implicit_gemm_v4r4_nchw_kcyx_nkhw"
                                           << "convolution" << U;
        // Normalization: cuDNN batch norm (bn_fw / bn_bw), PyTorch batch and group norm, MIOpen batch norm.
        QTest::newRow("bn_fw") << "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, "
                                  "1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float "
                                  "const*, float, float, float*, float*, float*, float*, float, float)"
                               << "normalization" << U;
        QTest::newRow("bn_bw")
            << "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, "
               "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float "
               "const*, float*, float*, float const*, float const*, float)"
            << "normalization" << U;
        QTest::newRow("torch batch norm")
            << "void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float, float, float, "
               "int>(at::GenericPackedTensorAccessor<float const, 3ul, at::RestrictPtrTraits, int>, float, float, "
               "at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, int>)"
            << "normalization" << U;
        QTest::newRow("nhwc batch norm")
            << "void cudnn::ops::nhwcBatchNormFwd<float, float, 256, 4, 1, true>(cudnn::ops::NhwcBatchNormFwdParams)"
            << "normalization" << F;
        QTest::newRow("group norm") << "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>(long, "
                                       "float, float const*, float*, float*)"
                                    << "normalization" << U;
        QTest::newRow("miopen bn") << "MIOpenBatchNormFwdTrainSpatial"
                                   << "normalization" << F;
        // Layout transforms.
        QTest::newRow("nchwToNhwc")
            << "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
               "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)"
            << "layout" << U;
        QTest::newRow("nhwcToNchw")
            << "void cudnn::ops::nhwcToNchwKernel<__half, __half, float, true, false, "
               "(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, __half const*, __half*)"
            << "layout" << U;
        QTest::newRow("transpose") << "void cudnn::ops::transpose_readWrite_alignment_kernel<float, float, 1, false, "
                                      "6, 5, 3>(cudnn::ops::TransposeParams<float>, float const*, float*)"
                                   << "layout" << U;
        QTest::newRow("miopen transpose") << "transpose_NCHW2CNHW_opt_fp32"
                                          << "layout" << U;
        // Pooling.
        QTest::newRow("max pool")
            << "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, "
               "long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)"
            << "pooling" << F;
        QTest::newRow("adaptive avg pool")
            << "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, int, int, "
               "int, int, long, long, long)"
            << "pooling" << U;
        QTest::newRow("cudnn pooling")
            << "void cudnn::ops::pooling_fw_4d_kernel<float, float, cudnn::maxpooling_func<float, "
               "(cudnnNanPropagation_t)0>, (cudnnPoolingMode_t)0, false>(cudnnTensorStruct, float const*, "
               "cudnnTensorStruct, float*, cudnnPoolingStruct, float, float, int, cudnn::reduced_divisor, "
               "cudnn::reduced_divisor)"
            << "pooling" << U;
        QTest::newRow("miopen pooling") << "mloPoolingG"
                                        << "pooling" << U;
        // Unchanged: GEMMs stay gemm, conversions are not convolutions.
        QTest::newRow("gemm") << "ampere_sgemm_128x64_nn"
                              << "gemm" << U;
        QTest::newRow("rocm gemm") << "Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_K1"
                                   << "gemm" << U;
        QTest::newRow("conversion") << "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
                                       "namespace)::convert_kernel>(int)"
                                    << "elementwise" << U;
    }
    void classifyConvNetNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, subgroup);
        QFETCH(int, phase);
        const NameClass nc = Rules::defaults().classify(name.toStdString(), RegionKind::Kernel);
        QCOMPARE(int(nc.category), int(Category::Compute));
        QCOMPARE(QString::fromStdString(nc.subgroup), subgroup);
        QVERIFY(!nc.unclassified);
        QCOMPARE(int(nc.namePhase), phase);
    }

    void classifyRegionsAndDemangling()
    {
        const Rules r = Rules::defaults();
        QCOMPARE(r.classify("NllLossBackward0", RegionKind::HostRegion).regionPhase, Phase::Backward);
        QCOMPARE(r.classify("autograd::engine::evaluate_function: AddmmBackward0", RegionKind::HostRegion).regionPhase,
            Phase::Backward);
        QCOMPARE(r.classify("backward", RegionKind::HostRegion).regionPhase, Phase::Backward);
        QCOMPARE(r.classify("Optimizer.step#AdamW.step", RegionKind::HostRegion).regionPhase, Phase::Optimizer);
        QCOMPARE(r.classify("optimizer.step", RegionKind::HostRegion).regionPhase, Phase::Optimizer);
        QCOMPARE(r.classify("nn.Module: BertModel", RegionKind::HostRegion).regionPhase, Phase::Forward);
        QCOMPARE(r.classify("DistributedDataParallel.forward", RegionKind::HostRegion).regionPhase, Phase::Forward);
        QCOMPARE(r.classify("Optimizer.zero_grad#AdamW.zero_grad", RegionKind::HostRegion).regionPhase, Phase::Unknown);
        QCOMPARE(r.classify("aten::linear", RegionKind::HostRegion).regionPhase, Phase::Unknown);
        QCOMPARE(r.classify("aten::linear", RegionKind::HostRegion).category, Category::Host);
        QVERIFY(r.classify("ProfilerStep#4", RegionKind::HostRegion).stepRegion);
        QVERIFY(r.classify("train_step", RegionKind::HostRegion).stepRegion);
        QVERIFY(r.classify("training_step", RegionKind::HostRegion).stepRegion);
        QVERIFY(r.classify("step", RegionKind::HostRegion).stepRegion);
        QVERIFY(!r.classify("Optimizer.step#AdamW.step", RegionKind::HostRegion).stepRegion);
        QVERIFY(r.classify("cuLaunchKernel", RegionKind::HostApi).kernelLaunch);
        QVERIFY(r.classify("hipLaunchKernel", RegionKind::HostApi).kernelLaunch);
        QVERIFY(!r.classify("cuMemcpyAsync", RegionKind::HostApi).kernelLaunch);
        // A CPU region never becomes a GPU category.
        QCOMPARE(r.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL", RegionKind::HostApi).category, Category::Host);

        const NameClass m
            = r.classify("_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb", RegionKind::Kernel);
        QCOMPARE(QString::fromStdString(m.displayName),
            QStringLiteral("void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, "
                           "long, long, long, bool)"));
        QCOMPARE(QString::fromStdString(m.subgroup), QStringLiteral("elementwise"));
        QVERIFY(r.rules().size() > 10);
        QCOMPARE(QString::fromStdString(r.rules()[std::size_t(m.rule)].id), QStringLiteral("elementwise"));
    }

    // Three NCCL kernels, two of them overlapping on different streams: the union counts once, the sum twice.
    void overlappingNcclKernels()
    {
        Fixture f;
        const int s18 = f.stream(18);
        f.nccl(f.s17, 0, 100);
        f.nccl(s18, 50, 150);
        f.nccl(f.s17, 300, 400);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.kernelCount, 3ull);
        QCOMPARE(s.commKernelCount, 3ull);
        QCOMPARE(s.commKernelSumNs, 300);
        QCOMPARE(s.commBusyNs, 250);
        QCOMPARE(s.computeBusyNs, 0);
        QCOMPARE(s.overlappedNs, 0);
        QCOMPARE(s.exposedNs, 250);
        QVERIFY(s.overlapRatio.has_value());
        QCOMPARE(*s.overlapRatio, 0.0);
        QCOMPARE(s.gpuBusyNs, 250);
        QCOMPARE(s.spanNs, 400);
        QCOMPARE(s.idleNs, 150);
        // The GUI's overlap lane: two exposed segments.
        const auto& ov = a->ranks[0].overlap;
        QCOMPARE(ov.size(), std::size_t(2));
        QCOMPARE(ov[0].start, 0);
        QCOMPARE(ov[0].end, 150);
        QCOMPARE(ov[0].state, OverlapState::Exposed);
        QCOMPARE(ov[1].start, 300);
        QCOMPARE(ov[1].end, 400);
    }

    // NCCL on stream 17 overlaps compute on streams 7 and 8 at once: compute is a union, not a sum.
    void ncclOverTwoComputeStreams()
    {
        Fixture f;
        const int s8 = f.stream(8);
        f.nccl(f.s17, 100, 300);
        f.kernel(f.s7, 0, 200);
        f.kernel(s8, 150, 250);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.kernelCount, 3ull);
        QCOMPARE(s.commKernelCount, 1ull);
        QCOMPARE(s.commKernelSumNs, 200);
        QCOMPARE(s.commBusyNs, 200);
        QCOMPARE(s.computeBusyNs, 250);
        QCOMPARE(s.overlappedNs, 150);
        QCOMPARE(s.exposedNs, 50);
        QCOMPARE(*s.overlapRatio, 0.75);
        QCOMPARE(s.gpuBusyNs, 300);
        QCOMPARE(s.spanNs, 300);
        QCOMPARE(s.idleNs, 0);
        QCOMPARE(s.unclassifiedNs, 0);

        const auto& ov = a->ranks[0].overlap;
        QCOMPARE(ov.size(), std::size_t(3));
        QCOMPARE(ov[0].state, OverlapState::ComputeOnly);
        QCOMPARE(ov[0].end, 100);
        QCOMPARE(ov[1].state, OverlapState::Hidden);
        QCOMPARE(ov[1].start, 100);
        QCOMPARE(ov[1].end, 250);
        QCOMPARE(ov[2].state, OverlapState::Exposed);
        QCOMPARE(ov[2].end, 300);

        // Window clipping.
        const WindowStats w = computeStats(*t, *a, 0, { 150, 250 });
        QCOMPARE(w.kernelCount, 3ull);
        QCOMPARE(w.commKernelSumNs, 100);
        QCOMPARE(w.commBusyNs, 100);
        QCOMPARE(w.computeBusyNs, 100);
        QCOMPARE(w.overlappedNs, 100);
        QCOMPARE(w.exposedNs, 0);
        QCOMPARE(*w.overlapRatio, 1.0);
        QCOMPARE(w.spanNs, 100);
        const WindowStats tail = computeStats(*t, *a, 0, { 250, 300 });
        QCOMPARE(tail.kernelCount, 1ull); // [150,250) ends where the window starts
        QCOMPARE(tail.commBusyNs, 50);
        QCOMPARE(tail.computeBusyNs, 0);
        QCOMPARE(tail.exposedNs, 50);
        QCOMPARE(*tail.overlapRatio, 0.0);
        const WindowStats empty = computeStats(*t, *a, 0, { 1000, 2000 });
        QCOMPARE(empty.kernelCount, 0ull);
        QCOMPARE(empty.spanNs, 0);
        QVERIFY(!empty.overlapRatio.has_value());
    }

    // One compute kernel [0,1000); communication fully hidden, fully exposed and half hidden.
    void hiddenExposedHalf()
    {
        Fixture f;
        f.kernel(f.s7, 0, 1000);
        f.nccl(f.s17, 100, 200); // hidden
        f.nccl(f.s17, 900, 1100); // half hidden
        f.nccl(f.s17, 1500, 1600); // exposed
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const int s17 = laneOf(*t, "CUDA[0:17]");
        const InstanceOverlap hidden = instanceOverlap(*t, *a, { 0, s17, 0 });
        QCOMPARE(hidden.hiddenNs, 100);
        QCOMPARE(hidden.exposedNs, 0);
        const InstanceOverlap half = instanceOverlap(*t, *a, { 0, s17, 1 });
        QCOMPARE(half.hiddenNs, 100);
        QCOMPARE(half.exposedNs, 100);
        const InstanceOverlap exposed = instanceOverlap(*t, *a, { 0, s17, 2 });
        QCOMPARE(exposed.hiddenNs, 0);
        QCOMPARE(exposed.exposedNs, 100);
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.commBusyNs, 400);
        QCOMPARE(s.overlappedNs, 200);
        QCOMPARE(s.exposedNs, 200);
        QCOMPARE(*s.overlapRatio, 0.5);
        QCOMPARE(s.spanNs, 1600);
        QCOMPARE(s.gpuBusyNs, 1200);
        QCOMPARE(s.idleNs, 400);
    }

    // Idle and synchronisation regions inside a communication kernel are not compute and not GPU activity.
    void idleInsideCommunication()
    {
        Fixture f;
        f.nccl(f.s17, 0, 1000);
        f.b.addInterval(f.rank, f.s7, 200, 800, "COMPUTE IDLE", RegionKind::Idle);
        f.b.addInterval(f.rank, f.s7, 850, 900, "DEVICE SYNCHRONIZE", RegionKind::Sync);
        f.b.addInterval(f.rank, f.s7, 900, 950, "GPU IDLE", RegionKind::Kernel); // idle by name
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.kernelCount, 1ull);
        QCOMPARE(s.computeBusyNs, 0);
        QCOMPARE(s.overlappedNs, 0);
        QCOMPARE(s.exposedNs, 1000);
        QCOMPARE(*s.overlapRatio, 0.0);
        QCOMPARE(s.gpuBusyNs, 1000);
        QCOMPARE(s.idleNs, 0);
    }

    // Memcpy and unclassified kernels.
    void memcpyAndUnclassified()
    {
        Fixture f;
        f.b.addInterval(f.rank, f.s7, 0, 100, "memcpy HtoD", RegionKind::Memcpy);
        f.kernel(f.s7, 100, 300, "my_renamed_kernel");
        f.kernel(f.s7, 300, 400, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_NNT");
        f.nccl(f.s17, 50, 350);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.kernelCount, 3ull); // the copy is no kernel
        QCOMPARE(s.memcpyBusyNs, 100);
        QCOMPARE(s.unclassifiedNs, 200);
        QCOMPARE(s.computeBusyNs, 300);
        QCOMPARE(s.overlappedNs, 250); // [100,350)
        QCOMPARE(s.exposedNs, 50); // [50,100): only a copy runs
        QCOMPARE(s.gpuBusyNs, 400);

        const auto rows = kernelTable(*t, *a, t->extent);
        QCOMPARE(rows.size(), std::size_t(4));
        QCOMPARE(QString::fromStdString(t->name(rows[0].name)),
            QStringLiteral("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
        QCOMPARE(rows[0].totalNs, 300);
        QCOMPARE(rows[0].category, Category::Communication);
        QCOMPARE(rows[0].gpuShare, 300.0 / 700.0); // 300 of 700 ns of kernel and copy time
        QCOMPARE(rows[1].totalNs, 200);
        QCOMPARE(QString::fromStdString(rows[1].subgroup), QStringLiteral("other"));

        const auto usage = ruleUsage(*t, *a);
        QCOMPARE(usage.size(), a->rules.rules().size() + 1);
        std::uint64_t catchAll = 0;
        for (const auto& u : usage)
            if (u.rule >= 0 && a->rules.rules()[std::size_t(u.rule)].id == "other-compute")
                catchAll = u.count;
        QCOMPARE(catchAll, 1ull);
    }

    void kernelTableStats()
    {
        Fixture f;
        f.kernel(f.s7, 0, 10, "k");
        f.kernel(f.s7, 20, 50, "k");
        f.kernel(f.s7, 60, 80, "k");
        f.kernel(f.s7, 100, 200, "nvjet_x");
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        auto rows = kernelTable(*t, *a, t->extent, 0);
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(rows[1].count, 3ull);
        QCOMPARE(rows[1].totalNs, 60);
        QCOMPARE(rows[1].minNs, 10);
        QCOMPARE(rows[1].maxNs, 30);
        QCOMPARE(rows[1].meanNs, 20.0);
        QCOMPARE(rows[0].gpuShare, 100.0 / 160.0);
        // Window: only instances that start in it.
        rows = kernelTable(*t, *a, { 15, 70 }, 0);
        QCOMPARE(rows.size(), std::size_t(1));
        QCOMPARE(rows[0].count, 2ull);
        QCOMPARE(rows[0].gpuShare, 1.0);
    }

    // Phases from the CPU regions around each launch; a non-kernel launch record (a copy) is skipped.
    void phasesFromLaunches()
    {
        Fixture f;
        f.region(0, 100, "nn.Module: BertModel", 0);
        f.launch(f.s7, 10, 1); // A forward
        f.region(200, 400, "autograd::engine::evaluate_function: AddmmBackward0", 0);
        f.region(200, 300, "AddmmBackward0", 1);
        {
            const auto copy = f.b.addInterval(f.rank, f.cpu, 205, 208, "cuMemcpyAsync", RegionKind::HostApi, 2);
            f.b.addLaunch(f.rank, f.s7, f.cpu, copy);
        }
        f.launch(f.s7, 210, 2); // B backward
        f.launch(f.s17, 250, 2); // NCCL backward
        f.region(500, 600, "Optimizer.step#AdamW.step", 0);
        f.launch(f.s7, 510, 1); // C optimizer
        f.kernel(f.s7, 600, 700, "kernelA");
        f.b.addInterval(f.rank, f.s7, 800, 850, "memcpy DtoD", RegionKind::Memcpy);
        f.kernel(f.s7, 1000, 1200, "kernelB");
        f.kernel(f.s7, 1400, 1500, "kernelC");
        f.nccl(f.s17, 1100, 1450);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        const int s7 = laneOf(*t, "CUDA[0:7]");
        const int s17 = laneOf(*t, "CUDA[0:17]");
        QCOMPARE(ra.phases[std::size_t(s7)][0], Phase::Forward);
        QCOMPARE(ra.phases[std::size_t(s7)][1], Phase::Unknown); // the copy
        QCOMPARE(ra.phases[std::size_t(s7)][2], Phase::Backward);
        QCOMPARE(ra.phases[std::size_t(s7)][3], Phase::Optimizer);
        QCOMPARE(ra.phases[std::size_t(s17)][0], Phase::Backward);
        QCOMPARE(ra.phaseSource, PhaseSource::Launch);
        QCOMPARE(ra.phaseFromLaunch, 4ull);
        QCOMPARE(ra.phaseUnknown, 0ull);
        QVERIFY(ra.warnings.empty());

        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.commBusyNs, 350);
        QCOMPARE(s.overlappedNs, 150); // [1100,1200) with B, [1400,1450) with C
        QCOMPARE(s.backwardOverlappedNs, 100); // only B is backward compute
        QCOMPARE(s.exposedNs, 200);
        QCOMPARE(s.memcpyBusyNs, 50);
    }

    // One stream, and one of its kernels launched by a call without a stream reference (Score-P writes none on
    // cuLaunchKernelEx): every kernel-launch call of the rank, in time order, pairs with the kernels in order.
    void launchesPairedByOrderOnOneStream()
    {
        Fixture f;
        f.region(0, 100, "forward", 0);
        f.launch(f.s7, 10, 1);
        f.region(10, 20, "cuLaunchKernelEx", 1, RegionKind::HostApi); // no stream reference
        f.region(200, 300, "backward", 0);
        f.launch(f.s7, 210, 1);
        f.kernel(f.s7, 1000, 1100, "k1");
        f.kernel(f.s7, 1100, 1200, "k2");
        f.kernel(f.s7, 1200, 1300, "k3");
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.launchPairing, LaunchPairing::LaunchOrder);
        const auto& ph = ra.phases[std::size_t(laneOf(*t, "CUDA[0:7]"))];
        QCOMPARE(ph[0], Phase::Forward);
        QCOMPARE(ph[1], Phase::Forward);
        QCOMPARE(ph[2], Phase::Backward);
        QVERIFY(ra.warnings.empty());
    }

    // Two streams; one lacks launch records for some kernels: kernels take the next launch in order only if it began
    // before them; the others stay unpaired and the pairing is reported.
    void launchMismatchLeavesStreamUnpaired()
    {
        Fixture f;
        f.region(0, 100, "backward", 0);
        f.launch(f.s7, 10, 1);
        f.launch(f.s17, 20, 1);
        f.kernel(f.s7, 1000, 1100, "k1");
        f.kernel(f.s7, 1100, 1200, "k2");
        f.nccl(f.s17, 1000, 1300);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.launchPairing, LaunchPairing::StreamReferencesPartly);
        QCOMPARE(ra.warnings.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(ra.warnings[0]).startsWith(QStringLiteral("CUDA[0:7]: 1 of 2 kernels paired")),
            ra.warnings[0].c_str());
        QCOMPARE(ra.phases[std::size_t(laneOf(*t, "CUDA[0:7]"))][0], Phase::Backward);
        QCOMPARE(ra.phases[std::size_t(laneOf(*t, "CUDA[0:17]"))][0], Phase::Backward);
        QCOMPARE(ra.phaseFromLaunch, 2ull);
        QCOMPARE(ra.kernelsPaired, 2ull);
        QCOMPARE(ra.kernelsUnpaired, 1ull);
    }

    // Kernels that began before any launch in the trace (launched before recording started) stay unpaired; the
    // launches pair with the kernels after them, in order.
    void kernelsBeforeTheirLaunchStayUnpaired()
    {
        Fixture f;
        f.region(500, 900, "backward", 0);
        f.launch(f.s7, 510, 1);
        f.launch(f.s7, 520, 1);
        f.kernel(f.s7, 100, 200, "early1"); // started before any recorded launch
        f.kernel(f.s7, 300, 400, "early2");
        f.kernel(f.s7, 1000, 1100, "k1");
        f.kernel(f.s7, 1100, 1200, "k2");
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.kernelsPaired, 2ull);
        QCOMPARE(ra.kernelsUnpaired, 2ull);
        const auto& ph = ra.phases[std::size_t(laneOf(*t, "CUDA[0:7]"))];
        QCOMPARE(ph[0], Phase::Unknown);
        QCOMPARE(ph[1], Phase::Unknown);
        QCOMPARE(ph[2], Phase::Backward);
        QCOMPARE(ph[3], Phase::Backward);
    }

    // Every idle nanosecond in one cause: host-bound until the next launch ended (part of it in the data loader),
    // sync wait when the launching thread was blocked in a synchronize as the gap began, queued after the launch
    // ended, unattributed before a copy (no launch).
    void idleBreakdownIsExact()
    {
        Fixture f;
        auto launch = [&](TimeNs s, TimeNs e) {
            const auto i = f.b.addInterval(f.rank, f.cpu, s, e, "cuLaunchKernel", RegionKind::HostApi);
            f.b.addLaunch(f.rank, f.s7, f.cpu, i);
        };
        launch(900, 905);
        f.kernel(f.s7, 1000, 1100, "k1");
        launch(1150, 1200);
        f.kernel(f.s7, 1250, 1300, "k2"); // gap [1100, 1250): 100 host-bound, 50 queued
        f.region(1290, 1420, "cudaStreamSynchronize", 0, RegionKind::HostApi);
        launch(1430, 1440);
        f.kernel(f.s7, 1450, 1500, "k3"); // gap [1300, 1450): 140 sync wait, 10 queued
        f.region(1510, 1590, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0);
        launch(1600, 1650);
        f.kernel(f.s7, 1700, 1800, "k4"); // gap [1500, 1700): 150 host-bound (80 of it loading data), 50 queued
        f.b.addInterval(f.rank, f.s7, 1900, 1950, "memcpy HtoD", RegionKind::Memcpy); // gap [1800, 1900): unattributed
        launch(1960, 1970);
        f.kernel(f.s7, 2000, 2100, "k5"); // gap [1950, 2000): 20 host-bound, 30 queued
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        QCOMPARE(a->ranks[0].kernelsPaired, 5ull);
        const IdleBreakdown b = computeIdleBreakdown(*t, *a, 0, t->extent);
        QCOMPARE(b.gaps, 5ull);
        QCOMPARE(b.hostBoundNs, TimeNs(270));
        QCOMPARE(b.dataLoadingNs, TimeNs(80));
        QCOMPARE(b.syncWaitNs, TimeNs(140));
        QCOMPARE(b.queuedNs, TimeNs(140));
        QCOMPARE(b.unattributedNs, TimeNs(100));
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.idleNs, TimeNs(650));
        QCOMPARE(b.totalNs(), s.idleNs);
        // A window clips the busy time: in [1260, 1480) the one gap is [1300, 1450), between k2 and k3.
        const IdleBreakdown w = computeIdleBreakdown(*t, *a, 0, { 1260, 1480 });
        QCOMPARE(w.totalNs(), computeStats(*t, *a, 0, { 1260, 1480 }).idleNs);
        QCOMPARE(w.syncWaitNs, TimeNs(140));

        // Launch diagnosis: kernels 100, 50, 50, 100, 100 ns against launches of 5, 50, 10, 50, 10 ns.
        const LaunchDiagnosis d = diagnoseLaunches(*t, *a, 0, t->extent);
        QCOMPARE(d.kernels, 5ull);
        QCOMPARE(d.medianKernelNs, TimeNs(100));
        QCOMPARE(d.medianLaunchNs, TimeNs(10));
        QCOMPARE(d.p90LaunchNs, TimeNs(50));
        QCOMPARE(d.shorterThanLaunch, 0.0);
        QCOMPARE(QString::fromStdString(idleFinding(s, b, d)),
            QStringLiteral("GPU idle 59 %: 42 % of it waiting for the CPU to launch; 0 % of kernels run shorter than "
                           "their launch (hint: larger batches, CUDA graphs or torch.compile, i.e. fewer and larger "
                           "kernels, usually help)"));
    }

    // A copy whose call references its stream feeds its gap like a launch: host-bound until the call ended, queued
    // after.
    void copyCallsAttributeGaps()
    {
        Fixture f;
        const auto k = f.b.addInterval(f.rank, f.cpu, 900, 905, "cuLaunchKernel", RegionKind::HostApi);
        f.b.addLaunch(f.rank, f.s7, f.cpu, k);
        f.kernel(f.s7, 1000, 1100, "k1");
        const auto c = f.b.addInterval(f.rank, f.cpu, 1150, 1180, "cuMemcpyHtoDAsync_v2", RegionKind::HostApi);
        f.b.addLaunch(f.rank, f.s7, f.cpu, c);
        f.b.addInterval(f.rank, f.s7, 1200, 1300, "memcpy HtoD", RegionKind::Memcpy); // gap [1100, 1200)
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        QCOMPARE(a->ranks[0].kernelsPaired, 1ull); // the copy call is not a kernel launch
        const IdleBreakdown b = computeIdleBreakdown(*t, *a, 0, t->extent);
        QCOMPARE(b.hostBoundNs, TimeNs(80));
        QCOMPARE(b.queuedNs, TimeNs(20));
        QCOMPARE(b.unattributedNs, TimeNs(0));
        QCOMPARE(diagnoseLaunches(*t, *a, 0, t->extent).kernels, 1ull); // the copy is not counted as a kernel
    }

    // Without launches, the name decides; with neither, the step heuristic.
    void phasesFromNamesAndHeuristic()
    {
        Fixture f;
        f.region(0, 10000, "ProfilerStep#3");
        f.kernel(f.s7, 100, 200, "k_first");
        f.kernel(f.s7, 300, 400, "softmax_warp_backward");
        f.kernel(f.s7, 500, 600, "k_middle");
        f.kernel(f.s7, 700, 800, "multi_tensor_apply_kernel<Adam>");
        f.kernel(f.s7, 900, 1000, "k_last");
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        const auto& ph = ra.phases[std::size_t(laneOf(*t, "CUDA[0:7]"))];
        QCOMPARE(ph[0], Phase::Forward); // heuristic: before the first backward kernel
        QCOMPARE(ph[1], Phase::Backward); // name
        QCOMPARE(ph[2], Phase::Backward); // heuristic: between backward and optimizer
        QCOMPARE(ph[3], Phase::Optimizer); // name
        QCOMPARE(ph[4], Phase::Unknown);
        QCOMPARE(ra.phaseSource, PhaseSource::KernelName);
        QCOMPARE(ra.phaseFromLaunch, 0ull);
        QCOMPARE(ra.phaseFromName, 2ull);
        QCOMPARE(ra.phaseFromHeuristic, 2ull);
        QCOMPARE(ra.phaseUnknown, 1ull);
        QCOMPARE(ra.stepSource, StepSource::Regions);
        QVERIFY(!ra.stepsByLaunch);
    }

    // Steps from ProfilerStep regions; a kernel belongs to the step of its launch even when it runs later.
    void stepsFromRegions()
    {
        Fixture f;
        f.region(0, 1000, "ProfilerStep#1", 0);
        f.launch(f.s7, 900, 1);
        f.region(1000, 2000, "ProfilerStep#2", 0);
        f.launch(f.s7, 1500, 1);
        f.launch(f.s17, 1600, 1);
        f.kernel(f.s7, 1100, 1200, "kernel_of_step_1");
        f.kernel(f.s7, 1500, 1700, "kernel_of_step_2");
        f.nccl(f.s17, 1650, 1800);
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.steps.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(ra.steps[0].name), QStringLiteral("ProfilerStep#1"));
        QCOMPARE(ra.steps[0].hostRange, (TimeRange { 0, 1000 }));
        QCOMPARE(ra.steps[1].hostRange, (TimeRange { 1000, 2000 }));
        // On the GPU: to the end of the work each host step launched.
        QCOMPARE(ra.steps[0].range, (TimeRange { 0, 1200 }));
        QCOMPARE(ra.steps[1].range, (TimeRange { 1200, 1800 }));
        QCOMPARE(ra.stepAxis, StepAxis::GpuByLaunch);
        QCOMPARE(ra.steps[1].index, 1);
        QVERIFY(ra.stepsByLaunch);
        const int s7 = laneOf(*t, "CUDA[0:7]");
        QCOMPARE(stepOfInterval(*t, *a, { 0, s7, 0 }), 0);
        QCOMPARE(stepOfInterval(*t, *a, { 0, s7, 1 }), 1);
        const auto steps = computeStepStats(*t, *a, 0);
        QCOMPARE(steps.size(), std::size_t(2));
        QCOMPARE(steps[0].kernelCount, 1ull);
        QCOMPARE(steps[0].computeBusyNs, 100);
        QCOMPARE(steps[0].commBusyNs, 0);
        QVERIFY(!steps[0].overlapRatio.has_value());
        QCOMPARE(steps[1].kernelCount, 2ull);
        QCOMPARE(steps[1].computeBusyNs, 200);
        QCOMPARE(steps[1].commBusyNs, 150);
        QCOMPARE(steps[1].overlappedNs, 50);
        QCOMPARE(steps[1].exposedNs, 100);
        QCOMPARE(steps[1].spanNs, 600); // the whole window lies between the rank's first and last GPU work
        QCOMPARE(steps[1].idleNs, 300);
        // Clipped to a window.
        const auto clipped = computeStepStats(*t, *a, 0, { 1600, 2000 });
        QCOMPARE(clipped[0].kernelCount, 0ull);
        QCOMPARE(clipped[1].computeBusyNs, 100);
        QCOMPARE(clipped[1].commBusyNs, 150);
    }

    // No step regions: steps end with each run of optimizer kernels (with an unrelated kernel inside the run).
    void stepsFromKernelPattern()
    {
        Fixture f;
        TimeNs t0 = 0;
        for (int step = 0; step < 3; ++step) {
            for (int k = 0; k < 20; ++k, t0 += 10)
                f.kernel(f.s7, t0, t0 + 5, k < 10 ? "fwd_kernel" : "bwd_kernel");
            f.kernel(f.s7, t0, t0 + 5, "multi_tensor_apply_kernel<A>");
            t0 += 10;
            f.kernel(f.s7, t0, t0 + 5, "vectorized_elementwise_kernel<Mul>");
            t0 += 10;
            f.kernel(f.s7, t0, t0 + 5, "multi_tensor_apply_kernel<B>");
            t0 += 10;
        }
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.stepSource, StepSource::KernelPattern);
        QCOMPARE(ra.steps.size(), std::size_t(3));
        QCOMPARE(ra.steps[0].range, (TimeRange { 0, 225 }));
        QCOMPARE(ra.steps[1].range, (TimeRange { 225, 455 }));
        QCOMPARE(ra.steps[2].range, (TimeRange { 455, 685 }));
        QCOMPARE(QString::fromStdString(ra.steps[2].name), QStringLiteral("step 2"));
        QVERIFY(!ra.stepsByLaunch);
        const auto steps = computeStepStats(*t, *a, 0);
        for (const auto& s : steps) {
            QCOMPARE(s.kernelCount, 23ull);
            QCOMPARE(s.computeBusyNs, 23 * 5);
        }
        QCOMPARE(ra.phaseFromName, 3ull * 22); // fwd/bwd/optimizer by name; the Mul kernel stays unknown
    }

    // The activity segments are built in time chunks; they must equal one interval_map over everything,
    // including intervals that span many chunks and overlaps across three streams.
    void chunkedActivityMatchesOneMap()
    {
        Fixture f;
        const int s8 = f.stream(8);
        std::uint64_t x = 12345;
        auto rnd = [&](std::uint64_t m) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            return TimeNs((x >> 33) % m);
        };
        struct Item
        {
            TimeNs s, e;
            std::uint8_t bits;
        };
        std::vector<Item> all;
        TimeNs t7 = 0, t8 = 0, t17 = 0;
        for (int i = 0; i < 5000; ++i) {
            t7 += i % 2 ? rnd(20) : 0; // back-to-back kernels: chunk borders inside busy time
            const TimeNs d7 = 1 + rnd(15);
            f.kernel(f.s7, t7, t7 + d7, i % 3 ? "nvjet_gemm" : "renamed_kernel");
            all.push_back({ t7, t7 + d7, std::uint8_t(ActivityCompute | (i % 3 ? 0 : ActivityUnclassified)) });
            t7 += d7;
            t8 += rnd(40);
            const TimeNs d8 = rnd(10); // some zero-length
            f.b.addInterval(f.rank, s8, t8, t8 + d8, "memcpy DtoD", RegionKind::Memcpy);
            if (d8 > 0)
                all.push_back({ t8, t8 + d8, ActivityMemcpy });
            t8 += d8;
            if (i % 50 == 0) {
                const TimeNs d17 = 1 + rnd(i % 500 == 0 ? 60000 : 300); // some span many chunks
                f.nccl(f.s17, t17, t17 + d17);
                all.push_back({ t17, t17 + d17, ActivityComm });
                t17 += d17 + rnd(100);
            }
        }
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        detail::MaskMap ref;
        for (const Item& it : all)
            ref.add(std::make_pair(boost::icl::right_open_interval<TimeNs>(it.s, it.e), it.bits));
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.activityStart.size(), boost::icl::interval_count(ref));
        std::size_t k = 0;
        for (const auto& [iv, m] : ref) {
            QCOMPARE(ra.activityStart[k], boost::icl::lower(iv));
            QCOMPARE(ra.activityEnd[k], boost::icl::upper(iv));
            QCOMPARE(ra.activityMask[k], m);
            ++k;
        }
        // And a window statistic against the reference map.
        const TimeRange w { t7 / 3, t7 / 2 };
        TimeNs comm = 0, overlap = 0;
        for (const auto& [iv, m] : ref& boost::icl::right_open_interval<TimeNs>(w.start, w.end)) {
            const TimeNs len = boost::icl::upper(iv) - boost::icl::lower(iv);
            if (m & ActivityComm)
                comm += len;
            if ((m & ActivityComm) && (m & ActivityCompute))
                overlap += len;
        }
        const WindowStats s = computeStats(*t, *a, 0, w);
        QCOMPARE(s.commBusyNs, comm);
        QCOMPARE(s.overlappedNs, overlap);
        QVERIFY(comm > 0);
    }

    void noCommunicationSingleRank()
    {
        Fixture f;
        f.kernel(f.s7, 0, 100);
        f.kernel(f.s7, 200, 300, "nvjet_gemm");
        auto t = f.b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats s = computeStats(*t, *a, 0, t->extent);
        QCOMPARE(s.kernelCount, 2ull);
        QCOMPARE(s.commKernelCount, 0ull);
        QCOMPARE(s.commKernelSumNs, 0);
        QCOMPARE(s.commBusyNs, 0);
        QCOMPARE(s.overlappedNs, 0);
        QCOMPARE(s.exposedNs, 0);
        QCOMPARE(s.backwardOverlappedNs, 0);
        QVERIFY(!s.overlapRatio.has_value());
        QCOMPARE(s.computeBusyNs, 200);
        QCOMPARE(s.idleNs, 100);
        const WindowStats total = computeTotal(*t, *a, t->extent);
        QVERIFY(!total.overlapRatio.has_value());
        QCOMPARE(total.computeBusyNs, 200);
        QCOMPARE(a->ranks[0].phaseSource, PhaseSource::None);
        QCOMPARE(a->ranks[0].stepSource, StepSource::None);
    }

    void totalOverRanks()
    {
        TraceBuilder b;
        for (int r = 0; r < 2; ++r) {
            b.addRank("Rank " + std::to_string(r), "node0", r, r);
            const int s7 = b.addLane(r, "CUDA[0:7]", LaneKind::GpuStream, r, 7);
            const int s17 = b.addLane(r, "CUDA[0:17]", LaneKind::GpuStream, r, 17);
            b.addInterval(r, s7, 0, 100, "gemm_kernel", RegionKind::Kernel);
            b.addInterval(r, s17, 50, r == 0 ? 150 : 350, "ncclKernel_AllReduce_RING_LL_Sum_float", RegionKind::Kernel);
        }
        auto t = b.finish();
        auto a = analyze(*t, Rules::defaults());
        const WindowStats total = computeTotal(*t, *a, t->extent);
        QCOMPARE(total.commBusyNs, 100 + 300);
        QCOMPARE(total.overlappedNs, 100);
        QCOMPARE(total.exposedNs, 300);
        QCOMPARE(*total.overlapRatio, 0.25);
        QCOMPARE(total.spanNs, 150 + 350);
        QCOMPARE(total.kernelCount, 4ull);
    }

    void rulesFileErrors_data()
    {
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("problem");
        QTest::newRow("not json") << "{ \"rules\": [ }"
                                  << "not valid JSON at line 1, column 15";
        QTest::newRow("no rules") << "{ \"description\": \"x\" }"
                                  << "missing \"rules\" array";
        QTest::newRow("bad regex")
            << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"(nccl\",\"category\":\"communication\"}]}"
            << "rule 1 (\"a\"): bad pattern at offset 5";
        QTest::newRow("bad category") << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"x\",\"category\":\"gpu\"}]}"
                                      << "rule 1 (\"a\"): unknown category \"gpu\"";
        QTest::newRow("bad target")
            << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"x\",\"category\":\"compute\",\"target\":\"cpu\"}]}"
            << "unknown target \"cpu\"";
        QTest::newRow("phase without subgroup")
            << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"x\",\"category\":\"phase\"}]}"
            << "a phase rule needs subgroup forward, backward or optimizer";
        QTest::newRow("duplicate id") << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"x\",\"category\":\"compute\"},{"
                                         "\"id\":\"a\",\"pattern\":\"y\",\"category\":\"compute\"}]}"
                                      << "rule 2: duplicate id \"a\"";
        QTest::newRow("typo key")
            << "{\"rules\":[{\"id\":\"a\",\"pattern\":\"x\",\"category\":\"compute\",\"catchall\":true}]}"
            << "rule 1: unknown key \"catchall\"";
        QTest::newRow("missing pattern") << "{\"rules\":[{\"id\":\"a\",\"category\":\"compute\"}]}"
                                         << "rule 1: missing \"pattern\"";
    }
    void rulesFileErrors()
    {
        QFETCH(QString, content);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("rules.json")).toStdString();
        std::ofstream(path) << content.toStdString();
        try {
            Rules::fromFile(path, false);
            QFAIL("no error");
        } catch (const std::runtime_error& e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.startsWith(QString::fromStdString(path) + QStringLiteral(": ")), qPrintable(msg));
            QVERIFY2(msg.contains(problem), qPrintable(msg));
        }
    }
    void rulesFileMissing()
    {
        try {
            Rules::fromFile("/nonexistent/rules.json", true);
            QFAIL("no error");
        } catch (const std::runtime_error& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                QStringLiteral("/nonexistent/rules.json: cannot open the rules file"));
        }
    }

    // Replacing vs extending the defaults, and the JSON round trip.
    void rulesReplaceExtend()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("rules.json")).toStdString();
        std::ofstream(path) << "{\"description\":\"mine\",\"rules\":[\n"
                               "            "
                               "{\"id\":\"custom-comm\",\"pattern\":\"^my_allreduce\",\"target\":\"kernel\","
                               "\"category\":\"communication\",\n"
                               "             \"subgroup\":\"AllReduce\"}]}";
        const Rules replaced = Rules::fromFile(path, false);
        QCOMPARE(replaced.rules().size(), std::size_t(1));
        QCOMPARE(replaced.classify("my_allreduce_v3", RegionKind::Kernel).category, Category::Communication);
        QCOMPARE(QString::fromStdString(replaced.classify("my_allreduce_v3", RegionKind::Kernel).subgroup),
            QStringLiteral("AllReduce"));
        // Without a catch-all rule, an unmatched kernel is still compute, and unclassified.
        const NameClass nvjet = replaced.classify("nvjet_sm90", RegionKind::Kernel);
        QCOMPARE(nvjet.category, Category::Compute);
        QVERIFY(nvjet.unclassified);
        QCOMPARE(nvjet.rule, -1);

        const Rules extended = Rules::fromFile(path, true);
        QCOMPARE(extended.rules().size(), Rules::defaults().rules().size() + 1);
        QCOMPARE(extended.classify("my_allreduce_v3", RegionKind::Kernel).category, Category::Communication);
        QCOMPARE(QString::fromStdString(extended.classify("nvjet_sm90", RegionKind::Kernel).subgroup),
            QStringLiteral("gemm"));

        const Rules again = Rules::fromJson(Rules::defaults().toJson(), "round trip");
        QCOMPARE(again.rules().size(), Rules::defaults().rules().size());
        for (std::size_t i = 0; i < again.rules().size(); ++i) {
            QCOMPARE(again.rules()[i].pattern, Rules::defaults().rules()[i].pattern);
            QCOMPARE(again.rules()[i].catchAll, Rules::defaults().rules()[i].catchAll);
        }
    }

    // The compiled-in defaults are exactly resources/rules.json.
    void defaultsMatchResourceFile()
    {
        std::ifstream in(EXPOSURE_SOURCE_DIR "/resources/rules.json");
        QVERIFY(in.good());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QCOMPARE(QString::fromStdString(Rules::defaultJson()), QString::fromStdString(text));
    }
};

QTEST_APPLESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
