"""The CUDA/HIP vector types (``vector_types.h``): one table for the lift, the passes and the
analyses. ``float4`` & co. are structs of 1-4 components named x, y, z, w."""
from __future__ import annotations

COMPONENTS = "xyzw"

# name -> (element type, components, alignment bytes)
VECTOR_TYPES: dict[str, tuple[str, int, int]] = {}
for _e, _n, _sz in (("float", "float", 4), ("double", "double", 8), ("int", "int", 4), ("uint", "unsigned int", 4),
                    ("short", "short", 2), ("ushort", "unsigned short", 2), ("char", "signed char", 1),
                    ("uchar", "unsigned char", 1), ("long", "long", 8), ("longlong", "long long", 8)):
    for _k in (1, 2, 3, 4):
        _al = _sz * (_k if _k != 3 else 1)
        VECTOR_TYPES[f"{_e}{_k}"] = (_n, _k, min(_al, 16))
