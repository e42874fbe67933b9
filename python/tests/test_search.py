"""The performance auto-tuner's strategies on synthetic costs with a known optimum."""

import os
import math
from pathlib import Path

import pytest

from hpvm.tune.search import (STRATEGIES, Parameter, Space, best_so_far, exhaustive)


def tile_space():
    # A tiling-shaped space: sizes that are powers of two, a vector width and threads.
    return Space([Parameter("tile_x", (4, 8, 16, 32, 64, 128)),
                  Parameter("tile_y", (1, 2, 4, 8, 16)),
                  Parameter("lanes", (4, 8, 16, 32)),
                  Parameter("threads", (1, 2))],
                 legal=lambda v: v["tile_x"] * v["tile_y"] <= 1024)


def smooth_cost(v):
    # A bowl in log space (best at tile 32 x 4, 16 lanes, 2 threads) plus a ripple.
    return (1.0 + (math.log2(v["tile_x"]) - 5) ** 2 + 0.7 * (math.log2(v["tile_y"]) - 2) ** 2
            + 0.5 * (math.log2(v["lanes"]) - 4) ** 2 + 0.1 * math.sin(v["tile_x"])) \
        / (1.8 if v["threads"] == 2 else 1.0)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_each_strategy_is_deterministic_never_repeats_and_keeps_its_budget(strategy):
    space = tile_space()
    first = STRATEGIES[strategy](space, smooth_cost, 30, seed=5)
    again = STRATEGIES[strategy](space, smooth_cost, 30, seed=5)
    assert first == again
    points = [p for p, _ in first]
    assert len(points) == 30 == len(set(points))
    assert all(space.legal(p) for p in points)


def test_the_searches_find_the_known_optimum():
    space = tile_space()
    optimum, best = exhaustive(space, smooth_cost)
    assert space.values(optimum) == {"tile_x": 32, "tile_y": 4, "lanes": 16, "threads": 2}
    finals = {}
    for name, strategy in STRATEGIES.items():
        # Median over seeds of the best found with 60 of the 232 legal points.
        runs = sorted(best_so_far(strategy(space, smooth_cost, 60, seed=s))[-1]
                      for s in range(5))
        finals[name] = runs[2]
    # The guided searches reach the optimum (within 5%) where random search need not, and
    # do at least as well as it.
    for name in ("bandit", "surrogate"):
        assert finals[name] <= best * 1.05, finals
        assert finals[name] <= finals["random"] + 1e-12, finals


def test_small_spaces_are_exhausted_without_repeats():
    space = Space([Parameter("a", (0, 1, 2)), Parameter("b", (0, 1))])
    for name, strategy in STRATEGIES.items():
        history = strategy(space, lambda v: 1 + v["a"] + v["b"], 100, seed=1)
        assert len(history) == 6, name
        assert best_so_far(history)[-1] == 1


def test_best_so_far_is_monotone():
    history = [((0,), 3.0), ((1,), 5.0), ((2,), 1.0), ((3,), 2.0)]
    assert best_so_far(history) == [3.0, 3.0, 1.0, 1.0]


