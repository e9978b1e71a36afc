// softmax's online kernel with each row's ends peeled off (softmax_narrow.h):
// 16-byte packs for all of a row but its first and last few elements. Its own
// file, so that two cores compile it beside the other softmax kernels.
#include "common/dispatch.h"
#include "softmax/softmax_launch.cuh"
#include "softmax/softmax_narrow.h"

namespace memopt {

void launch_softmax_peeled(const SoftmaxRows& p, int64_t rows, cudaStream_t stream) {
  MEMOPT_DISPATCH_FLOAT_TYPES(p.input.scalar_type(), "memopt_softmax_peeled", [&] {
    if (p.widen_to_fp32) {
      launch_online_sized<scalar_t, float, true>(p, rows, stream);
    } else {
      launch_online_sized<scalar_t, scalar_t, true>(p, rows, stream);
    }
  });
}

}  // namespace memopt
