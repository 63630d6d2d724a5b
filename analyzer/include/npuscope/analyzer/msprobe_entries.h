// msprobe's dump of a PyTorch script rebuilt from its trace (`npuscope run --dump stats|tensor`): the
// collector::MsprobeDump that `export --msprobe` writes out and `compare` compares directly against
// a real msprobe dump (collector/msprobe_dump.h, Note [msprobe dumps in memory]).
//
// Note [msprobe dumps from a trace]
// A trace recorded under `npuscope run --dump` holds msprobe fragments (Note [msprobe fragments] in
// pytorch/src/msprobe_fragments.cpp): each outermost call of an API msprobe wraps, each gradient
// hook, each module call, with msprobe's entry name, the call's arguments as dump.json holds them and
// the device address of every tensor among them. An entry is its fragments merged in the order they
// ended (a module's gradients arrive one hook at a time), named as msprobe names it:
//   Functional.conv2d.0.forward / .backward, Tensor.add_.0.forward, Torch.matmul.3.forward,
//   VF.lstm.0.forward, Distributed.all_reduce.0.forward, Module.fc.Linear.forward.0 / .backward.0,
//   Module.fc.Linear.parameters_grad.0 ({weight: [grad], bias: [grad]}, as msprobe's grad hooks);
// each tensor's statistics (and data) are those of the TENSOR row of its buffer where the fragment
// was: for what a call read, the last row of that address (same dtype and element count) before
// the first task launched after the call began, else the first read from it after; for what a call
// returned, the same after its last task. An expanded view (a sum's gradient: stride 0 along the
// summed dimensions) is looked for as the smaller buffer it repeats, its norm scaled by the
// repetition. A forward call that activation checkpointing recomputed in the backward pass has
// "is_recompute" (Note [msprobe recompute] in npuscope/_msprobe.py). A tensor no kernel touched (on
// the CPU) keeps its dtype and shape, without statistics; the calls msprobe counts but leaves out of
// dump.json (its default risk_level FOCUS: views, conversions, factories) are counted in the notes.
// construct.json's parent of a forward entry is the module call it ran in; of a backward entry, that
// module's backward entry; parameters' gradients have none.
// A trace without fragments (recorded without --dump's Python side, or older) gets the entries of
// Note [msprobe entries]: Aten.{op}.{n}.forward/backward from the data flow.
//
// Note [msprobe entries]
// msprobe hooks the Python APIs and modules and reads their arguments; without fragments the trace has
// the kernels' tensors instead, each with the address of its buffer (TENSOR.address), and the PyTorch
// op that launched each kernel. An entry is a group of tasks:
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

#include <vector>

#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::analyzer {

// The trace's dump, one MsprobeDump per step in step order (rank from the trace's META rank, or -1):
// entries, values with their statistics, stacks, construct. Its `load` reads a tensor's data from
// `reader` (a tensor dump: `--dump tensor`), which must outlive the dumps. Throws TraceError if the
// trace cannot be read; a trace without PyTorch ops or tensors gives no dumps (msprobe_dump_problem
// says why).
std::vector<collector::MsprobeDump> msprobe_dumps(const collector::TraceReader& reader);

// Why `reader`'s trace gives no msprobe dump, saying how to record one; "" when it does.
std::string msprobe_dump_problem(const collector::TraceReader& reader);

}  // namespace npuscope::analyzer