def test_hpvm_tune_runs_a_real_program(tmp_path):
    # Two evaluations of the HPVM-C sgemm: built by hpvm-cc with the knobs' flags, run, its
    # printed time read back, the builds cached by their flags.
    import json
    from hpvm.tune.__main__ import main
    out = tmp_path / "sgemm.json"
    assert main(["sgemm", "--budget", "2", "--strategies", "random", "--checkpoints", "2",
                 "--workdir", str(tmp_path / "work"), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["default"]["seconds"] > 0
    history = data["strategies"]["random"]["runs"][0]["history"]
    assert len(history) == 2 and all(seconds > 0 for _, seconds in history)
    assert data["strategies"]["random"]["answers"]["2"]["seconds"] == min(s for _, s in history)


def test_graph_programs_turn_knobs_into_transforms_flags_and_arguments(tmp_path):
    from hpvm.tune.programs import EdgePipeline, Stencil
    stencil = Stencil(tmp_path, tmp_path / "work")
    assert stencil.transforms(stencil.default) == []
    assert stencil.transforms({"tile_x": 32, "tile_y": 4, "target": "cpu", "threads": 1}) == [
        "--hpvm-tile-nodes=nodes=stencil_point sizes=32,4,1"]
    assert stencil.flags({"tile_x": 0, "tile_y": 1, "target": "opencl", "threads": 1}) == [
        "--target=opencl"]
    assert stencil.environment({"threads": 1}) == {"HPVM_NUM_THREADS": "1",
                                                    "HPVM_BENCH_ONLY": "hpvm"}
    # The untiled program is one point, not four.
    space = stencil.space()
    untiled = [p for p in space.all_points() if space.values(p)["tile_x"] == 0]
    assert len(untiled) == 4 and all(space.values(p)["tile_y"] == 1 for p in untiled)
    edge = EdgePipeline(tmp_path, tmp_path / "work")
    assert edge.transforms({"fuse": "laplacian:gradient", "slots": 2, "threads": 2}) == [
        "--hpvm-fuse-nodes=pairs=laplacian:gradient"]
    assert edge.arguments({"fuse": "none", "slots": 6, "threads": 2})[3] == "6"
    output = ("edge hpvm 256x256 frames=16 runs=5 median_ms=39.59 min_ms=32.85 max_ms=42.53\n"
              "edge omp 256x256 frames=16 runs=5 median_ms=0.00 min_ms=0.00 max_ms=0.00\n"
              "edge ratio hpvm/omp=0.000 min=0.000 max=0.000 check=ok\n")
    assert edge.measured_time(output) == pytest.approx(0.03959)
    assert edge.correct(output) and not edge.correct(output.replace("check=ok", "check=MISMATCH"))


def test_builds_are_cached_by_knobs_sources_and_compiler(tmp_path, monkeypatch):
    # The same knobs reuse a build; a changed source or a rebuilt compiler (hpvm-cc, the
    # compiler library, the runtime) builds again, never measuring a stale binary.
    from hpvm import toolchain
    from hpvm.tune.programs import Sgemm
    (tmp_path / "examples" / "hpvm-c").mkdir(parents=True)
    source = tmp_path / "examples" / "hpvm-c" / "sgemm.c"
    source.write_text("int main(void) { return 0; }\n")
    compiler = tmp_path / "fake-hpvm-cc"
    compiler.write_text("one")
    monkeypatch.setattr(toolchain, "compiler_files", lambda: [compiler])
    built = []

    def fake_hpvm_cc(self, arguments, what):
        built.append(arguments)
        Path(arguments[-1]).write_text("binary")
    monkeypatch.setattr(Sgemm, "_hpvm_cc", fake_hpvm_cc)

    def fresh():
        return Sgemm(tmp_path, tmp_path / "work")
    first = fresh().build(Sgemm.default)
    assert fresh().build(Sgemm.default) == first and len(built) == 1
    assert fresh().build(dict(Sgemm.default, tile_m=32)) != first and len(built) == 2
    source.write_text("int main(void) { return 1; }\n")
    changed = fresh().build(Sgemm.default)
    assert changed != first and len(built) == 3
    compiler.write_text("two, rebuilt")
    assert fresh().build(Sgemm.default) not in (first, changed) and len(built) == 4


def test_the_edge_pipeline_builds_fused_and_runs(tmp_path, monkeypatch):
    # One real evaluation through the fusion and hpvm-cc's build (both in this process: no
    # hpvm-opt or hpvm-cc process starts) and the driver, which checks the edges against the
    # sequential C pipeline.
    import subprocess
    from hpvm.tune.programs import EdgePipeline, find_root
    started = []

    class Recording(subprocess.Popen):
        def __init__(self, args, *rest, **options):
            started.append(os.path.basename(str(args[0])))
            super().__init__(args, *rest, **options)
    monkeypatch.setattr(subprocess, "Popen", Recording)
    edge = EdgePipeline(find_root(), tmp_path)
    edge.arguments = lambda values: ["64", "64", "4", str(values["slots"]), "--runs", "1"]
    seconds = edge.seconds({"fuse": "laplacian:gradient", "slots": 2, "threads": 2})
    assert 0 < seconds < 10 and edge.builds == 1
    assert started and not {"hpvm-cc", "hpvm-opt"} & set(started), started
    assert list(tmp_path.glob("edge-*.mlir")), "the fused graph is kept next to the build"


class _Synthetic:
    """A program without builds: the tiling-shaped cost above, counted."""

    name = "synthetic"
    default = {"tile_x": 4, "tile_y": 1, "lanes": 4, "threads": 1}
    builds = 0

    def __init__(self, root, workdir):
        self.runs = 0

    def space(self):
        return tile_space()

    def seconds(self, values):
        self.runs += 1
        return smooth_cost(values) / 1000


def test_hpvm_tune_exhaustive_then_seeds_replay_the_measurements(tmp_path, monkeypatch, capsys):
    import json
    from hpvm.tune import __main__ as tune
    monkeypatch.setitem(tune.PROGRAMS, "synthetic", _Synthetic)
    monkeypatch.setattr(tune, "find_root", lambda: tmp_path)
    out = tmp_path / "out.json"
    assert tune.main(["synthetic", "--exhaustive", "--seeds", "3", "--budget", "60",
                      "--checkpoints", "20,60", "--confirm", "2", "--workdir",
                      str(tmp_path), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["space_size"] == 232
    # Every legal point measured once; the searches replayed them.
    assert data["configurations_run"] == 232
    assert data["exhaustive"]["values"] == {"tile_x": 32, "tile_y": 4, "lanes": 16, "threads": 2}
    for name, strategy in data["strategies"].items():
        assert [run["seed"] for run in strategy["runs"]] == [0, 1, 2]
        assert all(len(run["history"]) == 60 for run in strategy["runs"])
        assert strategy["reached"]["runs"] == 3
        answer = strategy["answers"]["60"]
        assert answer["min_seconds"] <= answer["seconds"] <= answer["max_seconds"]
    assert data["strategies"]["bandit"]["reached"]["runs_reaching"] == 3
    # The answers timed again: the optimum against the default.
    confirmed = data["confirmed"]
    assert len(confirmed["default"]["samples"]) == 2
    # The sweep's runners-up are timed again too; the fastest then is reported.
    assert {"sweep #2", "sweep #5"} <= set(confirmed)
    assert data["confirmed_best"] in ("exhaustive", "bandit after 60", "random after 60",
                                      "surrogate after 60")
    assert confirmed["exhaustive"]["speedup"] == pytest.approx(
        smooth_cost(_Synthetic.default) / smooth_cost(data["exhaustive"]["values"]))
    assert "within 5% of the optimum in 3 of 3 runs" in capsys.readouterr().out


def test_hpvm_tune_plot_draws_the_curves_or_says_what_is_missing(tmp_path, monkeypatch, capsys):
    from hpvm.tune import __main__ as tune
    monkeypatch.setitem(tune.PROGRAMS, "synthetic", _Synthetic)
    monkeypatch.setattr(tune, "find_root", lambda: tmp_path)
    png = tmp_path / "curves.png"
    status = tune.main(["synthetic", "--budget", "10", "--checkpoints", "10", "--seeds", "2",
                        "--workdir", str(tmp_path), "--plot", str(png)])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert status == 1 and "--plot needs matplotlib" in capsys.readouterr().err
        return
    assert status == 0 and png.read_bytes().startswith(b"\x89PNG")


def test_hpvm_tune_refuses_bad_numbers(capsys):
    from hpvm.tune.__main__ import main
    with pytest.raises(SystemExit):
        main(["sgemm", "--checkpoints", "20,x"])
    assert "--checkpoints expects numbers separated by commas, found '20,x'" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sgemm", "--seeds", "0"])


class _Drifting(_Synthetic):
    """The synthetic cost on a machine whose speed swings by +-40% over ~60 runs (a run
    next to another differs by up to 4%)."""

    def seconds(self, values):
        self.runs += 1
        return smooth_cost(values) / 1000 * (1 + 0.4 * math.sin(self.runs / 10))


def test_paired_measurements_cancel_the_machines_drift(tmp_path, monkeypatch):
    import json
    from hpvm.tune import __main__ as tune
    monkeypatch.setitem(tune.PROGRAMS, "drifting", _Drifting)
    monkeypatch.setattr(tune, "find_root", lambda: tmp_path)
    default = smooth_cost(_Drifting.default)
    for flags, tolerance in (([], 0.1), (["--unpaired"], None)):
        out = tmp_path / "out.json"
        assert tune.main(["drifting", "--exhaustive", "--budget", "1", "--checkpoints", "1",
                          "--strategies", "random", "--workdir", str(tmp_path), "--out",
                          str(out), *flags]) == 0
        data = json.loads(out.read_text())
        # Each cost against the default's, as the machine would give them at one speed.
        errors = [abs(seconds / data["default"]["seconds"] - smooth_cost(values) / default)
                  / (smooth_cost(values) / default)
                  for values, seconds in data["exhaustive"]["measured"]]
        if tolerance is not None:
            assert data["paired"] and max(errors) < tolerance
        else:
            # Alone, the drift shows: some costs are off by more than 20%.
            assert not data["paired"] and max(errors) > 0.2
