"""xpiler bench / tools/bench_translate.py: table, per-kernel records, jobs, resume, compile checks."""
import json
import subprocess
import sys
from pathlib import Path

from xpiler import bench
from xpiler.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_bench_cli_one_kernel_with_records(tmp_path, capsys):
    js, jl = tmp_path / "b.json", tmp_path / "b.jsonl"
    assert main(["bench", "--only", "cuda:vnni", "--limit", "1", "--json", str(js), "--jsonl", str(jl),
                 "--compile-check"]) == 0
    out = capsys.readouterr().out
    assert "cuda -> vnni" in out and "verified/total" in out
    figures = json.loads(js.read_text())["cuda->vnni"]
    assert figures["total"] == 1 and figures["verified"] == 1 and figures["max_s"] > 0
    (rec,) = [json.loads(l) for l in jl.read_text().splitlines()]
    assert rec["direction"] == "cuda->vnni" and rec["status"] == "verified"
    assert rec["compile"] == {"tool": "g++", "ok": True, "message": ""}    # g++ -c of the output
    assert figures["compile_ok"] == figures["compile_checked"] == 1
    assert rec["units_available"] and rec["source_special"] is False


def test_resume_keeps_records_and_runs_only_missing(tmp_path, monkeypatch):
    jl = tmp_path / "r.jsonl"
    first = bench.Record("cuda->hip", bench.sources("cuda")[0].name, "verified", 1.5, units_used=256,
                         units_available=1024, parallel=True).to_json()
    jl.write_text(json.dumps(first) + "\n")
    ran = []

    def fake(src, a, b, do_compile, tmp, timeout=60, infer_inputs=False):
        ran.append(Path(src).name)
        return bench.Record(f"{a}->{b}", Path(src).name, "failed", 0.5, "refused").to_json()

    monkeypatch.setattr(bench, "run_one", fake)
    res = bench.run("cuda:hip", limit=2, jsonl=str(jl), resume=True)
    assert ran == [bench.sources("cuda")[1].name]
    s = res["directions"]["cuda->hip"]
    assert (s["verified"], s["total"], s["parallel"]) == (1, 2, 1)
    assert [r["kernel"] for r in res["records"]] == [p.name for p in bench.sources("cuda")[:2]]
    assert len(jl.read_text().splitlines()) == 2


def test_jobs_keep_corpus_order(tmp_path):
    res = bench.run("cuda:vnni,hip:vnni", limit=2, jobs=2)
    names = [(r["direction"], r["kernel"]) for r in res["records"]]
    want = [("cuda->vnni", p.name) for p in bench.sources("cuda")[:2]] + \
           [("hip->vnni", p.name) for p in bench.sources("hip")[:2]]
    assert names == want
    assert list(res["directions"]) == ["cuda->vnni", "hip->vnni"]


def test_bad_direction_is_a_usage_error(capsys):
    assert main(["bench", "--only", "cuda:cuda"]) == 2
    assert main(["bench", "--resume"]) == 2


def test_wrapper_script_runs_the_same_code(tmp_path):
    js = tmp_path / "w.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bench_translate.py"), "--only", "cuda:vnni",
                           "--limit", "1", "--json", str(js)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(js.read_text())["cuda->vnni"]["total"] == 1


def test_misses_carry_their_refusal_codes(monkeypatch):
    from xpiler import translate as tr

    monkeypatch.setitem(tr.PLANS, ("cuda", "hip"), "api_map{to=vnni}")   # refused: wrong direction
    res = bench.run("cuda:hip", limit=1)
    (rec,) = res["records"]
    assert rec["status"] == "failed" and rec["codes"] and all(c.startswith("XP") for c in rec["codes"])
    assert res["directions"]["cuda->hip"]["codes"] == {c: 1 for c in rec["codes"]}
    assert "api_map: refused" in rec["message"] and rec["cause"].startswith("api_map: refused XP")
    assert res["directions"]["cuda->hip"]["causes"] == {rec["cause"]: 1}


