"""hpvm-approx-tune on the digits CNN, with a small budget: the report, the knob files it
writes, and those files through hpvm-cc (a tuned configuration is a program's input)."""

import json
import subprocess

from hpvm import toolchain
from hpvm.approx import digits
from hpvm.approx.tune import main
from hpvm.approx.tuner import Configuration, Knob


def test_the_tuner_writes_configurations_hpvm_cc_compiles(tmp_path, capsys):
    out = tmp_path / "report.json"
    knobs = tmp_path / "knobs"
    assert main(["--mode", "empirical", "--budget", "6", "--targets", "1,50",
                 "--repeats", "2", "--confirm", "2", "--out", str(out),
                 "--knobs-dir", str(knobs)]) == 0
    printed = capsys.readouterr().out
    assert "6 configurations measured" in printed
    report = json.loads(out.read_text())
    assert report["measured"] == 6 and report["pareto"]
    loose = report["targets"]["50.0"]
    assert loose["loss"] <= 50.0 and loose["confirmed_speedup"] > 0
    assert 0.0 <= loose["test_accuracy"] <= 100.0

    # The answer for the 50% target, and a configuration with a knob written the same way,
    # as files hpvm-cc takes with the model's MLIR.
    configuration = json.loads((knobs / "digits_knobs_50.json").read_text())
    assert configuration["info"]["target_loss"] == 50.0
    sampled = tmp_path / "sampled.json"
    sampled.write_text(json.dumps(
        Configuration.of({"conv2": Knob("sample_filter", 2, 0)}).to_json()))
    model = tmp_path / "digits.mlir"
    model.write_text(digits.graph(360).mlir())
    for knob_file in (knobs / "digits_knobs_50.json", sampled):
        done = subprocess.run([toolchain.tool("hpvm-cc"), "--emit=mlir", f"--knobs={knob_file}",
                               str(model), "-o", str(tmp_path / "digits.llvm.mlir")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        lowered = (tmp_path / "digits.llvm.mlir").read_text()
        approximate = "hpvm_rt_tensor_conv2d_approx_f32" in lowered
        assert approximate == bool(json.loads(knob_file.read_text())["knobs"])


def test_an_error_budget_rules_configurations_out(tmp_path, capsys):
    # A budget no approximate configuration meets (the exact one has no error): every answer
    # is the exact configuration, and the report counts the others as over the budget.
    out = tmp_path / "report.json"
    assert main(["--mode", "empirical", "--budget", "4", "--targets", "50",
                 "--repeats", "1", "--confirm", "1", "--error-budget", "0,0",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "error budget L1 0, L2 0 on the probabilities: 3 of 4 configurations beyond it" \
        in printed
    report = json.loads(out.read_text())
    assert report["over_budget"] == 3
    assert report["targets"]["50.0"]["configuration"] == []
    assert report["targets"]["50.0"]["error"] == [0.0, 0.0]
    assert all(entry["within_budget"] for entry in report["pareto"])


def test_error_budget_option_refusals(capsys):
    import pytest
    for bad in ("0.1", "a,b", "-1,0.1"):
        with pytest.raises(SystemExit):
            main([f"--error-budget={bad}"])
        assert "--error-budget: expected two numbers >= 0 (L1,L2)" in capsys.readouterr().err
