// Is synccheck's "Barrier overflow" on cp.async.mbarrier.arrive (the incrementing form) about the program or the
// tool? Three kernels, each checked for its result and run under compute-sanitizer --tool synccheck:
//  libcu: cuda::memcpy_async with a cuda::barrier, a control (with CUDA 13.0 this call's PTX has no
//         cp.async.mbarrier.arrive of either form)
//  incr:  inline PTX as tessel emits it: barrier count 1; every thread cp.async + cp.async.mbarrier.arrive
//         (increment form), bar.sync, one thread mbarrier.arrive, everyone waits on parity 0
//  noinc: barrier count = threads; every thread cp.async + cp.async.mbarrier.arrive.noinc; everyone waits
#include <cuda/barrier>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
namespace cg = cooperative_groups;

__global__ void libcu(const float4* x, float4* y) {
  __shared__ float4 buf[128];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(&buf[threadIdx.x], &x[blockIdx.x * 128 + threadIdx.x], cuda::aligned_size_t<16>(16), bar);
  bar.arrive_and_wait();
  y[blockIdx.x * 128 + threadIdx.x] = buf[threadIdx.x ^ 1];
}

template <bool NOINC>
__global__ void raw(const float4* x, float4* y) {
  __shared__ float4 buf[128];
  __shared__ uint64_t bar;
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  uint32_t d = (uint32_t)__cvta_generic_to_shared(&buf[threadIdx.x]);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(b), "r"(NOINC ? 128 : 1));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(&x[blockIdx.x * 128 + threadIdx.x]));
  if (NOINC) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(b));
  } else {
    asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" ::"r"(b));
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0], 1;" ::"r"(b));
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }" ::"r"(b));
  y[blockIdx.x * 128 + threadIdx.x] = buf[threadIdx.x ^ 1];
}

int main(int argc, char** argv) {
  int only = argc > 1 ? atoi(argv[1]) : -1;
  const int n = 128 * 64;
  float4 *x, *y;
  cudaMalloc(&x, n * 16);
  cudaMalloc(&y, n * 16);
  float4* h = new float4[n];
  for (int i = 0; i < n; i++) h[i] = make_float4(i, i + .25f, i + .5f, i + .75f);
  cudaMemcpy(x, h, n * 16, cudaMemcpyHostToDevice);
  const char* names[] = {"libcu", "incr", "noinc"};
  for (int k = 0; k < 3; k++) {
    if (only >= 0 && k != only) continue;
    cudaMemset(y, 0xff, n * 16);
    if (k == 0) libcu<<<64, 128>>>(x, y);
    if (k == 1) raw<false><<<64, 128>>>(x, y);
    if (k == 2) raw<true><<<64, 128>>>(x, y);
    cudaError_t e = cudaDeviceSynchronize();
    float4* g = new float4[n];
    cudaMemcpy(g, y, n * 16, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += g[i].x != h[i ^ 1].x || g[i].w != h[i ^ 1].w;
    printf("%s: %s, %d wrong\n", names[k], cudaGetErrorString(e), bad);
    delete[] g;
  }
  return 0;
}
