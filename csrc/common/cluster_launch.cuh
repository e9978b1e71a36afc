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

  // For a grid sized after max_active_clusters.
  cudaLaunchConfig_t& config() { return config_; }

  // Clusters of `kernel` under this config that the device runs at once
  // (cudaOccupancyMaxActiveClusters: GPCs of 16-18 SMs may leave an SM or two
  // of a 132-SM part out of every cluster shape but 1); 0 where the runtime
  // cannot say, its error cleared so that it is not read as the next launch's.
  template <typename... KernelArgs>
  int max_active_clusters(void (*kernel)(KernelArgs...)) {
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config_) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return clusters;
  }

  template <typename... KernelArgs, typename... Args>
  cudaError_t launch(void (*kernel)(KernelArgs...), Args&&... args) {
    return cudaLaunchKernelEx(&config_, kernel, std::forward<Args>(args)...);
  }

 private:
  cudaLaunchConfig_t config_ = {};
  cudaLaunchAttribute attr_ = {};
};

}  // namespace memopt
