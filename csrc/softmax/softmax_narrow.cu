// softmax's online and cluster kernels with one-element packs (softmax_narrow.h).
// A thread keeps 32 elements, as the 16-byte kernels do; only the load and
// store instructions multiply (a warp's still covers 64-128 contiguous bytes,
// whole sectors).
#include "common/dispatch.h"
#include "softmax/softmax_launch.cuh"
#include "softmax/softmax_narrow.h"

namespace memopt {

void launch_softmax_narrow(const SoftmaxRows& p, int64_t rows, bool cluster, cudaStream_t stream) {
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_narrow", [&] {
    constexpr int kBytes = sizeof(scalar_t);
    const auto launch = [&](auto out_zero) {
      using out_t = decltype(out_zero);
      if (cluster) {
        launch_cluster<scalar_t, out_t, kBytes>(p, rows, stream);
      } else {
        launch_online_fewest<scalar_t, out_t, kSoftmaxThreadElems, kBytes>(p, rows, p.dim_size,
                                                                           stream);
      }
    };
    if (p.widen_to_fp32) {
      launch(float{});
    } else {
      launch(scalar_t{});
    }
  });
}

}  // namespace memopt
