"""xpiler.ops: each reference against an independent (loop-level) formulation, plus the case
schema, input generation, quantisation, layouts and check()."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import xpiler.ops as ops
from xpiler.ops import CaseError, check, make_case, make_inputs, reference
from xpiler.ops.schema import fake_quant, quantize

OPS_MD = {
    "element-wise": ["add", "sub", "sign", "sin", "relu", "gelu", "sigmoid"],
    "reduction": ["sum", "mean", "max", "min"],
    "matrix": ["gemm", "gemv", "bmm", "dense"],
    "convolution": ["conv1d", "conv2d", "conv2dnchw", "depthwiseconv"],
    "normalization": ["batchnorm", "layernorm", "rmsnorm", "instancenorm"],
    "activation": ["softmax"],
    "pooling": ["maxpool", "avgpool", "minpool", "sumpool"],
    "layout": ["gather", "scatter", "concat", "transpose"],
    "LLM": ["mha", "gqa", "gatemlp", "deformable"],
}

SMALL = {
    "add": [3, 7], "sub": [3, 7], "sign": [40], "sin": [5, 6], "relu": [2, 3, 4], "gelu": [33],
    "sigmoid": [4, 5], "softmax": [3, 9], "sum": [3, 7], "mean": [4, 5, 6], "max": [3, 7],
    "min": [6, 2], "gemm": [4, 8, 5], "gemv": [4, 6], "bmm": [2, 3, 4, 5], "dense": [3, 8, 5],
    "conv1d": [5, 8], "conv2d": [1, 6, 6, 4, 3, 3, 3, 4, 1, 1],
    "conv2dnchw": [1, 4, 6, 6, 3, 4, 3, 3, 1, 1], "depthwiseconv": [6, 3, 4],
    "batchnorm": [2, 3, 4, 4], "layernorm": [3, 8], "rmsnorm": [3, 8],
    "instancenorm": [2, 3, 4, 4], "maxpool": [1, 6, 6, 3, 2, 2, 2, 2],
    "avgpool": [2, 7, 5, 3, 3, 2, 2, 1], "minpool": [1, 6, 6, 3, 2, 2, 2, 2],
    "sumpool": [1, 5, 5, 2, 2, 2, 1, 1], "gather": [5, 4], "scatter": [5, 4], "concat": [2, 3],
    "transpose": [2, 3, 4], "mha": [1, 2, 5, 4], "gqa": [1, 4, 3, 4, 6], "gatemlp": [2, 8, 3],
    "deformable": [1, 2, 4, 3, 2, 2],
}


def run_ref(case, seed=0):
    args = make_inputs(case, seed)
    named = {p["name"]: args[i] for i, p in enumerate(case["params"])}
    return args, named, reference(case, named)


def fill_outputs(case, args, ref):
    for i, p in enumerate(case["params"]):
        if p["role"] in ("output", "inout"):
            args[i][...] = ref[p["name"]]
    return args


# ---------------------------------------------------------------- registry and generic behaviour

def test_registry_is_the_36_operators_of_ops_md():
    assert len(ops.REGISTRY) == 36
    for group, names in OPS_MD.items():
        for n in names:
            assert ops.REGISTRY[n].group == group, n
    assert {n for v in OPS_MD.values() for n in v} == set(SMALL)


@pytest.mark.parametrize("op", sorted(SMALL))
def test_case_roundtrip_and_check(op):
    case = make_case(op, SMALL[op])
    ops.validate_case(case)
    args, named, ref = run_ref(case, 3)
    for p in case["params"]:
        if p["role"] == "output":
            assert ref[p["name"]].shape == tuple(p["shape"])
            assert ref[p["name"]].dtype == ops.np_dtype(p["dtype"])
            assert np.all(np.isfinite(ref[p["name"]]))
    # deterministic per seed, different across seeds
    again = make_inputs(case, 3)
    other = make_inputs(case, 4)
    for i, p in enumerate(case["params"]):
        if p["role"] == "input":
            np.testing.assert_array_equal(args[i], again[i])
    assert any(not np.array_equal(args[i], other[i]) for i, p in enumerate(case["params"])
               if p["role"] == "input" and p["tensor"] not in ops.REGISTRY[op].derived)
    # poisoned outputs fail, reference-filled outputs pass, a perturbed output fails
    assert not check(case, args, seed=3).ok
    fill_outputs(case, args, ref)
    rep = check(case, args, seed=3)
    assert rep.ok, rep.summary()
    oi = next(i for i, p in enumerate(case["params"]) if p["role"] == "output")
    args[oi].reshape(-1)[-1] += 0.5
    rep = check(case, args, seed=3)
    assert not rep.ok and rep.outputs[0].mismatches == 1


def test_check_reports_modified_inputs():
    case = make_case("add", [4, 4])
    args, named, ref = run_ref(case)
    fill_outputs(case, args, ref)
    args[0][0, 0] += 1.0
    rep = check(case, args, seed=0)
    assert not rep.ok and rep.inputs_modified == ["x"]


def test_case_errors():
    case = make_case("gemm", [2, 3, 4])
    bad = dict(case, params=[dict(case["params"][0], shape=[3, 3])] + case["params"][1:])
    with pytest.raises(CaseError, match="elements"):
        ops.validate_case(bad)
    with pytest.raises(CaseError, match="role"):
        ops.validate_case(dict(case, params=[dict(case["params"][0], role="in")]))
    with pytest.raises(CaseError, match="input"):
        ops.validate_case(dict(case, params=case["params"][1:]))
    with pytest.raises(CaseError, match="unknown op"):
        ops.validate_case(dict(case, op="gemmm"))
    with pytest.raises(CaseError):
        make_case("gemm", [2, 3])
    with pytest.raises(CaseError, match="attribute"):
        make_case("gemm", [2, 3, 4], axis=1)


def test_args_from_name_and_positional_binding():
    case = make_case("gemm", [2, 3, 4])
    del case["args"]
    for p, n in zip(case["params"], ("lhs", "rhs", "res")):
        p["name"] = n
        del p["tensor"]
    args, named, ref = run_ref(case)
    np.testing.assert_allclose(ref["res"], (named["lhs"].astype(np.float64) @ named["rhs"]),
                               rtol=1e-6)


def test_json_roundtrip(tmp_path):
    case = make_case("deformable", [1, 2, 4, 3, 2, 2], spatial_shapes=[[3, 5], [2, 2]])
    path = tmp_path / "c.json"
    path.write_text(ops.dump_case(case))
    assert ops.load_case(path) == case


# ---------------------------------------------------------------- element-wise / activation

def test_elementwise_formulas():
    x = np.linspace(-5, 5, 101)
    for op, f in [("relu", lambda v: v if v > 0 else 0.0), ("sign", lambda v: int(v > 0) - int(v < 0)),
                  ("sigmoid", lambda v: 1 / (1 + math.exp(-v))), ("sin", math.sin)]:
        case = make_case(op, [101], dtype="float64")
        out = reference(case, {"x": x})["out"]
        np.testing.assert_allclose(out, [f(v) for v in x], rtol=1e-12, atol=1e-15)
    c = 0.7978845608028654
    for approx, f in [("none", lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2)))),
                      ("tanh", lambda v: 0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v ** 3))))]:
        case = make_case("gelu", [101], dtype="float64", approximate=approx)
        np.testing.assert_allclose(reference(case, {"x": x})["out"], [f(v) for v in x],
                                   rtol=1e-12, atol=1e-15)
    assert reference(make_case("sign", [3], dtype="float64"), {"x": np.array([0.0, -0.0, 2])})[
        "out"].tolist() == [0, 0, 1]


def test_sign_inputs_include_zeros():
    case = make_case("sign", [1000])
    x = make_inputs(case, 0)[0]
    assert np.count_nonzero(x == 0) > 20


def test_softmax_against_loops_and_invariances():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3, 7)) * 5
    for axis in (-1, 1):
        case = make_case("softmax", [4, 3, 7], dtype="float64", axis=axis)
        out = reference(case, {"x": x})["out"]
        exp = np.empty_like(x)
        for idx in itertools.product(*[range(n) if d != axis % 3 else [slice(None)]
                                       for d, n in enumerate(x.shape)]):
            row = x[idx]
            e = [math.exp(v) for v in row]
            exp[idx] = [v / sum(e) for v in e]
        np.testing.assert_allclose(out, exp, rtol=1e-12)
        np.testing.assert_allclose(reference(case, {"x": x + 1000.0})["out"], exp, rtol=1e-9)


# ---------------------------------------------------------------- reductions

@pytest.mark.parametrize("op,fn", [("sum", sum), ("mean", lambda v: sum(v) / len(v)),
                                   ("max", max), ("min", min)])
def test_reductions_against_loops(op, fn):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 5))
    for axis in (0, 1, 2, -1):
        case = make_case(op, [3, 4, 5], dtype="float64", axis=axis)
        out = reference(case, {"x": x})["out"]
        ax = axis % 3
        moved = np.moveaxis(x, ax, -1)
        exp = np.array([fn(list(v)) for v in moved.reshape(-1, x.shape[ax])]).reshape(moved.shape[:-1])
        np.testing.assert_allclose(out, exp, rtol=1e-12)
    case = make_case(op, [3, 4, 5], dtype="float64", axis=[0, 2])
    assert reference(case, {"x": x})["out"].shape == (4,)


# ---------------------------------------------------------------- matrix, layouts, dtypes

def test_gemm_stored_transposed_weight():
    """A kernel that stores B as [N,K] (BANG matmul src1 column-major) declares layout [1,0]."""
    case = make_case("gemm", [3, 5, 4], dtype="float64")
    case["params"][1]["shape"] = [4, 5]
    case["params"][1]["layout"] = [1, 0]
    rng = np.random.default_rng(2)
    a, bt = rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
    out = reference(case, {"A": a, "B": bt})["C"]
    np.testing.assert_allclose(out, a @ bt.T, rtol=1e-12)
    args = make_inputs(case, 0)
    assert args[1].shape == (4, 5)


def test_gemm_half_inputs_float_output():
    """CUDA wmma: half operands, float accumulation; the reference uses the exact half values."""
    case = make_case("gemm", [16, 64, 16], dtypes={"A": "float16", "B": "float16", "C": "float32"})
    args, named, ref = run_ref(case)
    assert args[0].dtype == np.float16 and ref["C"].dtype == np.float32
    exact = named["A"].astype(np.float64) @ named["B"].astype(np.float64)
    np.testing.assert_allclose(ref["C"], exact, rtol=1e-6)
    cls, rtol, atol = ops.tolerance_for(case, case["params"][2])
    assert cls == "float32" and rtol == 1e-4 and atol == pytest.approx(1e-5 * 8)
    # a kernel that rounds its float accumulator to half fails the float32 tolerance
    args[2][...] = ref["C"].astype(np.float16)
    assert not check(case, args, seed=0).ok


def test_bang_int8_gemm_with_fix_position():
    """BANG int8 mlp/matmul: dst = sum * 2^fix_position, rounded and saturated to the type."""
    case = make_case("gemm", [4, 32, 8], dtypes={"A": "int8", "B": "int8", "C": "int16"},
                     fix_position=-3)
    args, named, ref = run_ref(case)
    acc = named["A"].astype(np.int64) @ named["B"].astype(np.int64)
    np.testing.assert_array_equal(ref["C"], np.clip(np.rint(acc / 8.0), -32768, 32767))
    assert ops.tolerance_for(case, case["params"][2], raw_kind="f")[0] == "int_rounded"
    assert -8 <= args[0].min() and args[0].max() <= 8


def test_integer_output_of_float_op_is_exact():
    """sign with an int8 output: integral results compare exactly (not with the rounding slack)."""
    case = make_case("sign", [50], dtypes={"x": "float32", "out": "int8"})
    args, named, ref = run_ref(case)
    args[1][...] = ref["out"]
    assert check(case, args, seed=0).ok
    args[1][np.argmax(ref["out"] == 1)] = 0
    rep = check(case, args, seed=0)
    assert not rep.ok and rep.outputs[0].tolerance_class == "int"


def test_integer_gemm_wraps_like_c():
    case = make_case("gemm", [1, 2, 1], dtypes={"A": "int32", "B": "int32", "C": "int32"})
    out = reference(case, {"A": np.array([[2 ** 30, 2 ** 30]], np.int32),
                           "B": np.array([[2], [2]], np.int32)})["C"]
    assert out[0, 0] == 0                      # 2^32 mod 2^32
    case["overflow"] = "saturate"
    out = reference(case, {"A": np.array([[2 ** 30, 2 ** 30]], np.int32),
                           "B": np.array([[2], [2]], np.int32)})["C"]
    assert out[0, 0] == 2 ** 31 - 1


def test_quantisation_model():
    q = {"dtype": "uint8", "scale": 2.0 ** -7, "zero_point": 128}
    x = np.array([0.5 / 128, 1.5 / 128, -0.5 / 128, 2.5 / 128, 5.0, -5.0], np.float32)
    assert quantize(x, q).tolist() == [128, 130, 128, 130, 255, 0]    # half to even, clamped
    np.testing.assert_allclose(fake_quant(x, q), [0, 2 / 128, 0, 2 / 128, 127 / 128, -1.0])


def test_quantised_gemm_is_exact_integer_arithmetic():
    u8 = {"dtype": "uint8", "scale": 2.0 ** -7, "zero_point": 128}
    s8 = {"dtype": "int8", "scale": 2.0 ** -7, "zero_point": 0}
    case = make_case("gemm", [8, 100, 12])
    case["params"][0]["quant"], case["params"][1]["quant"] = u8, s8
    args, named, ref = run_ref(case)
    qa, qb = quantize(named["A"], u8), quantize(named["B"], s8)
    assert qa.min() > 0 and qa.max() < 255 and qb.min() > -128 and qb.max() < 127   # no saturation
    acc = qa @ qb - 128 * qb.sum(axis=0)
    np.testing.assert_array_equal(ref["C"], (acc.astype(np.float32) * np.float32(2.0 ** -14)))
    # and it approximates the float product to within the quantisation error
    plain = named["A"].astype(np.float64) @ named["B"]
    assert np.max(np.abs(ref["C"] - plain)) < 100 * 2 ** -7
    assert ops.tolerance_for(case, case["params"][2])[0] == "quantised"


def test_dense_bias_and_optional_bias():
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=(3, 6)), rng.normal(size=(4, 6)), rng.normal(size=4)
    case = make_case("dense", [3, 6, 4], dtype="float64")
    np.testing.assert_allclose(reference(case, {"X": x, "W": w, "bias": b})["out"],
                               [[sum(x[i, k] * w[j, k] for k in range(6)) + b[j] for j in range(4)]
                                for i in range(3)], rtol=1e-12)
    case = make_case("dense", [3, 6, 4], dtype="float64", omit=("bias",))
    assert len(case["params"]) == 3
    np.testing.assert_allclose(reference(case, {"X": x, "W": w})["out"], x @ w.T, rtol=1e-12)


def test_bmm_gemv_against_loops():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    out = reference(make_case("bmm", [2, 3, 4, 5], dtype="float64"), {"A": a, "B": b})["C"]
    for bb, i, k in itertools.product(range(2), range(3), range(5)):
        assert out[bb, i, k] == pytest.approx(sum(a[bb, i, j] * b[bb, j, k] for j in range(4)))
    m, v = rng.normal(size=(3, 7)), rng.normal(size=7)
    out = reference(make_case("gemv", [3, 7], dtype="float64"), {"A": m, "x": v})["y"]
    np.testing.assert_allclose(out, [sum(m[i, j] * v[j] for j in range(7)) for i in range(3)])


# ---------------------------------------------------------------- convolution

def naive_conv2d_nhwc(x, w, stride, pad, groups=1, dilation=1):
    n, h, wd, c = x.shape
    oc, kh, kw, icg = w.shape
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, oh, ow, oc))
    ocg = oc // groups
    for b, i, j, o in itertools.product(range(n), range(oh), range(ow), range(oc)):
        g = o // ocg
        s = 0.0
        for p, q, ci in itertools.product(range(kh), range(kw), range(icg)):
            y, xx = i * stride + p * dilation - pad, j * stride + q * dilation - pad
            if 0 <= y < h and 0 <= xx < wd:
                s += x[b, y, xx, g * icg + ci] * w[o, p, q, ci]
        out[b, i, j, o] = s
    return out


@pytest.mark.parametrize("args,dil", [([1, 7, 6, 3, 4, 3, 3, 3, 1, 1], 1),
                                      ([2, 8, 9, 4, 6, 3, 2, 4, 2, 0], 1),
                                      ([1, 9, 9, 4, 4, 3, 3, 2, 2, 2], 1),    # groups = 2
                                      ([1, 9, 9, 2, 3, 3, 3, 2, 1, 2], 2)])
def test_conv2d_nhwc_against_loops(args, dil):
    case = make_case("conv2d", args, dtype="float64", dilation=dil)
    args_, named, ref = run_ref(case)
    n, h, w, c, oc, kh, kw, ic, s, p = args
    exp = naive_conv2d_nhwc(named["input"], named["weight"], s, p, c // ic, dil)
    np.testing.assert_allclose(ref["output"], exp, rtol=1e-10, atol=1e-12)


def test_conv2dnchw_against_loops():
    args = [2, 3, 7, 8, 4, 3, 3, 2, 2, 1]
    case = make_case("conv2dnchw", args, dtype="float64")
    _, named, ref = run_ref(case)
    x, w = named["input"], named["weight"]
    n, c, h, wd, oc, ic, kh, kw, s, p = args
    oh, ow = (h + 2 * p - kh) // s + 1, (wd + 2 * p - kw) // s + 1
    assert ref["output"].shape == (n, oc, oh, ow)
    for b, o, i, j in itertools.product(range(n), range(oc), range(oh), range(ow)):
        acc = 0.0
        for ci, pp, qq in itertools.product(range(ic), range(kh), range(kw)):
            y, xx = i * s + pp - p, j * s + qq - p
            if 0 <= y < h and 0 <= xx < wd:
                acc += x[b, ci, y, xx] * w[o, ci, pp, qq]
        assert ref["output"][b, o, i, j] == pytest.approx(acc, abs=1e-12)


def test_conv1d_and_depthwise_against_numpy():
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=20), rng.normal(size=6)
    out = reference(make_case("conv1d", [15, 20], dtype="float64"), {"x": x, "w": w})["out"]
    np.testing.assert_allclose(out, np.convolve(x, w[::-1], mode="valid"), rtol=1e-12)
    x, w = rng.normal(size=(7, 7, 3)), rng.normal(size=(3, 3, 3))
    out = reference(make_case("depthwiseconv", [7, 3, 3], dtype="float64"), {"x": x, "w": w})["out"]
    for i, j, c in itertools.product(range(5), range(5), range(3)):
        assert out[i, j, c] == pytest.approx(np.sum(x[i:i + 3, j:j + 3, c] * w[:, :, c]))


# ---------------------------------------------------------------- normalisation

def test_layernorm_rmsnorm_against_row_formulas():
    rng = np.random.default_rng(6)
    x, g, b = rng.normal(size=(4, 9)) * 3 + 1, rng.normal(size=9), rng.normal(size=9)
    out = reference(make_case("layernorm", [4, 9], dtype="float64", eps=1e-3),
                    {"x": x, "gamma": g, "beta": b})["out"]
    for r in range(4):
        mu = sum(x[r]) / 9
        var = sum((v - mu) ** 2 for v in x[r]) / 9
        np.testing.assert_allclose(out[r], [(x[r, j] - mu) / math.sqrt(var + 1e-3) * g[j] + b[j]
                                            for j in range(9)], rtol=1e-10)
    out = reference(make_case("rmsnorm", [4, 9], dtype="float64"), {"x": x, "weight": g})["out"]
    for r in range(4):
        rms = math.sqrt(sum(v * v for v in x[r]) / 9 + 1e-5)
        np.testing.assert_allclose(out[r], [x[r, j] / rms * g[j] for j in range(9)], rtol=1e-10)


def test_batchnorm_modes_and_instancenorm():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 2, 4, 5)) * 2 + 0.5
    g, b = rng.uniform(0.5, 1.5, 2), rng.normal(size=2)
    mean, var = rng.normal(size=2), rng.uniform(0.5, 1.5, 2)
    inf = reference(make_case("batchnorm", [3, 2, 4, 5], dtype="float64"),
                    {"x": x, "mean": mean, "var": var, "gamma": g, "beta": b})["out"]
    train = reference(make_case("batchnorm", [3, 2, 4, 5], dtype="float64", omit=("mean", "var")),
                      {"x": x, "gamma": g, "beta": b})["out"]
    inst = reference(make_case("instancenorm", [3, 2, 4, 5], dtype="float64"),
                     {"x": x, "gamma": g, "beta": b})["out"]
    for c in range(2):
        vals = x[:, c].reshape(-1)
        mu, vr = vals.mean(), ((vals - vals.mean()) ** 2).mean()
        np.testing.assert_allclose(train[:, c], (x[:, c] - mu) / math.sqrt(vr + 1e-5) * g[c] + b[c])
        np.testing.assert_allclose(inf[:, c], (x[:, c] - mean[c]) / math.sqrt(var[c] + 1e-5) * g[c] + b[c])
        for n in range(3):
            v = x[n, c]
            np.testing.assert_allclose(inst[n, c], (v - v.mean()) / math.sqrt(v.var() + 1e-5) * g[c] + b[c])
    nhwc = make_case("batchnorm", [3, 2, 4, 5], dtype="float64", layout="NHWC")
    out = reference(nhwc, {"x": x.transpose(0, 2, 3, 1), "mean": mean, "var": var, "gamma": g,
                           "beta": b})["out"]
    np.testing.assert_allclose(out, inf.transpose(0, 2, 3, 1))


def test_batchnorm_inputs_have_positive_variance():
    case = make_case("batchnorm", [2, 8, 3, 3])
    args = make_inputs(case, 0)
    var = args[[p["tensor"] for p in case["params"]].index("var")]
    assert var.min() >= 0.5


# ---------------------------------------------------------------- pooling

@pytest.mark.parametrize("kind", ["max", "avg", "min", "sum"])
def test_pooling_windows_against_loops(kind):
    args = [2, 9, 8, 3, 3, 2, 2, 3]          # partial windows at the edges are dropped
    case = make_case(f"{kind}pool", args, dtype="float64")
    _, named, ref = run_ref(case)
    x = named["x"]
    n, h, w, c, kh, kw, sh, sw = args
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    assert ref["out"].shape == (n, oh, ow, c) == (2, 4, 3, 3)
    f = {"max": np.max, "min": np.min, "sum": np.sum, "avg": np.mean}[kind]
    for b, i, j, ch in itertools.product(range(n), range(oh), range(ow), range(c)):
        win = [x[b, i * sh + p, j * sw + q, ch] for p in range(kh) for q in range(kw)]
        assert ref["out"][b, i, j, ch] == pytest.approx(f(win))


# ---------------------------------------------------------------- layout

def test_gather_take_and_elements():
    rng = np.random.default_rng(8)
    data = rng.normal(size=(4, 6, 3))
    case = make_case("gather", [4, 6, 3], dtype="float64", axis=1, num_indices=5)
    idx = np.array([5, 0, 0, 3, 2])
    out = reference(case, {"data": data, "indices": idx})["out"]
    assert out.shape == (4, 5, 3)
    for o, k, i in itertools.product(range(4), range(5), range(3)):
        assert out[o, k, i] == data[o, idx[k], i]
    case = make_case("gather", [4, 6, 3], dtype="float64", axis=1, mode="elements", num_indices=2)
    args, named, ref = run_ref(case)
    ind = named["indices"]
    assert ind.shape == (4, 2, 3) and ind.min() >= 0 and ind.max() < 6
    for o, k, i in itertools.product(range(4), range(2), range(3)):
        assert ref["out"][o, k, i] == named["data"][o, ind[o, k, i], i]
    const = make_case("gather", [6, 2], dtype="float64", index=[4, 1], omit=("indices",))
    assert len(const["params"]) == 2
    d2 = data[0][:, :2]
    np.testing.assert_array_equal(reference(const, {"data": d2})["out"], d2[[4, 1]])
    with pytest.raises(CaseError, match="elements"):
        reference(const, {"data": data[0]})


def test_scatter_take_and_elements_and_inverse_of_gather():
    case = make_case("scatter", [7, 3], axis=0, num_indices=4)
    args, named, ref = run_ref(case, 2)
    idx = named["indices"]
    assert len(set(idx.tolist())) == 4                     # unique rows
    exp = named["data"].copy()
    for k in range(4):
        exp[idx[k]] = named["updates"][k]
    np.testing.assert_array_equal(ref["out"], exp)
    g = make_case("gather", [7, 3], axis=0, num_indices=4)
    back = reference(g, {"data": ref["out"], "indices": idx})["out"]
    np.testing.assert_array_equal(back, named["updates"])

    case = make_case("scatter", [3, 8], axis=1, mode="elements", num_indices=5)
    args, named, ref = run_ref(case, 1)
    ind = named["indices"]
    assert all(len(set(r.tolist())) == 5 for r in ind)     # unique within each slice
    exp = named["data"].copy()
    for o, k in itertools.product(range(3), range(5)):
        exp[o, ind[o, k]] = named["updates"][o, k]
    np.testing.assert_array_equal(ref["out"], exp)


def test_scatter_in_place_inout_param():
    """A kernel that scatters into its data buffer: one inout param holding `data`."""
    case = make_case("scatter", [6, 2], axis=0, num_indices=3)
    params = [p for p in case["params"] if p["tensor"] != "out"]
    params[0] = dict(params[0], role="inout", tensor="out", input="data")
    case = dict(case, params=params)
    args = make_inputs(case, 0)
    data0 = args[0].copy()
    ref = reference(case, {"data": data0, "indices": args[1], "updates": args[2]})["data"]
    args[0][args[1]] = args[2]
    np.testing.assert_array_equal(args[0], ref)
    assert check(case, args, inputs=[data0, args[1], args[2]]).ok


def test_concat_transpose():
    rng = np.random.default_rng(9)
    case = make_case("concat", [2, 3, 4], dtype="float64", axis=1, num_inputs=3, sizes=[3, 1, 2])
    xs = [rng.normal(size=(2, s, 4)) for s in (3, 1, 2)]
    out = reference(case, {"x0": xs[0], "x1": xs[1], "x2": xs[2]})["out"]
    assert out.shape == (2, 6, 4)
    np.testing.assert_array_equal(out[:, 3], xs[1][:, 0])
    case = make_case("transpose", [2, 3, 4], dtype="float64", perm=[1, 2, 0])
    x = rng.normal(size=(2, 3, 4))
    out = reference(case, {"x": x})["out"]
    assert out.shape == (3, 4, 2)
    for i, j, k in itertools.product(range(2), range(3), range(4)):
        assert out[j, k, i] == x[i, j, k]


# ---------------------------------------------------------------- LLM

def naive_attention(q, k, v, scale, causal=False):
    m, n = q.shape[0], k.shape[0]
    out = np.zeros((m, v.shape[1]))
    for i in range(m):
        s = [sum(q[i, t] * k[j, t] for t in range(q.shape[1])) * scale for j in range(n)]
        if causal:
            s = [sj if j <= i + n - m else -math.inf for j, sj in enumerate(s)]
        mx = max(s)
        e = [math.exp(x - mx) for x in s]
        out[i] = sum(e[j] / sum(e) * v[j] for j in range(n))
    return out


def test_mha_against_loops():
    case = make_case("mha", [1, 2, 5, 4], dtype="float64", causal=True)
    _, t, ref = run_ref(case)
    for h in range(2):
        np.testing.assert_allclose(ref["out"][0, h], naive_attention(
            t["Q"][0, h], t["K"][0, h], t["V"][0, h], 0.5, causal=True), rtol=1e-10)


def test_gqa_head_grouping():
    case = make_case("gqa", [2, 6, 3, 4, 5], dtype="float64", kv_heads=2)
    _, t, ref = run_ref(case)
    assert t["K"].shape == (2, 2, 5, 4)
    for b, h in itertools.product(range(2), range(6)):
        g = h // 3                                  # heads 0-2 -> kv 0, heads 3-5 -> kv 1
        np.testing.assert_allclose(ref["out"][b, h], naive_attention(
            t["Q"][b, h], t["K"][b, g], t["V"][b, g], 0.5), rtol=1e-10)
    # kv_heads == H is plain multi-head attention
    case = make_case("gqa", [1, 2, 5, 4, 5], dtype="float64", kv_heads=2)
    mha = make_case("mha", [1, 2, 5, 4], dtype="float64")
    _, t, ref = run_ref(case)
    np.testing.assert_allclose(reference(mha, t)["out"], ref["out"], rtol=1e-12)
    with pytest.raises(CaseError):
        make_case("gqa", [1, 6, 3, 4, 5], kv_heads=4)


def test_gatemlp_against_formula():
    case = make_case("gatemlp", [2, 5, 3], dtype="float64")
    _, t, ref = run_ref(case)
    h1, h2 = t["X"] @ t["A"], t["X"] @ t["B"]
    np.testing.assert_allclose(ref["out"], h1 / (1 + np.exp(-h1)) * h2, rtol=1e-12)


def naive_ms_deform_attn(value, shapes, starts, loc, attn):
    """Loop transcription of Deformable DETR's ms_deformable_im2col_bilinear (CUDA)."""
    n, s, m, d = value.shape
    _, lq, _, nl, p, _ = loc.shape
    out = np.zeros((n, lq, m * d))
    for b, q, hd in itertools.product(range(n), range(lq), range(m)):
        acc = np.zeros(d)
        for lv in range(nl):
            h, w = shapes[lv]
            for pt in range(p):
                h_im = loc[b, q, hd, lv, pt, 1] * h - 0.5
                w_im = loc[b, q, hd, lv, pt, 0] * w - 0.5
                if not (h_im > -1 and w_im > -1 and h_im < h and w_im < w):
                    continue
                h0, w0 = math.floor(h_im), math.floor(w_im)
                lh, lw = h_im - h0, w_im - w0
                val = np.zeros(d)
                for yy, xx, wt in ((h0, w0, (1 - lh) * (1 - lw)), (h0, w0 + 1, (1 - lh) * lw),
                                   (h0 + 1, w0, lh * (1 - lw)), (h0 + 1, w0 + 1, lh * lw)):
                    if 0 <= yy < h and 0 <= xx < w:
                        val += wt * value[b, starts[lv] + yy * w + xx, hd]
                acc += attn[b, q, hd, lv, pt] * val
        out[b, q, hd * d:(hd + 1) * d] = acc
    return out


