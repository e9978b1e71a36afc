// A launch of thread-block clusters (Hopper, sm_90): cudaLaunchKernelEx with one
// cluster-dimension attribute. The norm, softmax, wgmma and splitk launchers each
// built the same 10-line cudaLaunchConfig_t; this is that block once. ATen-free
// (the GEMM launchers are): launch() returns the runtime's error, which is also
// the last error that the ATen callers' post-launch check reads.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace memopt {

class ClusterLaunch {
 public:
  ClusterLaunch(dim3 grid, dim3 block, dim3 cluster, cudaStream_t stream,
                size_t dynamic_smem_bytes = 0) {
    attr_.id = cudaLaunchAttributeClusterDimension;
    attr_.val.clusterDim.x = cluster.x;
    attr_.val.clusterDim.y = cluster.y;
    attr_.val.clusterDim.z = cluster.z;
    config_.gridDim = grid;
    config_.blockDim = block;
    config_.dynamicSmemBytes = dynamic_smem_bytes;
    config_.stream = stream;
    config_.attrs = &attr_;
    config_.numAttrs = 1;
  }
  // config_.attrs points into this object.
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;

  // For the occupancy API (cudaOccupancyMaxActiveClusters) and for a grid sized
  // after it.
  cudaLaunchConfig_t& config() { return config_; }

  template <typename... KernelArgs, typename... Args>
  cudaError_t launch(void (*kernel)(KernelArgs...), Args&&... args) {
    return cudaLaunchKernelEx(&config_, kernel, std::forward<Args>(args)...);
  }

 private:
  cudaLaunchConfig_t config_ = {};
  cudaLaunchAttribute attr_ = {};
};

}  // namespace memopt
