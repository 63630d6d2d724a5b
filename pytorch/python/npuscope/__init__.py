"""npuscope: profiling, accuracy comparison and debugging for NPUs, around an emulated NPU.

Submodules:
    npuscope.torch   the emulated NPU as a PyTorch device ("privateuseone"), the torch_npu way.
"""
__all__ = ["torch"]
