#!/usr/bin/env python3
"""Write the case files of the wild kernels (tests/wild/<platform>/<name>.json).

The files use the ``xpiler.ops`` case schema (``op``, ``name``, ``platform``, ``file``, ``launch``,
``args``, ``params`` in entry order with ``name``/``dtype``/``role``/``shape``/``value``/``range``/
``init``). Most of these kernels compute something outside the 36 registered operators, so
``op`` names the kernel's own operation and ``"reference": "references.py"`` says that the
expected outputs come from ``tests/wild/references.py`` (keyed by file stem), never from
``xpiler.ops``; ``registered_op`` gives the ops operator where one matches. Inputs are made by
``tests/wild/cases.py`` (same rules as ``xpiler.ops.make_inputs``).
Rerun after editing: ``python tests/wild/make_cases.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXT = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def T(name, shape, dtype="float32", role="input", **kw):
    d = {"name": name, "dtype": dtype, "role": role, "shape": list(shape)}
    d.update(kw)
    return d


def O(name, shape, dtype="float32", **kw):
    return T(name, shape, dtype, "output", **kw)


def S(name, value, dtype="int32"):
    return {"name": name, "dtype": dtype, "role": "scalar", "value": value}


def F(name, value, dtype="float32"):
    return S(name, value, dtype)


def BL(clusters=1, cores=4, type_="union1"):
    return {"clusters": clusters, "cores": cores, "type": type_}


# the GGML kernels exist twice: cuda/ggml_X.cu and hip/ggmlhip_X.hip (same entry)
GGML = {
    "arange": dict(op="arange", params=[O("dst", [1000]), S("ne0", 1000), F("start", -2.5), F("step", 0.125)]),
    "diag_mask_inf": dict(op="diag_mask_inf", params=[T("x", [12, 40]), O("dst", [12, 40]), S("ncols", 40), S("nrows", 12),
                                                      S("rows_per_channel", 6), S("n_past", 20)]),
    "scale": dict(op="scale", params=[T("x", [3000]), O("dst", [3000]), F("scale", 1.75), F("bias", -0.5), S("n", 3000)]),
    "clamp": dict(op="clamp", params=[T("x", [2000]), O("dst", [2000]), F("min", -0.25), F("max", 0.5), S("k", 2000)]),
    "timestep_embedding": dict(op="timestep_embedding", params=[T("timesteps", [6], range=[0, 1000]), O("dst", [6, 34]),
                                                                S("ne00", 6), S("dim", 33), S("max_period", 10000)]),
    "argmax": dict(op="argmax", params=[T("x", [7, 300]), O("dst", [7], "int32"), S("ne00", 300), S("nrows", 7)]),
    "softcap": dict(op="softcap", params=[T("x", [1500], range=[-4, 4]), O("dst", [1500]), F("scale", 0.5), F("softcap", 3.0),
                                          S("k", 1500)]),
    "norm": dict(op="layernorm", registered_op="layernorm", params=[T("x", [9, 200]), O("dst", [9, 200]), S("ncols", 200),
                                                                    S("nrows", 9), F("eps", 1e-5)]),
    "group_norm": dict(op="group_norm", params=[T("x", [6 * 100]), O("dst", [6 * 100]), S("num_groups", 6), F("eps", 1e-6),
                                                S("group_size", 100), S("ne_elements", 600)]),
    "sum_rows": dict(op="sum", registered_op="sum", params=[T("x", [11, 700]), O("dst", [11]), S("ncols", 700), S("nrows", 11)]),
    "pool2d": dict(op="pool2d_nchw", params=[T("src", [6, 13, 11]), O("dst", [6, 7, 6]), S("nc", 6), S("ih", 13), S("iw", 11),
                                             S("oh", 7), S("ow", 6), S("kh", 3), S("kw", 3), S("sh", 2), S("sw", 2), S("ph", 1),
                                             S("pw", 1), S("op", 0)]),
    "count_equal": dict(op="count_equal", params=[T("x", [5000], "int32", range=[0, 3]), T("y", [5000], "int32", range=[0, 3]),
                                                  O("dst", [1], "int64"), S("ne", 5000)]),
}

CASES = {f"cuda/ggml_{k}.cu": v for k, v in GGML.items()}
CASES.update({f"hip/ggmlhip_{k}.hip": v for k, v in GGML.items()})
CASES.update({
    # ------------------------------------------------------------------ mmcv (CUDA)
    "cuda/mmcv_sigmoid_focal_loss.cu": dict(op="sigmoid_focal_loss", params=[
        T("input", [40, 7], range=[-3, 3]), T("target", [40], "int64", range=[0, 6]), T("weight", [7], range=[0.5, 1.5]),
        O("output", [40, 7]), S("num_samples", 40), S("num_classes", 7), F("gamma", 2.0), F("alpha", 0.25)]),
    "cuda/mmcv_roi_align.cu": dict(op="roi_align", params=[
        T("input", [2, 3, 12, 10]), T("rois", [5, 5], range=[0, 1]), O("output", [5, 3, 4, 4]),
        O("argmax_y", [5, 3, 4, 4], init="zeros"), O("argmax_x", [5, 3, 4, 4], init="zeros"),
        S("batch", 2), S("num_rois", 5), S("channels", 3), S("height", 12), S("width", 10), S("aligned_height", 4),
        S("aligned_width", 4), F("spatial_scale", 8.0), S("sampling_ratio", 2), S("pool_mode", 1), S("aligned", 1)]),
    "cuda/mmcv_gather_points.cu": dict(op="gather", params=[
        T("points", [2, 3, 50]), T("idx", [2, 20], "int32", range=[0, 49]), O("out", [2, 3, 20]),
        S("b", 2), S("c", 3), S("n", 50), S("npoints", 20)]),
    "cuda/mmcv_three_nn.cu": dict(op="three_nn", params=[
        T("unknown", [2, 30, 3]), T("known", [2, 16, 3]), O("dist2", [2, 30, 3]), O("idx", [2, 30, 3], "int32"),
        S("b", 2), S("n", 30), S("m", 16)]),
    "cuda/mmcv_three_interpolate.cu": dict(op="three_interpolate", params=[
        T("points", [2, 4, 16]), T("idx", [2, 30, 3], "int32", range=[0, 15]), T("weight", [2, 30, 3], range=[0, 1]),
        O("out", [2, 4, 30]), S("b", 2), S("c", 4), S("m", 16), S("n", 30)]),
    "cuda/mmcv_tin_shift.cu": dict(op="tin_shift", params=[
        T("input", [2, 5, 8, 9]), T("shift", [2, 4], "int32", range=[-2, 2]), O("output", [2, 5, 8, 9], init="zeros"),
        S("batch_size", 2), S("t_size", 5), S("channels", 8), S("hw_size", 9), S("group_size", 4)]),
    "cuda/mmcv_ball_query.cu": dict(op="ball_query", params=[
        T("new_xyz", [2, 10, 3]), T("xyz", [2, 40, 3]), O("idx", [2, 10, 5], "int32", init="zeros"),
        S("b", 2), S("n", 40), S("m", 10), F("min_radius", 0.0), F("max_radius", 0.8), S("nsample", 5)]),
    "cuda/mmcv_furthest_point_sample.cu": dict(op="furthest_point_sample", params=[
        T("dataset", [2, 100, 3]), T("temp", [2, 100], role="inout", range=[1e10, 1e10]), O("idxs", [2, 12], "int32"),
        S("b", 2), S("n", 100), S("m", 12)]),
    "cuda/mmcv_masked_im2col.cu": dict(op="masked_im2col", params=[
        T("bottom_data", [3, 9, 8]), T("mask_h_idx", [10], "int64", range=[0, 8]), T("mask_w_idx", [10], "int64", range=[0, 7]),
        O("top_data", [3 * 3 * 3, 10]), S("channels", 3), S("height", 9), S("width", 8), S("mask_cnt", 10),
        S("kernel_h", 3), S("kernel_w", 3), S("pad_h", 1), S("pad_w", 1)]),
    # ------------------------------------------------------------------ torch-sparse / torch-cluster (CUDA)
    "cuda/sparse_ind2ptr.cu": dict(op="ind2ptr", params=[
        T("ind", [60], "int64", range=[0, 19], sorted=True), O("out", [21], "int64"), S("numel", 60), S("M", 20)]),
    "cuda/sparse_ptr2ind.cu": dict(op="ptr2ind", params=[
        T("ptr", [21], "int64", range=[0, 60], sorted=True, first=0, last=60), O("out", [60], "int64"), S("rows", 20), S("E", 60)]),
    "cuda/sparse_spmm_sum.cu": dict(op="spmm_csr", params=[
        T("rowptr", [17], "int64", range=[0, 70], sorted=True, first=0, last=70), T("col", [70], "int64", range=[0, 23]),
        T("value", [70]), T("mat", [24, 40]), O("out", [16, 40]), S("M", 16), S("N", 24), S("K", 40), S("nnz", 70)]),
    "cuda/cluster_grid.cu": dict(op="grid_cluster", params=[
        T("pos", [50, 3], range=[0, 4]), T("size", [3], range=[0.5, 1.5]), T("start", [3], range=[0, 0]),
        T("end", [3], range=[4, 4]), O("out", [50], "int64"), S("numel", 50), S("D", 3)]),
    # ------------------------------------------------------------------ amd-aiter (HIP)
    "hip/aiter_mm_shared.hip": dict(op="gemm", registered_op="gemm", params=[
        T("A", [40, 50]), T("B", [50, 36]), O("C", [40, 36]), S("M", 40), S("K", 50), S("N", 36)]),
    "hip/aiter_hgemv.hip": dict(op="gemv", registered_op="gemv", tolerance={"rtol": 1e-2, "atol": 5e-2}, params=[
        T("A", [64, 1024], "float16"), T("x", [1024], "float16"), O("y", [64], "float16"), S("M", 64), S("K", 1024)]),
    # ------------------------------------------------------------------ mmcv Cambricon helpers (BANG)
    "bang/mmcv_int2float.mlu": dict(op="cast", launch=BL(), params=[
        T("src", [3000], "int32", range=[-100000, 100000]), O("dst", [3000]), S("n", 3000)]),
    "bang/mmcv_float2int.mlu": dict(op="cast", launch=BL(), params=[
        T("src", [3000], range=[-1000, 1000]), O("dst", [3000], "int32"), S("n", 3000)]),
    "bang/mmcv_float2half.mlu": dict(op="cast", launch=BL(), tolerance={"rtol": 1e-3, "atol": 1e-3}, params=[
        T("src", [3000]), O("dst", [3000], "float16"), S("n", 3000)]),
    "bang/mmcv_relun.mlu": dict(op="relun", launch=BL(), params=[
        T("src", [3000], range=[-2, 2]), O("dst", [3000]), S("n", 3000), F("threshold", 0.75)]),
    "bang/mmcv_load_str2d.mlu": dict(op="strided_copy", launch=BL(1, 1, "block"), params=[
        T("src", [20, 48]), O("dst", [20, 40]), S("rows", 20), S("cols", 40), S("src_str", 48), S("dst_str", 64)]),
    "bang/mmcv_store_str2d.mlu": dict(op="strided_copy", launch=BL(1, 1, "block"), params=[
        T("src", [20, 40]), O("dst", [20, 48], init="zeros"), S("rows", 20), S("cols", 40), S("nram_str", 64),
        S("dst_str", 48)]),
})

# ------------------------------------------------------------------ SimSIMD / hnswlib (x86 AVX-512)
N = 1000
for name, a, b, extra, out in [
        ("simsimd_dot_f32", "float32", "float32", [], ("result", "float64", 1)),
        ("simsimd_dot_f64", "float64", "float64", [], ("result", "float64", 1)),
        ("simsimd_dot_i8", "int8", "int8", [], ("result", "float64", 1)),
        ("simsimd_dot_u8", "uint8", "uint8", [], ("result", "float64", 1)),
        ("simsimd_l2sq_f32", "float32", "float32", [], ("result", "float64", 1)),
        ("simsimd_cos_f32", "float32", "float32", [], ("result", "float64", 1)),
        ("simsimd_l2sq_i8", "int8", "int8", [], ("result", "float64", 1)),
        ("simsimd_l2sq_u8", "uint8", "uint8", [], ("result", "float64", 1)),
        ("simsimd_hamming_b8", "uint8", "uint8", [], ("result", "float64", 1)),
        ("simsimd_sum_f32", "float32", "float32", [], ("result", "float32", N)),
        ("simsimd_wsum_f32", "float32", "float32", [F("alpha", 0.75, "float64"), F("beta", -1.5, "float64")],
         ("result", "float32", N)),
        ("hnswlib_l2sqr_avx512", "float32", "float32", [], ("result", "float32", 1)),
        ("hnswlib_ip_avx512", "float32", "float32", [], ("result", "float32", 1))]:
    n = 992 if name.startswith("hnswlib") else N      # hnswlib's AVX-512 path needs a multiple of 16
    nname = "dim" if name.startswith("hnswlib") else ("n_words" if "hamming" in name else "n")
    params = [T("a", [n], a), T("b", [n], b), S(nname, n)] + extra + [O(out[0], [out[2] if out[2] == 1 else n], out[1])]
    CASES[f"vnni/{name}.cpp"] = dict(op=name.split("_", 1)[1], params=params)
CASES["vnni/simsimd_scale_f32.cpp"] = dict(op="scale", params=[
    T("a", [N]), S("n", N), F("alpha", 0.75, "float64"), O("result", [N])])
CASES["vnni/simsimd_fma_f32.cpp"] = dict(op="fma", params=[
    T("a", [N]), T("b", [N]), T("c", [N]), S("n", N), F("alpha", 0.75, "float64"), F("beta", -1.5, "float64"), O("result", [N])])


def case_for(rel: str, spec: dict) -> dict:
    platform, fname = rel.split("/")
    stem = fname.rsplit(".", 1)[0]
    case = {"op": spec["op"], "name": stem, "platform": platform, "file": fname}
    if "launch" in spec:
        case["launch"] = spec["launch"]
    case["reference"] = "references.py"
    for k in ("registered_op", "tolerance"):
        if k in spec:
            case[k] = spec[k]
    case["params"] = spec["params"]
    return case


def main() -> None:
    for rel, spec in sorted(CASES.items()):
        path = HERE / rel
        assert path.exists(), rel
        text = json.dumps(case_for(rel, spec), indent=1)
        path.with_suffix(".json").write_text(text + "\n")
    print(f"{len(CASES)} case files written")


if __name__ == "__main__":
    main()
