// The Python entry of torch_memopt._C (setup.py builds it; the CMake LibTorch
// library leaves it out). Importing the module runs the static TORCH_LIBRARY
// registrations of the other files; its functions list variants and read
// kernels' resource use.
#include <Python.h>

#include <c10/util/Exception.h>

#include "common/kernel_registry.h"
#include "common/variants.h"
#include "gemm/gemm_plan.h"
#include "norm/norm_common.h"
#include "softmax/softmax_common.h"

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace {

// variants(op: str, device_type: str, capability: int) -> list[str]
PyObject* variants(PyObject* /*self*/, PyObject* args) {
  const char* op = nullptr;
  const char* device_type = nullptr;
  int capability = 0;
  if (!PyArg_ParseTuple(args, "ssi", &op, &device_type, &capability)) return nullptr;
  const std::string device(device_type);
  std::vector<std::string> names;
  if (device == "cpu") {
    names = memopt::available_variants(op, c10::DeviceType::CPU, 0);
  } else if (device == "cuda") {
    names = memopt::available_variants(op, c10::DeviceType::CUDA, capability);
  } else {
    PyErr_Format(PyExc_ValueError,
                 "torch_memopt.variants: expected device type 'cpu' or 'cuda', got '%s'",
                 device_type);
    return nullptr;
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(names.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyUnicode_FromString(names[i].c_str()));
  }
  return list;
}

// Whether this build compiled the CUDA kernels (decided by nvcc at build time,
// not by whether a GPU is present).
PyObject* built_with_cuda(PyObject* /*self*/, PyObject* /*args*/) {
#ifdef MEMOPT_WITH_CUDA
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

// A dict of one kernel's attributes under kernel_info's keys; nullptr with the
// Python error set when an allocation fails.
PyObject* attributes_dict(const memopt::KernelAttributes& a) {
  return Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:i}", "label", a.label.c_str(), "registers",
                       a.registers, "static_shared_bytes", a.static_shared_bytes, "local_bytes",
                       a.local_bytes, "max_threads_per_block", a.max_threads_per_block,
                       "max_dynamic_shared_bytes", a.max_dynamic_shared_bytes);
}

// kernel_info(op: str, variant: str) -> list[dict]. The registry's
// c10::ValueError (unknown op or variant) becomes a ValueError, its other
// errors (no CUDA kernels in the build, no GPU) a RuntimeError.
PyObject* kernel_info(PyObject* /*self*/, PyObject* args) {
  const char* op = nullptr;
  const char* variant = nullptr;
  if (!PyArg_ParseTuple(args, "ss", &op, &variant)) return nullptr;
  std::vector<memopt::KernelAttributes> kernels;
  try {
    kernels = memopt::kernel_attributes(op, variant);
  } catch (const c10::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what_without_backtrace());
    return nullptr;
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(kernels.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < kernels.size(); ++i) {
    PyObject* entry = attributes_dict(kernels[i]);
    if (entry == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), entry);
  }
  return list;
}

// gemm_plan(M, N, K, half, capability, sm_count, tma_as_is, b_k_major, tf32) -> dict:
// what auto runs for the shape on the GPU described (gemm/gemm_plan.h).
PyObject* gemm_plan(PyObject* /*self*/, PyObject* args) {
  long long M = 0, N = 0, K = 0;
  int half = 0, capability = 0, sm_count = 0, tma_as_is = 0, b_k_major = 0, tf32 = 0;
  if (!PyArg_ParseTuple(args, "LLLpiippp", &M, &N, &K, &half, &capability, &sm_count, &tma_as_is,
                        &b_k_major, &tf32)) {
    return nullptr;
  }
  const memopt::GemmPlan plan = memopt::plan_gemm(M, N, K, half != 0, capability, sm_count,
                                                  tma_as_is != 0, b_k_major != 0, tf32 != 0);
  return Py_BuildValue("{s:s,s:i,s:(ii),s:L,s:L,s:s}", "variant", plan.variant.c_str(), "splits",
                       plan.splits, "tile", plan.tile_m, plan.tile_n, "tiles",
                       static_cast<long long>(plan.tiles), "ctas",
                       static_cast<long long>(plan.ctas), "reason", plan.reason.c_str());
}

