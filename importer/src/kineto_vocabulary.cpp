// See kineto_vocabulary.h.
#include "kineto_vocabulary.h"

#include <algorithm>
#include <array>
#include <utility>

#include "tensor_lists.h"

namespace npuscope::importer::kineto {
namespace {

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool ends_with(std::string_view s, std::string_view tail) { return s.ends_with(tail); }

bool is_runtime_category(std::string_view cat) {
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver") return true;
  // privateuse1_runtime, privateuse1_driver, mtia_runtime, xpu_runtime, hip_runtime, ...
  return ends_with(cat, "_runtime") || ends_with(cat, "_driver");
}

}  // namespace

EventKind classify(std::string_view ph, std::string_view cat, std::string_view name) {
  if (ph == "C") return EventKind::kCounter;
  if (ph == "i" || ph == "I") return name == "[memory]" ? EventKind::kMemory : EventKind::kOther;
  if (ph != "X") return EventKind::kOther;
  if (cat == "cpu_op" || cat == "Operator" || cat == "operator") return EventKind::kHostOp;
  if (cat == "user_annotation") return EventKind::kUserAnnotation;
  if (cat == "python_function") return EventKind::kPythonFunction;
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") return EventKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return EventKind::kMemset;
  if (is_runtime_category(cat)) return EventKind::kRuntime;
  return EventKind::kOther;
}

std::optional<std::int64_t> profiler_step(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 18)
    return std::nullopt;
  std::int64_t n = 0;
  for (const char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

HostOpKind host_op_kind(std::string_view name, bool annotation) {
  if (name.starts_with("Optimizer.")) return HostOpKind::kOptimizer;
  if (name.starts_with("nn.Module:")) return HostOpKind::kModule;
  if (name.starts_with("autograd::engine::evaluate_function:") || ends_with(name, "Backward0") ||
      ends_with(name, "Backward1") || ends_with(name, "Backward"))
    return HostOpKind::kBackwardFunction;
  return annotation ? HostOpKind::kUserScope : HostOpKind::kAtenOp;
}

std::optional<ModelPass> pass_started_by(std::string_view name) {
  if (name.starts_with("autograd::engine::evaluate_function:") || name == "## backward ##") return ModelPass::kBackward;
  if (name.starts_with("Optimizer.") || name == "## optimizer ##") return ModelPass::kOptimizer;
  return std::nullopt;
}

bool is_vendor_op(std::string_view name) {
  if (!name.starts_with("aten::")) return false;
  name.remove_prefix(6);
  if (name.starts_with("_")) name.remove_prefix(1);
  return name.starts_with("cudnn_") || name.starts_with("miopen_") || name.starts_with("mkldnn_") ||
         name.starts_with("mps_");
}

ApiKind api_kind(std::string_view n) {
  if (has(n, "Launch") || has(n, "launch") || n.starts_with("runFunction")) return ApiKind::kLaunch;
  if (has(n, "ynchronize")) return ApiKind::kSynchronize;
  if (has(n, "emcpy") || has(n, "emset")) {
    return has(n, "Async") || has(n, "enqueueCommand") ? ApiKind::kMemcpyAsync : ApiKind::kMemcpy;
  }
  if (has(n, "Free") || has(n, "free")) return ApiKind::kFree;
  if (has(n, "Malloc") || has(n, "Alloc") || has(n, "alloc")) return ApiKind::kMalloc;
  if (has(n, "Event") || has(n, "event")) return ApiKind::kEvent;
  return ApiKind::kOther;
}

bool is_collective_kernel(std::string_view name) {
  return name.starts_with("nccl") || name.starts_with("rccl") || name.starts_with("void nccl") ||
         name.starts_with("void rccl");
}

TaskType task_type(EventKind kind, std::string_view name) {
  switch (kind) {
    case EventKind::kMemcpy: return TaskType::kMemcpy;
    case EventKind::kMemset: return TaskType::kMemset;
    default: break;
  }
  if (is_collective_kernel(name)) return TaskType::kCommunication;
  // An accelerator's stream events (MTIA's mtia_ccp_events).
  if (name == "event_record") return TaskType::kEventRecord;
  if (name == "event_wait") return TaskType::kEventWait;
  if (name.starts_with("dma_")) return TaskType::kMemcpy;
  return TaskType::kKernel;
}

std::int32_t copy_kind(std::string_view name, std::string_view kind_arg) {
  const auto of = [](std::string_view s) -> std::int32_t {
    if (has(s, "HtoD") || has(s, "HOST_TO_DEVICE")) return static_cast<std::int32_t>(CopyKind::kHostToDevice);
    if (has(s, "DtoH") || has(s, "DEVICE_TO_HOST")) return static_cast<std::int32_t>(CopyKind::kDeviceToHost);
    if (has(s, "DtoD") || has(s, "PtoP") || has(s, "DEVICE_TO_DEVICE"))
      return static_cast<std::int32_t>(CopyKind::kDeviceToDevice);
    return 0;
  };
  const std::int32_t k = of(name);
  return k != 0 ? k : of(kind_arg);
}

std::string_view kernel_type(std::string_view n) {
  if (n.starts_with("void ")) n.remove_prefix(5);
  // Cut the parameter list and the template arguments at depth 0, then the namespaces.
  std::size_t end = n.size();
  int depth = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    if (c == '<' || c == '(') {
      if (depth == 0) {
        end = i;
        break;
      }
      ++depth;
    }
  }
  n = n.substr(0, end);
  const std::size_t colon = n.rfind("::");
  if (colon != std::string_view::npos) n.remove_prefix(colon + 2);
  while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
  return n;
}

std::optional<CollectiveKind> collective_kind(std::string_view name) {
  std::string s;
  for (const char c : name) {
    if (c != '_' && c != ' ') s.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  static constexpr std::pair<std::string_view, CollectiveKind> kNames[] = {
      {"allreduce", CollectiveKind::kAllReduce},
      {"allreducecoalesced", CollectiveKind::kAllReduce},
      {"allgather", CollectiveKind::kAllGather},
      {"allgatherbase", CollectiveKind::kAllGather},
      {"allgatherintotensorcoalesced", CollectiveKind::kAllGather},
      {"allgathercoalesced", CollectiveKind::kAllGather},
      {"reducescatter", CollectiveKind::kReduceScatter},
      {"reducescatterbase", CollectiveKind::kReduceScatter},
      {"reducescattertensorcoalesced", CollectiveKind::kReduceScatter},
      {"broadcast", CollectiveKind::kBroadcast},
      {"alltoall", CollectiveKind::kAllToAll},
      {"alltoallbase", CollectiveKind::kAllToAll},
      {"send", CollectiveKind::kSend},
      {"recv", CollectiveKind::kRecv},
      {"recvanysource", CollectiveKind::kRecv},
      {"barrier", CollectiveKind::kBarrier},
  };
  for (const auto& [n, k] : kNames) {
    if (s == n) return k;
  }
  return std::nullopt;
}

ReduceOp reduce_op(std::string_view kernel_name, CollectiveKind kind) {
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kReduceScatter) return ReduceOp::kNone;
  if (has(kernel_name, "_Prod")) return ReduceOp::kProd;
  if (has(kernel_name, "_Max")) return ReduceOp::kMax;
  if (has(kernel_name, "_Min")) return ReduceOp::kMin;
  return ReduceOp::kSum;
}

std::optional<DType> torch_dtype(std::string_view n) {
  if (n.starts_with("c10::")) n.remove_prefix(5);
  static constexpr std::pair<std::string_view, DType> kNames[] = {
      {"float", DType::kF32},  {"Float", DType::kF32},        {"Half", DType::kF16},     {"BFloat16", DType::kBF16},
      {"double", DType::kF64}, {"Double", DType::kF64},       {"long int", DType::kI64}, {"long", DType::kI64},
      {"Long", DType::kI64},   {"int", DType::kI32},          {"Int", DType::kI32},      {"signed char", DType::kI8},
      {"Char", DType::kI8},    {"unsigned char", DType::kU8}, {"Byte", DType::kU8},      {"bool", DType::kBool},
      {"Bool", DType::kBool},
  };
  for (const auto& [name, t] : kNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string input_shapes(std::string_view json) {
  // Depth 1 is the outer list; the elements at depth 2 (their brackets dropped) joined by ';' as
  // shape_list takes them. An element that is no list (a writer's scalar) is passed over.
  std::string entries;
  int depth = 0, element = 0;
  for (const char c : json) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    if (c == '[') {
      if (++depth == 2 && element++ > 0) entries.push_back(';');
      if (depth > 2) entries.push_back(c);
    } else if (c == ']') {
      if (depth-- > 2) entries.push_back(c);
    } else if (depth >= 2) {
      entries.push_back(c);
    }
  }
  // One input without dimensions (a 0-dim tensor) is one empty entry: shape_list reads "" as none.
  return element == 1 && entries.empty() ? std::string(";") : shape_list(entries);
}

std::string input_dtypes(std::string_view json) {
  // The strings of a flat array joined by ';'; Kineto writes no escapes in type names.
  std::string entries;
  bool in_string = false;
  int element = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (!in_string) {
      if (c == '"') {
        in_string = true;
        if (element++ > 0) entries.push_back(';');
      }
      continue;
    }
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = false;
    } else {
      entries.push_back(c);
    }
  }
  return element == 1 && entries.empty() ? std::string(";") : dtype_list(entries);
}

void append_stack(std::string& out, std::string_view frames) {
  for (const char c : frames) {
    out.push_back(c);
    if (c == ';') out.push_back('\n');
  }
}

}  // namespace npuscope::importer::kineto
