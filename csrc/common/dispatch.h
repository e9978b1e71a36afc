// dtype dispatch over exactly the dtypes memopt ops accept (float32, float16,
// bfloat16): AT_DISPATCH_FLOATING_TYPES_AND2 would also instantiate every
// kernel for float64, code no schema ever reaches and CI would compile for nothing.
#pragma once

#include <ATen/Dispatch.h>

#define MEMOPT_DISPATCH_FLOAT_TYPES(TYPE, NAME, ...)                 \
  AT_DISPATCH_SWITCH(TYPE, NAME,                                     \
                     AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__) \
                     AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)  \
                     AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__))