// _set_wgmma_splits(n) -> the previous override: wgmma_split's K splits for
// every launch from now on (0: the rule). For the tuning sweep and the tests.
PyObject* set_wgmma_splits(PyObject* /*self*/, PyObject* args) {
  int splits = 0;
  if (!PyArg_ParseTuple(args, "i", &splits)) return nullptr;
  if (splits < 0 || splits > 8) {
    PyErr_Format(PyExc_ValueError, "_set_wgmma_splits: expected 0 (the rule) to 8, got %d", splits);
    return nullptr;
  }
  const int previous = memopt::wgmma_split_override();
  memopt::set_wgmma_split_override(splits);
  return PyLong_FromLong(previous);
}

// _set_wgmma_group_rows(n) -> the previous override: the tile-rows of a group
// in the wgmma rung's tile order (0: the rule), for the tuning sweep.
PyObject* set_wgmma_group_rows(PyObject* /*self*/, PyObject* args) {
  int rows = 0;
  if (!PyArg_ParseTuple(args, "i", &rows)) return nullptr;
  if (rows < 0 || rows > 64) {
    PyErr_Format(PyExc_ValueError, "_set_wgmma_group_rows: expected 0 (the rule) to 64, got %d",
                 rows);
    return nullptr;
  }
  const int previous = memopt::wgmma_group_rows_override();
  memopt::set_wgmma_group_rows_override(rows);
  return PyLong_FromLong(previous);
}

// A process-wide switch of modes 0 ... `last` set from Python: the mode parsed
// from `args` (else a ValueError naming what each means), set, and the
// previous one returned.
template <typename Mode>
PyObject* swap_mode(PyObject* args, const char* name, const char* expected, Mode (*get)(),
                    void (*set)(Mode), int last = 2) {
  int mode = 1;
  if (!PyArg_ParseTuple(args, "i", &mode)) return nullptr;
  if (mode < 0 || mode > last) {
    PyErr_Format(PyExc_ValueError, "%s: expected %s, got %d", name, expected, mode);
    return nullptr;
  }
  const auto previous = static_cast<int>(get());
  set(static_cast<Mode>(mode));
  return PyLong_FromLong(previous);
}

// _set_norm_peel(mode) -> the previous mode: which kernel norm rows off the
// 16-byte pack take: 0 the narrow packs, 1 the measured rule (the default),
// 2 the peeled kernel wherever it fits. For the tuning script and the tests.
PyObject* set_norm_peel(PyObject* /*self*/, PyObject* args) {
  return swap_mode(args, "_set_norm_peel", "0 (narrow packs), 1 (the rule) or 2 (peeled)",
                   memopt::norm_peel, memopt::set_norm_peel);
}

// _set_softmax_staged_cluster(n) -> the previous override: the CTAs a row of
// softmax's staged rung (0: the rule; 1 or 2), for the tests and the sweep.
PyObject* set_softmax_staged_cluster(PyObject* /*self*/, PyObject* args) {
  return swap_mode(args, "_set_softmax_staged_cluster", "0 (the rule), 1 or 2",
                   memopt::staged_cluster_override, memopt::set_staged_cluster_override);
}

// _set_norm_param_stage(mode) -> the previous mode: how the vectorized norm
// kernel fetches weight and bias at small grids: 0 (or False) after the
// reductions, 1 (or True, the default) early (into registers with the row,
// staged in shared memory or prefetched towards L2), 2 prefetched only (read
// late where the rule would hold them in registers), 3 in registers at any
// grid where the instance holds them there (else prefetched at small grids;
// the sweep asking whether past one wave pays). For the latency probe, the
// sweep and the tests.
PyObject* set_norm_param_stage(PyObject* /*self*/, PyObject* args) {
  return swap_mode(args, "_set_norm_param_stage",
                   "0 (read late), 1 (early: the rule), 2 (prefetched only) or 3 (early, "
                   "in registers at any grid)",
                   memopt::norm_param_stage, memopt::set_norm_param_stage, 3);
}

