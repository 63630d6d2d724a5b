// The one header an opkit kernel includes, as an Ascend C kernel includes "kernel_operator.h".
//
// Kernel code ports with its Ascend C spelling: `using namespace AscendC;`, the __aicore__ /
// __global__ / __gm__ qualifiers (empty here: the kernel runs on the emulated AI Core, which is the
// CPU), GM_ADDR arguments, TPipe / TQue / TBuf, DataCopy, the vector instructions, GetBlockIdx().
#pragma once

#include "npuscope/opkit/block_state.h"
#include "npuscope/opkit/cube_ops.h"
#include "npuscope/opkit/data_copy.h"
#include "npuscope/opkit/queue.h"
#include "npuscope/opkit/tensor.h"
#include "npuscope/opkit/types.h"
#include "npuscope/opkit/vector_ops.h"

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif

namespace AscendC {               // NOLINT(readability-identifier-naming): the namespace Ascend C kernels use
using namespace npuscope::opkit;  // NOLINT(google-build-using-namespace)
}  // namespace AscendC
