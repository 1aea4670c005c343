"""``OpSpec``: what xpiler knows about one operator of OPS.md."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from .schema import CaseError, case_args

# (attrs, tensors) -> outputs; tensors are logical arrays (float64, or int64 for integer data)
RefFn = Callable[[dict, dict], dict]
# attrs -> {tensor: logical shape}
ShapeFn = Callable[[dict], dict]
# (attrs, tensor, shape, dtype, rng) -> array (float64/int64, logical shape) or None for default
MakeFn = Callable[[dict, str, tuple, str, np.random.Generator], "np.ndarray | None"]


def _one(_a: dict) -> int:
    return 1


@dataclass(frozen=True)
class OpSpec:
    """One operator.

    name / group     as in OPS.md
    arg_names        names of the integer arguments in the file name (``gemm_M_K_N``)
    inputs, outputs  logical tensors in canonical entry order; ``x*`` is variadic
    optional         inputs a kernel may leave out (bias, gamma, beta, mean/var, ...)
    derived          inputs whose values follow from the attributes (not random)
    attrs            attribute defaults (axis, eps, stride, ...), overridable by the case
    dims             args (+ attrs) -> extra attributes (derived sizes); may validate
    shapes           attrs -> logical shape of every tensor
    reference        (attrs, logical inputs) -> logical outputs, in float64 / int64
    make_tensor      custom input values (None: uniform floats / small integers)
    reduction        attrs -> length of the longest reduction behind one output element
                     (scales float tolerances, see tolerances.toml)
    linear           True if the result is an exact function of quantised inputs
                     (integer-exact dot products), so quantised cases get the tight class
    """

    name: str
    group: str
    arg_names: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    shapes: ShapeFn
    reference: RefFn
    dims: Callable[[list, dict], dict] | None = None
    optional: frozenset = frozenset()
    derived: frozenset = frozenset()
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    make_tensor: MakeFn | None = None
    reduction: Callable[[dict], int] = _one
    linear: bool = False
    doc: str = ""

    def resolve(self, case: dict) -> dict:
        """Attributes of a case: defaults, then the case's own keys, then derived sizes."""
        a: dict[str, Any] = dict(self.attrs)
        for k in self.attrs:
            if k in case:
                a[k] = case[k]
        for k in ("fix_position", "overflow"):
            if k in case:
                a[k] = case[k]
        args = case_args(case)
        a["args"] = args
        if self.arg_names and self.arg_names[0] != "*" and len(args) != len(self.arg_names):
            raise CaseError(f"{self.name}: expected args {'_'.join(self.arg_names)}, got {args}")
        if self.arg_names and self.arg_names[0] != "*":
            a.update(zip(self.arg_names, args))
        if self.dims is not None:
            a.update(self.dims(args, a))
        return a

    @property
    def tolerances(self) -> dict[str, dict[str, float]]:
        """Default tolerances per tolerance class for this operator (from tolerances.toml)."""
        from .tolerances import tolerance_table

        return tolerance_table(self.name)