def test_deformable_against_cuda_loop_transcription():
    case = make_case("deformable", [2, 2, 3, 4, 2, 3], dtype="float64",
                     spatial_shapes=[[4, 5], [2, 3]])
    args, t, ref = run_ref(case)
    assert t["spatial_shapes"].tolist() == [[4, 5], [2, 3]]
    assert t["level_start_index"].tolist() == [0, 20]
    assert t["value"].shape == (2, 26, 2, 3)
    np.testing.assert_allclose(t["attention_weights"].sum(axis=(3, 4)), 1.0)
    loc = t["sampling_locations"]
    assert loc.min() < 0 and loc.max() > 1              # borders are exercised
    exp = naive_ms_deform_attn(t["value"], [[4, 5], [2, 3]], [0, 20], loc, t["attention_weights"])
    np.testing.assert_allclose(ref["out"], exp, rtol=1e-10, atol=1e-12)
    # a sample exactly on pixel centre (x*W - 0.5 integral) returns that pixel
    loc1 = np.zeros((1, 1, 1, 1, 1, 2))
    loc1[..., 0], loc1[..., 1] = 2.5 / 5, 1.5 / 4
    val = np.arange(20.0).reshape(1, 20, 1, 1)
    single = make_case("deformable", [1, 1, 1, 1, 1, 1], dtype="float64", spatial_shapes=[[4, 5]])
    out = reference(single, {"value": val, "spatial_shapes": np.array([[4, 5]]),
                             "level_start_index": np.array([0]), "sampling_locations": loc1,
                             "attention_weights": np.ones((1, 1, 1, 1, 1))})["out"]
    assert out[0, 0, 0] == pytest.approx(1 * 5 + 2)


# ---------------------------------------------------------------- tolerances

def test_tolerance_table_and_scaling():
    table = ops.tolerance_table()
    assert table["float32"]["rtol"] == 1e-4 and table["float32"]["atol"] == 1e-5
    assert table["float16"]["rtol"] == 1e-2
    assert table["int"]["atol"] == 0
    assert ops.tolerance_table("deformable")["float32"]["rtol"] == 2e-4
    case = make_case("sum", [4, 400])
    cls, rtol, atol = ops.tolerance_for(case, case["params"][1])
    assert cls == "float32" and rtol == 1e-4 and atol == pytest.approx(1e-5 * 20)
    case = make_case("relu", [4, 400], dtype="float16")
    assert ops.tolerance_for(case, case["params"][1])[1:] == (1e-2, 1e-2)   # R = 1
    case["tolerance"] = {"rtol": 0.5, "atol": 0.25}
    assert ops.tolerance_for(case, case["params"][1]) == ("case", 0.5, 0.25)
    assert ops.REGISTRY["gemm"].tolerances["quantised"]["rtol"] < 1e-6