// A process-wide bound of rows set from Python: the bound parsed from `args`
// (>= 0, or -1 for the rule; else a ValueError), set, and the previous
// override returned.
PyObject* swap_rows_bound(PyObject* args, const char* name, int64_t (*swap)(int64_t)) {
  long long rows = -1;
  if (!PyArg_ParseTuple(args, "L", &rows)) return nullptr;
  if (rows < -1) {
    PyErr_Format(PyExc_ValueError, "%s: expected rows >= 0, or -1 (the rule), got %lld", name,
                 rows);
    return nullptr;
  }
  return PyLong_FromLongLong(swap(rows));
}

// _set_norm_few_rows(n) -> the previous bound: the most rows a norm grid may
// have for its 16-byte-pack rows of up to 256 packs to run one pack a thread,
// any dtype (0 turns that off, -1 restores the rule: memopt::kNormFewRows16
// and kNormFewRows32). For the tuning sweep and the tests.
PyObject* set_norm_few_rows(PyObject* /*self*/, PyObject* args) {
  return swap_rows_bound(args, "_set_norm_few_rows", memopt::swap_norm_few_rows);
}

// _set_norm_whole_rows(n) -> the previous bound: the most rows a norm grid
// may have for rows a few packs past a power of two of threads to keep every
// pack in registers rather than re-read the extra ones, any dtype (0 turns
// that off, -1 restores the rule: memopt::kNormWholeRows16 and
// kNormWholeRows32). For the tuning sweep and the tests.
PyObject* set_norm_whole_rows(PyObject* /*self*/, PyObject* args) {
  return swap_rows_bound(args, "_set_norm_whole_rows", memopt::swap_norm_whole_rows);
}

// _set_softmax_few_rows(n) -> the previous bound: the same for softmax's
// online rows of 33-512 packs (memopt::kSoftmaxFewRows16 and
// kSoftmaxFewRows32 by the rule: 512 16-bit rows, no fp32 rows).
PyObject* set_softmax_few_rows(PyObject* /*self*/, PyObject* args) {
  return swap_rows_bound(args, "_set_softmax_few_rows", memopt::swap_softmax_few_rows);
}

// _set_wgmma_tile(m, n) -> None: the wgmma rung's output tile for every
// launch from now on ((0, 0): the rule); a call the tile does not run for
// (128 x 168 on gemm's row-major b or tf32) runs 128 x 192. For the tuning
// sweep and the tests.
PyObject* set_wgmma_tile(PyObject* /*self*/, PyObject* args) {
  int m = 0, n = 0;
  if (!PyArg_ParseTuple(args, "ii", &m, &n)) return nullptr;
  if (!memopt::set_wgmma_tile_override({m, n})) {
    std::string valid = "(0, 0) (the rule)";
    for (const memopt::TileShape t : memopt::kWgmmaTiles) {
      valid += ", (" + std::to_string(t.m) + ", " + std::to_string(t.n) + ")";
    }
    PyErr_Format(PyExc_ValueError, "_set_wgmma_tile: expected one of %s, got (%d, %d)",
                 valid.c_str(), m, n);
    return nullptr;
  }
  Py_RETURN_NONE;
}

