// The order in which the tiled GEMM kernels walk their output tiles: in groups
// of tile-rows (gemm/group_rows.h says why), so the blocks resident at once
// share strips of A and B in L2.
#pragma once

#include <cstdint>

#include "gemm/group_rows.h"

namespace memopt {

// The (tile_m, tile_n) of output tile `id`: consecutive ids walk down a group
// of group_rows tile-rows before moving one tile to the right. The wgmma
// rung's persistent kernel takes group_rows from the plan
// (gemm_plan.h's wgmma_group_rows); the other kernels kGroupRows.
__device__ __forceinline__ void grouped_tile(int64_t id, int64_t tiles_m, int64_t tiles_n,
                                             int64_t& tile_m, int64_t& tile_n,
                                             int group_rows = kGroupRows) {
  const int64_t per_group = group_rows * tiles_n;
  const int64_t first_m = (id / per_group) * group_rows;
  const int64_t rows = min(tiles_m - first_m, static_cast<int64_t>(group_rows));
  tile_m = first_m + (id % per_group) % rows;
  tile_n = (id % per_group) / rows;
}

}  // namespace memopt
