// npuscope._c10d: the hccl process group (process_group_hccl.h) as a Python class deriving from
// torch.distributed.ProcessGroup, for npuscope.distributed to hand to torch.distributed.
//
// The one pybind11 module of the package. It must share pybind11's internals with PyTorch's own
// bindings, so that c10d::ProcessGroup is the type torch registered: the same pybind11 ABI (the
// compiler, standard library and C++ ABI tags of torch._C, set in pytorch/CMakeLists.txt), and
// torch.distributed imported before the class is declared.
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "npuscope/pytorch/process_group_hccl.h"

PYBIND11_MODULE(_c10d, m) {
  m.doc() = "The hccl backend of torch.distributed on the emulated NPU (use npuscope.distributed).";
  pybind11::module_::import("torch.distributed");  // registers c10d::ProcessGroup with pybind11
  using npuscope::pytorch::ProcessGroupHCCL;
  pybind11::class_<ProcessGroupHCCL, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupHCCL>>(m, "ProcessGroupHCCL")
      .def(pybind11::init<c10::intrusive_ptr<c10d::ProcessGroup>, int, int, std::string, std::vector<int>>(),
           pybind11::arg("inner"), pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("name"),
           pybind11::arg("global_ranks"),
           // The constructor meets the other ranks through gloo: never hold the GIL while waiting.
           pybind11::call_guard<pybind11::gil_scoped_release>())
      .def_property_readonly("name", &ProcessGroupHCCL::name)
      .def_property_readonly("global_ranks", &ProcessGroupHCCL::global_ranks)
      .def_property_readonly("nodes", &ProcessGroupHCCL::nodes);
  m.attr("WORLD_GROUP_NAME") = ProcessGroupHCCL::kWorldGroupName;
}
