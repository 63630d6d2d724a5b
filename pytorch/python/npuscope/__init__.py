"""npuscope: profiling, accuracy comparison and debugging for NPUs, around an emulated NPU.

Submodules:
    npuscope.torch         the emulated NPU as a PyTorch device ("privateuseone"), the torch_npu way.
    npuscope.distributed   its "hccl" backend of torch.distributed (registered by npuscope.torch).
"""
__all__ = ["torch", "distributed"]
