// msprobe's dump entries (API and module calls, forward and backward, with their input and output
// tensors) rebuilt from a trace's PyTorch ops, tasks and tensors: what `export --msprobe` writes
// (collector::export_msprobe writes them in msprobe's layout; working them out is analysis).
//
// Note [msprobe entries]
// msprobe hooks the Python APIs and modules and reads their arguments; the trace has the kernels'
// tensors instead, each with the address of its buffer (TENSOR.address), and the PyTorch op that
// launched each kernel. An entry is a group of tasks:
// - `Aten.{op}.{n}.forward`: the tasks of an outermost aten op (one whose parent is not an aten op)
//   outside the autograd engine; n counts the calls of that op in the step, every call, even those
//   that launched nothing (they get no entry: the trace has no tensor of theirs).
// - `Aten.{op}.{n}.backward`: the tasks of the autograd nodes that op made. A node's sequence number
//   is autograd's counter when the node was made, and every op records the counter as it starts, so
//   the op that made node q is the last outermost forward op on the forward thread whose number is
//   <= q (an op that makes no node shares the number of the next op that does; aten::linear makes two
//   nodes, TBackward0 and AddmmBackward0, both its own). A node matched to no op keeps its own name,
//   `Autograd.{Node}.{n}.backward`.
// - `Module.{...}.forward.{n}`: the tasks under a module call; `Module.{...}.backward.{n}`: the tasks of
//   the nodes whose forward op ran in that call or in a module inside it.
// A group's tensors come from the data flow, task by task in launch order: an input is a tensor a
// task read that no earlier task of the group wrote (same address), an output one a task wrote that
// no later task of the group read. Of a forward call's outputs, msprobe lists what the call returned:
// not the buffers it updated in place (BatchNorm's running statistics) nor the tensors only the
// backward pass reads next (BatchNorm's saved mean, max pooling's indices), unless that is all it
// wrote (an in-place ReLU). For a backward group, an input that is a tensor its forward group already
// had (same address, same statistics) is a tensor autograd saved, not a gradient: left out, as
// msprobe's backward input holds the incoming gradients only. For a module's forward group, an input
// whose buffer the optimizer updates in place next (an optimizer-pass task reading and writing it)
// is a parameter: listed apart, as msprobe's "parameters". A trace without addresses (schema 6 and
// older) has no data flow: every tensor read is an input and every tensor written an output.
#pragma once

#include "npuscope/collector/export_msprobe.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

// Reads the trace's PyTorch ops, tasks, tensors and steps (not the tensors' data).
collector::MsprobeEntries msprobe_entries(const collector::TraceReader& reader);

}  // namespace npuscope::analyzer
