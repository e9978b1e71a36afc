// The Python entry of torch_memopt._C (setup.py builds it; the CMake LibTorch
// library leaves it out). Importing the module runs the static TORCH_LIBRARY
// registrations of the other files; its one function lists variants.
#include <Python.h>

#include "common/variants.h"

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

PyMethodDef methods[] = {
    {"variants", variants, METH_VARARGS,
     "variants(op, device_type, capability) -> list of runnable variant names"},
    {"built_with_cuda", built_with_cuda, METH_NOARGS,
     "built_with_cuda() -> whether the CUDA kernels were compiled in"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "torch_memopt native ops", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&module); }
