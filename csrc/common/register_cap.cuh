// The minimum-blocks argument of __launch_bounds__ that caps a kernel at 64
// registers a thread: an SM's 65536 registers then hold 1024 threads, so
// 1024 / kThreads blocks. Left to itself ptxas gives the wide norm and softmax
// kernels 77-90 registers, which halves the blocks an SM holds (1 of 512
// threads instead of 2).
#pragma once

namespace memopt {

template <int kThreads>
inline constexpr int kMinBlocksAt64Registers = 65536 / 64 / kThreads;

}  // namespace memopt
