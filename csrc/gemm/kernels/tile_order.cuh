// The order in which the tiled GEMM kernels walk their output tiles: in groups
// of kGroupRows tile-rows, so the blocks resident at once share strips of A
// and B in L2 (at 4096^3 fp32 each operand is 64 MB, over the H200's 60 MB L2;
// row-major order would stream all of B once per tile-row).
#pragma once

#include <cstdint>

namespace memopt {

constexpr int kGroupRows = 8;  // tile-rows per L2 group

// The (tile_m, tile_n) of output tile `id`: consecutive ids walk down a group
// of kGroupRows tile-rows before moving one tile to the right.
__device__ __forceinline__ void grouped_tile(int64_t id, int64_t tiles_m, int64_t tiles_n,
                                             int64_t& tile_m, int64_t& tile_n) {
  const int64_t per_group = kGroupRows * tiles_n;
  const int64_t first_m = (id / per_group) * kGroupRows;
  const int64_t rows = min(tiles_m - first_m, static_cast<int64_t>(kGroupRows));
  tile_m = first_m + (id % per_group) % rows;
  tile_n = (id % per_group) / rows;
}

}  // namespace memopt
