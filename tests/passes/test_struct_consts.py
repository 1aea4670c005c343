"""passes/struct_consts.py: a lifted device-property struct folded into its reads (checked on the
virtual device), one refusal per Requires line."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import platforms
from passes import struct_consts  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.program import parse_source
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


def test_no_entry_is_refused():
    p = _prog(PROPS)
    _refused(dataclasses.replace(p, entry=dataclasses.replace(p.entry, name="missing")),
             "XP-STRUCT-CONSTS-001")


@pytest.mark.parametrize("change", [
    ("unsigned int w = prop.warpSize;", "unsigned int w = prop.warpSize; prop.warpSize = 2;"),
    ("unsigned int w = prop.warpSize;", "xp_device_prop *pp = &prop; unsigned int w = pp->warpSize;"),
    ("((xp_device_prop *) (&prop))->warpSize = 4;", "((xp_device_prop *) (&prop))->warpSize = n;"),
    ("    memset((xp_device_prop *) (&prop), 0, sizeof(*((xp_device_prop *) (&prop))));\n", ""),
])
def test_structs_that_are_not_constant_are_refused(change):
    # a later store, an escaping address, a non-constant store, a read of an unwritten field
    _refused(_prog(PROPS.replace(*change)), "XP-STRUCT-CONSTS-002")
