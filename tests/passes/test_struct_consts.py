"""passes/cleanup/struct_consts.py: a lifted device-property struct folded into its reads (checked on the
virtual device), one refusal per Requires line."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import platforms
from passes.cleanup import struct_consts  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

PROPS = r"""
#include <string.h>
typedef struct { unsigned long sharedMemPerBlock; int warpSize; int maxGridSize[3]; } xp_device_prop;
extern "C" void k(const float *x, float *out, int n) {
  xp_device_prop prop;
  {
    memset((xp_device_prop *) (&prop), 0, sizeof(*((xp_device_prop *) (&prop))));
    ((xp_device_prop *) (&prop))->warpSize = 4;
    ((xp_device_prop *) (&prop))->maxGridSize[1] = 7;
  }
  unsigned int w = prop.warpSize;
  for (unsigned int b = 0; b < (unsigned int) n; ++b)
    for (unsigned int t = 0; t < w; ++t)
      out[b * w + t] = x[b * w + t] * (float) (prop.maxGridSize[1] + prop.sharedMemPerBlock);
}
"""


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _refused(prog, code):
    with pytest.raises(PassRefused) as exc:
        run_pass("struct_consts", prog)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def _unchanged(prog, code):
    """Nothing to do (issue 15): the input comes back unchanged with the not-applicable code."""
    from passes.base import apply_pass

    out = apply_pass("struct_consts", prog)
    assert not out.changed and out.program is prog and out.reason.code == code, out.reason


def test_device_properties_are_folded_and_the_struct_removed():
    src = _prog(PROPS)
    out = run_pass("struct_consts", src)
    body = _emit(out).split('extern "C"')[1]
    assert "prop" not in body
    assert "(int) 4" in body and "(int) 7" in body and "(unsigned long) 0" in body
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(12).astype(np.float32), np.zeros(12, np.float32), 3]
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src), program=src)
    run_kernel("b.cpp", args=got, source=_emit(out), program=out)
    np.testing.assert_array_equal(want[1], got[1])


def test_no_entry_or_no_struct_of_constants_is_not_applicable():
    p = _prog(PROPS)
    _unchanged(dataclasses.replace(p, entry=dataclasses.replace(p.entry, name="missing")),
               "XP-STRUCT-CONSTS-001")
    _unchanged(_prog('extern "C" void k(float *o) { o[0] = 1.0f; }\n'), "XP-STRUCT-CONSTS-002")


@pytest.mark.parametrize("change", [
    ("unsigned int w = prop.warpSize;", "unsigned int w = prop.warpSize; prop.warpSize = 2;"),
    ("unsigned int w = prop.warpSize;", "xp_device_prop *pp = &prop; unsigned int w = pp->warpSize;"),
    ("((xp_device_prop *) (&prop))->warpSize = 4;", "((xp_device_prop *) (&prop))->warpSize = n;"),
    ("    memset((xp_device_prop *) (&prop), 0, sizeof(*((xp_device_prop *) (&prop))));\n", ""),
])
def test_structs_that_are_not_constant_are_refused(change):
    # a later store, an escaping address, a non-constant store, a read of an unwritten field
    _refused(_prog(PROPS.replace(*change)), "XP-STRUCT-CONSTS-003")


PERMUTE = r"""
struct PermuteArgs { int rank; int out_dims[4]; int in_strides[4]; };
extern "C" void k(const float *x, float *out) {
  PermuteArgs a;
  a.rank = 3;
  a.out_dims[0] = 2; a.in_strides[0] = 1;
  a.out_dims[1] = 3; a.in_strides[1] = 8;
  a.out_dims[2] = 4; a.in_strides[2] = 2;
  PermuteArgs b = a;
  for (unsigned int t = 0; t < 24u; ++t) {
    int rem = (int) t;
    int src = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      const int coord = rem % b.out_dims[d];
      rem /= b.out_dims[d];
      src += coord * b.in_strides[d];
    }
    out[t] = x[src];
  }
}
"""


def _same_outputs(src, out, n=24):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32)]
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src), program=src)
    run_kernel("b.cpp", args=got, source=_emit(out), program=out)
    np.testing.assert_array_equal(want[1], got[1])
    assert np.any(want[1] != 0)


def test_struct_copy_read_at_a_loop_index_is_unrolled_and_folded():
    # a C++ 'struct S { ... };' type, a whole copy (the lifted kernel argument) and array
    # fields read at the index of a counted loop whose bound is a field: the loop is unrolled
    src = _prog(PERMUTE)
    out = run_pass("struct_consts", src)
    body = _emit(out).split('extern "C"')[1]
    assert "PermuteArgs" not in body and ".out_dims" not in body and "for (int d" not in body
    assert "rem % ((int) 4)" in body and "coord * ((int) 8)" in body
    _same_outputs(src, out)


@pytest.mark.parametrize("change", [
    ("src += coord * b.in_strides[d];", "src += coord * b.in_strides[d]; b.in_strides[d] = 0;"),
    ("PermuteArgs b = a;", "PermuteArgs b = a; a.rank = 2;"),
    ("d >= 0; --d", "d >= rem; --d"),
])
def test_variable_index_reads_that_cannot_be_resolved_are_refused(change):
    # a store at a variable index, a store after the copy, a loop bound that is not constant
    _refused(_prog(PERMUTE.replace(*change)), "XP-STRUCT-CONSTS-003")
