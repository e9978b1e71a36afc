// The probe ops of `python -m torch_memopt.probe` (issue 7): small kernels that
// measure one property of the GPU's memory hierarchy each. Schemas here, in one
// block; CUDA implementations one file per probe in csrc/probe/*.cu. They are
// measurement tools, not library ops: no CPU kernels (the driver says a probe
// needs a GPU), no fake kernels, no autograd.
//
// Conventions: a probe op launches its kernel(s) on the current stream and
// returns at once; the driver times it with CUDA events when the figure is a
// time. Probes whose figure is a cycle count (latency) time themselves inside
// the kernel with clock64() and %globaltimer and return the counts.
#include <torch/library.h>

TORCH_LIBRARY(memopt_probe, m) {
  // 1. Latency staircase. chain: int32 [n] on the GPU, chain[i] = the next index
  // (a random cyclic permutation, built by the driver). One thread follows it
  // `steps` times after a warm-up pass of `warmup` steps; returns int64 [3]:
  // (clock64 cycles, %globaltimer ns, the final index, so the chase is not
  // optimized away).
  m.def("pointer_chase(Tensor chain, int steps, int warmup) -> Tensor");
  // Registers: one thread runs `steps` dependent FFMAs (each needs the last one's
  // result); returns int64 [3] (cycles, ns, the result's bits).
  m.def("register_chain(int steps) -> Tensor");
  // 2. Shared memory. smem_latency: the same chase inside a block's shared
  // memory (`n` int32 entries, n * 4 <= 48 KB); returns int64 [3] as above.
  m.def("smem_latency(int n, int steps) -> Tensor");
  // smem_read: `blocks` blocks of 1024 threads, each thread reads shared word
  // (lane * stride) % 1024 + a per-iteration offset that keeps the same bank
  // pattern, `iters` times (stride 0: every lane the same word, the broadcast);
  // out: float32 [blocks * 1024], written so the reads are kept. Timed by the
  // driver: bytes = blocks * 1024 * iters * 4.
  m.def("smem_read(int blocks, int stride, int iters, Tensor(a!) out) -> ()");
  // smem_tile_columns: each warp reads a 32x32 float tile by columns (lane i
  // reads row i of column c): 32-way bank conflicts; padded=True lays the tile
  // out as 32x33, conflict-free. `iters` column sweeps; out as smem_read.
  m.def("smem_tile_columns(int blocks, bool padded, int iters, Tensor(a!) out) -> ()");
  // 3. Global memory. Bandwidth with `vec_bytes` (4, 8 or 16) a thread per access:
  // read (src -> a per-thread sum written to sink, one float per thread),
  // write (dst filled), copy (src -> dst). Tensors are float32, contiguous, of
  // a size divisible by vec_bytes / 4.
  m.def("global_read(Tensor src, int vec_bytes, Tensor(a!) sink) -> ()");
  m.def("global_write(Tensor(a!) dst, int vec_bytes) -> ()");
  m.def("global_copy(Tensor src, Tensor(a!) dst, int vec_bytes) -> ()");
  // Coalescing: thread t of the grid reads src[(t * stride + offset) % src.numel()],
  // 4 bytes, once; `threads` threads; the sum to sink[t].
  m.def("strided_read(Tensor src, int stride, int offset, int threads, Tensor(a!) sink) -> ()");
  // 4. AoS against SoA: the particle update x += v * dt for n particles.
  // aos: float32 [n, 6] (x, y, z, vx, vy, vz per particle); soa: float32 [6, n].
  m.def("particles_aos(Tensor(a!) particles, float dt) -> ()");
  m.def("particles_soa(Tensor(a!) particles, float dt) -> ()");
  // 5. Constant memory. The op first copies `table` (float32, at most 16384
  // entries) into a __constant__ array, then each of `threads` threads reads
  // `iters` entries and writes their sum to out[t]. mode: 0 = constant memory,
  // every lane of a warp the same address (broadcast); 1 = constant memory,
  // each lane its own address (divergent); 2 = the table from global memory
  // through __ldg, each lane its own address; 3 = the same with plain loads.
  m.def("constant_read(Tensor table, int mode, int threads, int iters, Tensor(a!) out) -> ()");
  // 6. The local-memory trap: out[i] = f(in[i]) through a 16-float per-thread
  // array indexed dynamically (unrolled=False: the array lives in local memory)
  // or with the loop unrolled and indices known at compile time (unrolled=True:
  // registers). local_bytes: cudaFuncGetAttributes(localSizeBytes) of the kernel.
  m.def("local_array(Tensor input, Tensor(a!) out, bool unrolled) -> ()");
  m.def("local_bytes(bool unrolled) -> int");
  // 7. Registers and occupancy: one kernel (a register-hungry FMA chain over
  // `input`) built with register caps 32, 64, 128 and 255 (`cap`), run with
  // `smem_bytes` of dynamic shared memory a block of `block` threads.
  // occupancy_info returns int64 [4]: (registers a thread, local bytes a thread,
  // max active blocks per SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor,
  // max threads per block).
  m.def("occupancy_run(Tensor input, Tensor(a!) out, int cap, int block, int smem_bytes) -> ()");
  m.def("occupancy_info(int cap, int block, int smem_bytes) -> Tensor");
  // 8. Unified memory: `bytes` of float32 touched by a kernel after the CPU wrote
  // them. mode 0: cudaMallocManaged, CPU writes, kernel reads (on-demand page
  // migration); 1: the same with cudaMemPrefetchAsync to the GPU first; 2:
  // cudaMalloc + an explicit cudaMemcpy from pinned host memory. Returns
  // float64 [2]: (ms from the start of migration/copy to the kernel's end, ms
  // of the kernel alone), timed with CUDA events inside the op; memory freed.
  m.def("unified_memory(int bytes, int mode) -> Tensor");
  // 9. Instruction fetch: code_fetch runs one block of the kernel of code
  // shape `shape` (code_fetch_shapes: int64 [shapes, 3], each shape's
  // segments, instructions executed a segment, and instructions jumped over
  // after each), writing 128 floats to out. code_fetch_evict runs 128 KB of
  // other code on every SM (out: at least 512 floats an SM).
  m.def("code_fetch(int shape, Tensor(a!) out) -> ()");
  m.def("code_fetch_evict(Tensor(a!) out) -> ()");
  m.def("code_fetch_shapes() -> Tensor");
  // The benchmark timer's deep L2 flush (l2_flush.cu): buffer (any dtype,
  // contiguous, whole 128-byte lines) zeroed with an evict_last policy, so
  // that no line a kernel kept with an evict_last hint outlives it.
  m.def("l2_flush_deep(Tensor(a!) buffer) -> ()");
}