// [(m, n), ...] of kWgmmaTiles, all of them or (linear_only) those built for
// linear's layout in bfloat16 / float16 only (gemm_plan.h's wgmma_tile_runs).
PyObject* tile_list(bool linear_only) {
  PyObject* list = PyList_New(0);
  if (list == nullptr) return nullptr;
  for (const memopt::TileShape t : memopt::kWgmmaTiles) {
    if (linear_only && memopt::wgmma_tile_runs(t, false)) continue;
    PyObject* item = Py_BuildValue("(ii)", t.m, t.n);
    if (item == nullptr || PyList_Append(list, item) != 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

// _wgmma_tiles() -> [(m, n), ...]: every output tile the wgmma rung is built
// for (gemm_plan.h's kWgmmaTiles), for the sweep, the sanitizer script and
// the tests to cover.
PyObject* wgmma_tiles(PyObject* /*self*/, PyObject* /*args*/) { return tile_list(false); }

// _wgmma_linear_only_tiles() -> [(m, n), ...]: the tiles of _wgmma_tiles()
// built for linear's layout (weight [N, K], B read K-major) in bfloat16 /
// float16 only: 128 x 168. Set for gemm's row-major b or for tf32 they run
// 128 x 192: the sanitizer script skips those cases, the tests check that
// fallback.
PyObject* wgmma_linear_only_tiles(PyObject* /*self*/, PyObject* /*args*/) {
  return tile_list(true);
}

PyMethodDef methods[] = {
    {"variants", variants, METH_VARARGS,
     "variants(op, device_type, capability) -> list of runnable variant names"},
    {"built_with_cuda", built_with_cuda, METH_NOARGS,
     "built_with_cuda() -> whether the CUDA kernels were compiled in"},
    {"kernel_info", kernel_info, METH_VARARGS,
     "kernel_info(op, variant) -> list of dicts of the variant's kernels' cudaFuncGetAttributes"},
    {"gemm_plan", gemm_plan, METH_VARARGS,
     "gemm_plan(M, N, K, half, capability, sm_count, tma_as_is, b_k_major, tf32) -> "
     "dict of what auto runs"},
    {"_set_wgmma_splits", set_wgmma_splits, METH_VARARGS,
     "_set_wgmma_splits(n) -> previous: wgmma_split's K splits (0: the rule)"},
    {"_set_wgmma_group_rows", set_wgmma_group_rows, METH_VARARGS,
     "_set_wgmma_group_rows(n) -> previous: tile-rows a group of the wgmma tile order (0: the "
     "rule)"},
    {"_set_softmax_staged_cluster", set_softmax_staged_cluster, METH_VARARGS,
     "_set_softmax_staged_cluster(n) -> previous: the CTAs a row of softmax's staged rung (0: "
     "the rule; 1 or 2 wherever their buffers fit)"},
    {"_set_norm_peel", set_norm_peel, METH_VARARGS,
     "_set_norm_peel(mode) -> previous: norm rows off the 16-byte pack in narrow packs (0), by "
     "the rule (1) or peeled (2)"},
    {"_set_norm_param_stage", set_norm_param_stage, METH_VARARGS,
     "_set_norm_param_stage(mode) -> previous: the vectorized norm kernel's weight and bias at "
     "small grids read after the reductions (0), early (1, the default: in registers, staged or "
     "prefetched), prefetched towards L2 (2; read late where 1 would hold them in registers) or "
     "in registers at any grid where the instance holds them there, else prefetched (3)"},
    {"_set_norm_few_rows", set_norm_few_rows, METH_VARARGS,
     "_set_norm_few_rows(rows) -> previous: the most rows a norm grid may have for its "
     "16-byte-pack rows of up to 256 packs to run one pack a thread (0: never, -1: the rule)"},
    {"_set_norm_whole_rows", set_norm_whole_rows, METH_VARARGS,
     "_set_norm_whole_rows(rows) -> previous: the most rows a norm grid may have for rows a few "
     "packs past a power of two of threads to keep every pack in registers (0: never, -1: the "
     "rule)"},
    {"_set_softmax_few_rows", set_softmax_few_rows, METH_VARARGS,
     "_set_softmax_few_rows(rows) -> previous: the most rows a softmax grid may have for its "
     "16-byte-pack rows of 33-512 packs to run one pack a thread on online (0: never, -1: the "
     "rule)"},
    {"_wgmma_tiles", wgmma_tiles, METH_NOARGS,
     "_wgmma_tiles() -> [(m, n), ...]: every output tile the wgmma rung is built for"},
    {"_wgmma_linear_only_tiles", wgmma_linear_only_tiles, METH_NOARGS,
     "_wgmma_linear_only_tiles() -> [(m, n), ...]: the tiles built for linear's layout in "
     "bfloat16/float16 only (others run 128 x 192 in their place)"},
    {"_set_wgmma_tile", set_wgmma_tile, METH_VARARGS,
     "_set_wgmma_tile(m, n) -> None: the wgmma rung's output tile ((0, 0): the rule)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "torch_memopt native ops", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&module); }
