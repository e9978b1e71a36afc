// The inference-only autograd guard of every memopt op, registered in C++ at
// the Autograd key: the op runs below autograd, and when grad mode is on and an
// input requires grad its outputs get an Error node, so backward raises a
// message naming the op and the stock op to train with (a silent zero gradient
// or a warning would hide that the kernels have no backward).
//
// Why C++: the same guard registered from Python (torch.library.
// register_autograd) sent every call through the Python autograd kernel, with
// grad mode on or off: ~20 us a call on our 2-core CI machine, against 3 us
// for all of torch.softmax at 1x8 (measured on CPU, issue 5). At decode shapes
// a kernel takes 5-7 us, so the guard alone cost more than the kernel.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace memopt {
namespace {

using torch::autograd::Edge;
using torch::autograd::edge_list;
using torch::autograd::Node;

// What a user who needs gradients should call instead.
const char* stock_op(const std::string& op) {
  if (op == "gemm") return "torch.mm";
  if (op == "linear") return "torch.nn.functional.linear";
  if (op == "layer_norm") return "torch.nn.functional.layer_norm";
  if (op == "rms_norm") return "torch.nn.functional.rms_norm";
  if (op == "softmax") return "torch.softmax";
  if (op == "add_layer_norm") return "input + residual, then torch.nn.functional.layer_norm";
  return "input + residual, then torch.nn.functional.rms_norm";
}

// Autograd nodes are held by std::shared_ptr in older torch releases and by
// c10::intrusive_ptr in newer ones; Edge::function names the one this build
// uses. ErrorNode is a parameter so that only the branch taken is compiled.
using NodeHandle = decltype(std::declval<Edge>().function);

template <typename Handle, typename ErrorNode = torch::autograd::Error>
Handle make_error_node(std::string message, edge_list&& next_edges) {
  if constexpr (std::is_same_v<Handle, std::shared_ptr<Node>>) {
    return std::make_shared<ErrorNode>(std::move(message), std::move(next_edges));
  } else {
    return c10::make_intrusive<ErrorNode>(std::move(message), std::move(next_edges));
  }
}

void inference_only_autograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                             torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  std::vector<at::Tensor> grad_inputs;
  if (at::GradMode::is_enabled()) {
    for (const c10::IValue& arg : torch::jit::last(*stack, schema.arguments().size())) {
      if (arg.isTensor() && arg.toTensor().requires_grad()) grad_inputs.push_back(arg.toTensor());
    }
  }
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
  }
  if (grad_inputs.empty()) return;

  const std::string name = schema.name().substr(schema.name().find("::") + 2);
  const NodeHandle node = make_error_node<NodeHandle>(
      "memopt::" + name + " is inference-only and has no backward. To train, use " +
          stock_op(name) + ", or run memopt::" + name +
          " under torch.no_grad() / torch.inference_mode().",
      torch::autograd::collect_next_edges(grad_inputs));
  for (const c10::IValue& out : torch::jit::last(*stack, schema.returns().size())) {
    if (out.isTensor() && torch::autograd::isDifferentiableType(out.toTensor().scalar_type())) {
      torch::autograd::set_history(out.toTensor(), node);
    }
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(memopt, Autograd, m) {
  for (const char* op : {"gemm", "linear", "layer_norm", "rms_norm", "softmax", "add_layer_norm",
                         "add_rms_norm"}) {
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&inference_only_autograd>());
  }
}

}  // namespace memopt
