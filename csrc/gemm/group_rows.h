// The tile-rows of a group in the tiled GEMM kernels' tile order
// (kernels/tile_order.cuh), in a header of its own so that the host's plan
// (gemm_plan.cpp) and the kernels read one number.
#pragma once

namespace memopt {

// 8 tile-rows: the blocks resident at once share strips of A and B in L2 (at
// 4096^3 fp32 each operand is 64 MB, over the H200's 60 MB L2; row-major
// order would stream all of B once per tile-row).
constexpr int kGroupRows = 8;

}  // namespace memopt