def test_deciding_cause_is_the_lowering_refusal_not_what_follows_it():
    # task_bind refused, so tensorize_bang refused too (its input is still C): the miss is task_bind's
    from xpiler.translate import StepRecord, load_passes

    load_passes()
    steps = [StepRecord("loop_normalize", {}, "refused", 0.1, "XP-LOOP-NORM-001 nothing to do"),
             StepRecord("task_bind", {}, "refused", 0.1, "error[XP-TASK-BIND-001]: not independent"),
             StepRecord("tensorize_bang", {}, "refused", 0.1, "error[XP-TENSORIZE-BANG-002]: not BANG")]
    assert bench._cause(steps) == "task_bind: refused XP-TASK-BIND-001"
    # a step that failed verification decides over any refusal
    steps.insert(0, StepRecord("sroa", {}, "failed-verification", 0.1, "outputs differ"))
    assert bench._cause(steps) == "sroa: failed-verification"
    # no lowering pass among the refusals: the last refusal
    assert bench._cause([steps[1], steps[3]]) == "tensorize_bang: refused XP-TENSORIZE-BANG-002"


def test_a_miss_with_only_unchanged_steps_is_decided_by_the_lowering_pass(monkeypatch):
    # api_map{to=cuda} of a CUDA program has nothing to do (unchanged, not a refusal): nothing
    # reaches hip, and the unchanged lowering step is what decided the miss
    from xpiler import translate as tr

    monkeypatch.setitem(tr.PLANS, ("cuda", "hip"), "api_map{to=cuda}")
    (rec,) = bench.run("cuda:hip", limit=1)["records"]
    assert rec["status"] == "failed" and rec["codes"] == []
    assert rec["cause"] == "api_map: unchanged XP-APIMAP-003"


def test_infer_inputs_hides_the_case_files(tmp_path, capsys):
    jl = tmp_path / "i.jsonl"
    assert main(["bench", "--only", "vnni:cuda", "--limit", "1", "--infer-inputs", "--jsonl", str(jl)]) == 0
    (rec,) = [json.loads(l) for l in jl.read_text().splitlines()]
    assert rec["status"] == "verified", rec
    assert rec["inferred"] and all(isinstance(v, (int, float)) for v in rec["inferred"].values())


def test_corpus_option_measures_another_kernel_set(tmp_path, capsys):
    # a held-out set laid out like xpiler/corpus: DIR/<platform>/ kernels with case files; a kernel
    # without a case file and a platform without a folder contribute nothing
    import shutil

    (tmp_path / "hip").mkdir()
    for name in ("vecadd_ggl.hip", "vecadd_ggl.json"):
        shutil.copy(ROOT / "tests" / "realworld" / "hip" / name, tmp_path / "hip" / name)
    (tmp_path / "hip" / "no_case.hip").write_text("__global__ void k(float* x) {}\n")
    assert [p.name for p in bench.sources("hip", tmp_path)] == ["vecadd_ggl.hip"]
    assert bench.sources("bang", tmp_path) == []
    js = tmp_path / "c.json"
    assert main(["bench", "--corpus", str(tmp_path), "--only", "hip:cuda,bang:cuda", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out.replace("\n", "")
    figures = json.loads(js.read_text())
    assert (figures["hip->cuda"]["verified"], figures["hip->cuda"]["total"]) == (1, 1)
    assert figures["bang->cuda"]["total"] == 0
    assert main(["bench", "--corpus", str(tmp_path / "missing"), "--only", "hip:cuda"]) == 2


def test_compile_failure_message_keeps_the_error_lines():
    nvcc = ("x.cu(3): warning #1675-D: unrecognized GCC pragma\n"
            "  #pragma GCC optimize (\"fp-contract=off\")\n"
            "          ^\n\n"
            "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n"
            "x.cu(40): error: identifier \"xp_undefined\" is undefined\n"
            "1 error detected in the compilation of \"x.cu\".\n")
    msg = bench.compiler_message(nvcc)
    assert msg.startswith('x.cu(40): error: identifier "xp_undefined" is undefined'), msg
    assert "pragma" not in msg and "1 error detected" in msg
    # an internal compiler error without the word "error" in its first lines
    ice = "x.cu(1): warning: w\nnvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n"
    assert bench.compiler_message(ice) == "nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)"
    # nothing that looks like an error: the first lines
    assert bench.compiler_message("a\nb\nc\nd\n") == "a | b | c"
    assert bench.compiler_message("") == ""
