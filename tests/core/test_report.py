"""The translation report's resource facts (xpiler/resources.py): parallel units used vs
available, on-chip buffers, special instructions, for source and output; `parse --json`
shows an output's launch configuration; `--explain` prints the facts."""
import json
from pathlib import Path

from xpiler.cli import main
from xpiler.parse import parse_file
from xpiler.resources import one_line, resources

CORPUS = Path(__file__).resolve().parents[2] / "xpiler" / "corpus"

ROWSUM = r"""
#include <stdint.h>
extern "C" void rowsum(const int8_t* a, int32_t* out, int m, int n) {
  for (int i = 0; i < m; ++i) {
    int32_t s = 0;
    for (int j = 0; j < n; ++j) s += a[i * n + j];
    out[i] = s;
  }
}
"""


def test_gpu_launch_evaluated_at_the_scalars():
    res = resources(parse_file(CORPUS / "cuda" / "add_18_128.cu"), {"size": 2304})
    (launch,) = res["parallel"]["launches"]
    assert launch["grid"] == [3, 1, 1] and launch["block"] == [1024, 1, 1]     # (2304 + 1023) / 1024
    assert launch["threads"] == 3 * 1024 and launch["within_limits"] is True
    assert res["parallel"]["units_used"] == 1024 and res["parallel"]["units_available"] == 1024
    unevaluated = resources(parse_file(CORPUS / "cuda" / "add_18_128.cu"))
    assert unevaluated["parallel"]["launches"][0]["grid"][0] == "(size + 1023) / 1024"


def test_wmma_and_mfma_are_special_instructions():
    cu = resources(parse_file(CORPUS / "cuda" / "gemm_64_256_64.cu"))
    assert "wmma::mma_sync" in cu["special_instructions"]
    hip = resources(parse_file(CORPUS / "hip" / "bmm_2_32_64_32.hip"))
    assert any("mfma" in s for s in hip["special_instructions"])
    assert hip["parallel"]["limits"]["warp_size"] == 64


def test_bang_kernel_entry_uses_the_profile_launch_and_on_chip_buffers():
    res = resources(parse_file(CORPUS / "bang" / "bmm_2_32_128_64.mlu"))
    (launch,) = res["parallel"]["launches"]
    assert launch["from"] == "caller" and launch["task_dim"] == 16
    assert launch["ktype"] == "CNRT_FUNC_TYPE_UNION4" and launch["union_clusters"] == 4
    assert launch["within_limits"] is True
    assert res["parallel"]["units_used"] == res["parallel"]["units_available"] == 16
    assert set(res["on_chip_bytes"]) >= {"nram", "wram"} and res["on_chip_capacity"]["nram"] == 786432
    assert "__bang_matmul" in res["special_instructions"]
    assert "__memcpy" in res["data_movement"] and "__memcpy" not in res["special_instructions"]
    assert "16/16 cores" in one_line(res)


def test_vnni_counts_simd_and_dpbusd():
    res = resources(parse_file(CORPUS / "vnni" / "bmm_2_16_30_20.cpp"))
    assert res["parallel"]["kind"] == "cpu" and res["parallel"]["avx512_calls"] > 0
    assert res["special_instructions"] == ["_mm512_dpbusd_epi32"]


def test_report_and_explain_state_source_and_output(tmp_path, capsys):
    src = tmp_path / "rowsum.cpp"
    src.write_text(ROWSUM)
    out, rep = tmp_path / "rowsum.mlu", tmp_path / "r.json"
    assert main(["translate", str(src), "--to", "bang", "-o", str(out), "--report", str(rep),
                 "--explain"]) == 0
    err = capsys.readouterr().err
    assert "source (vnni): parallel units" in err and "output (bang): parallel units" in err
    report = json.loads(rep.read_text())
    source, output = report["resources"]["source"], report["resources"]["output"]
    assert source["parallel"]["units_used"] == 1            # plain loops: one core
    par = output["parallel"]
    assert par["kind"] == "bang" and par["units_available"] == 16 and par["units_used"] >= 1
    assert all(l["task_dim"] is not None for l in par["launches"])
    # parse --json of the output shows its launch configuration (front-end launches + resources)
    assert main(["parse", str(out), "--json", "--arg", "m=64", "--arg", "n=32"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["launch"] and summary["launch"][0]["dim"] is not None
    assert summary["resources"]["parallel"]["launches"][0]["ktype"].startswith("CNRT_FUNC_TYPE")


def test_parse_json_shows_gpu_launch_of_a_translated_output(tmp_path, capsys):
    out = tmp_path / "add.hip"
    assert main(["translate", str(CORPUS / "cuda" / "add_18_128.cu"), "--to", "hip", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["parse", str(out), "--json", "--arg", "size=2304"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["launch"][0]["grid"] and summary["launch"][0]["block"] == ["1024", "1", "1"]
    assert summary["resources"]["parallel"]["launches"][0]["grid"] == [3, 1, 1]
