"""The Python module's answers against the command line's, on the real samples."""

import io
import json
import subprocess
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import memscope
from conftest import ROOT, SAMPLES

SNAPSHOTS = sorted(str(p.relative_to(ROOT)) for p in SAMPLES.glob("*.pickle")) + [
    "tests/data/release.json",
    "tests/data/release.pickle.gz",
    "tests/data/multi/two_gpus.pickle",
    "tests/data/multi/two_gpus_oom0.pickle",
    "tests/data/formats/host.pickle",
    "tests/data/formats/no_time.pickle",
    "tests/data/formats/empty_traces.pickle",
]
BROKEN = [
    "tests/data/not_a_snapshot.pickle",
    "tests/data/release_truncated.pickle",
    "tests/data/evil_global_os_system.pickle",
    "tests/data/evil_stack_global.pickle",
    "tests/data/formats/lfs_pointer.pickle",
    "tests/data/no_such_file.pickle",
]


def run(cli, *args, ok=True):
    r = subprocess.run([cli, *args], cwd=ROOT, capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def cli_json(cli, *args):
    return json.loads(run(cli, *args).stdout)


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # files are named as the command line is given them


def test_installed_module_is_not_the_source_tree():
    assert Path(memscope.__file__).resolve().parent != (ROOT / "python" / "memscope").resolve()
    assert memscope.__version__ == (ROOT / "agent" / "memscope_agent" / "VERSION").read_text().split()[0]


@pytest.mark.parametrize("path", SNAPSHOTS)
def test_summary_equals_cli_json(cli, path):
    a = memscope.open(path)
    assert a.summary() == cli_json(cli, "summary", path, "--json")
    assert a.devices == [d["device"] for d in a.summary()["devices"]]


def test_summary_of_one_device(cli):
    path = "tests/data/multi/two_gpus.pickle"
    a = memscope.open(path)
    assert a.devices == [0, 1]
    assert a.summary(device=1) == cli_json(cli, "summary", path, "--device", "1", "--json")


@pytest.mark.parametrize("path", [p for p in SNAPSHOTS if "empty_traces" not in p])
def test_allocations_equal_cli_csv(cli, path):
    a = memscope.open(path)
    df = a.allocations()
    csv = pd.read_csv(io.StringIO(run(cli, "allocations", path, "--csv", "-").stdout), keep_default_na=False)
    assert list(df.columns) == list(csv.columns)
    assert len(df) == len(csv) == sum(d["allocations"] for d in a.summary()["devices"] if d["device"] == a.focus_device)
    for col in ["alloc_event", "free_requested_event", "free_event", "addr", "size", "stream", "iteration"]:
        assert df[col].dtype.kind in "iu", col
        assert np.array_equal(df[col].to_numpy(), csv[col].to_numpy().astype(df[col].dtype)), col
    assert str(df["alloc_time_us"].dtype) == "Int64"
    expected_time = [str(v) for v in csv["alloc_time_us"]]
    got_time = ["" if pd.isna(v) else str(v) for v in df["alloc_time_us"]]
    assert got_time == expected_time
    for col in ["category", "phase", "top_frame", "op", "module"]:
        assert df[col].astype(str).tolist() == csv[col].astype(str).tolist(), col


def test_allocations_of_each_device(cli):
    path = "tests/data/multi/two_gpus.pickle"
    a = memscope.open(path)
    for device in a.devices:
        csv = pd.read_csv(io.StringIO(run(cli, "allocations", path, "--device", str(device), "--csv", "-").stdout))
        df = a.allocations(device)
        assert len(df) == len(csv)
        assert df["size"].sum() == csv["size"].sum()


@pytest.mark.parametrize("path", BROKEN)
def test_broken_file_raises_the_cli_message(cli, path):
    r = run(cli, "summary", path, ok=False)
    assert r.returncode == 1
    message = r.stderr.strip().removeprefix("memscope summary: ")
    with pytest.raises(memscope.SnapshotError) as e:
        memscope.open(path)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("path", ["tests/data/evil_global_os_system.pickle", "tests/data/evil_stack_global.pickle"])
def test_malicious_pickle_is_refused_not_run(tmp_path, path):
    with pytest.raises(memscope.SnapshotError, match="refused pickle opcode"):
        memscope.open(path)


def test_missing_device_is_a_value_error(cli):
    a = memscope.open("samples/linear3.pickle")
    r = run(cli, "allocations", "samples/linear3.pickle", "--device", "7", "--csv", "-", ok=False)
    with pytest.raises(ValueError) as e:
        a.allocations(7)
    assert str(e.value) == r.stderr.strip().removeprefix("memscope allocations: ")
    with pytest.raises(TypeError):
        a.summary(device="0")


@pytest.mark.parametrize("path", ["samples/llm_bs16.pickle", "samples/oom.pickle", "samples/loss_leak.pickle",
                                  "tests/data/multi/two_gpus_oom0.pickle"])
def test_diagnose_equals_cli_json(cli, path):
    assert memscope.open(path).diagnose() == cli_json(cli, "diagnose", path, "--json")


def test_diff_equals_cli_json(cli):
    a, b = "samples/llm_bs16.pickle", "tests/data/compare/llm_bs2.pickle"
    assert memscope.diff(memscope.open(a), memscope.open(b)) == cli_json(cli, "diff", a, b, "--json")


@pytest.mark.parametrize("kwargs,args", [
    ({}, []),
    ({"set": ["expandable_segments:True"]}, ["--set", "expandable_segments:True"]),
    ({"capacity": "2GiB", "max_batch": True, "recorded_batch": 16},
     ["--capacity", "2GiB", "--max-batch", "--recorded-batch", "16"]),
    ({"batch": 32, "recorded_batch": 16}, ["--batch", "32", "--recorded-batch", "16"]),
    ({"checkpoint": "all", "precision": "bf16", "recorded_batch": 16},
     ["--checkpoint", "all", "--precision", "bf16", "--recorded-batch", "16"]),
    ({"optimizer": "sgd-momentum", "accumulate": 2, "seq": 512, "recorded_seq": 256},
     ["--optimizer", "sgd-momentum", "--accumulate", "2", "--seq", "512", "--recorded-seq", "256"]),
    ({"checkpoint": 4, "recorded_precision": "fp32", "recorded_optimizer": "adamw"},
     ["--checkpoint", "4", "--recorded-precision", "fp32", "--recorded-optimizer", "adamw"]),
    ({"capacity": "4GiB", "plan": True, "recorded_batch": 16}, ["--capacity", "4GiB", "--plan", "--recorded-batch", "16"]),
    ({"shard": "zero1:2", "recorded_batch": 16}, ["--shard", "zero1:2", "--recorded-batch", "16"]),
])
def test_whatif_equals_cli_json(cli, kwargs, args):
    path = "samples/llm_bs16.pickle"
    assert memscope.open(path).whatif(**kwargs) == cli_json(cli, "whatif", path, *args, "--json")


def test_whatif_bad_setting_is_a_value_error():
    with pytest.raises(ValueError, match="--set"):
        memscope.open("samples/linear3.pickle").whatif(set=["no_such_setting:1"])


def test_peak_matches_report_json(cli, tmp_path):
    path = "samples/llm_bs16.pickle"
    run(cli, "report", path, "--out", str(tmp_path))
    report = json.loads((tmp_path / "report.json").read_text())
    peak = memscope.open(path).peak(top=5)
    for key in ["bytes", "event_index", "time_us", "phase", "iteration", "reserved_bytes", "by_category"]:
        assert peak["point"][key] == report["peak"][key], key
    assert peak["is_global_peak"]
    assert peak["top_call_sites"] == report["at"]["top_call_sites"][:5]
    sizes = [x["size_bytes"] for x in peak["top_allocations"]]
    assert len(sizes) == 5 and sizes == sorted(sizes, reverse=True)
    assert peak["point"]["bytes"] == memscope.open(path).summary()["devices"][0]["peak_requested_bytes"]


def test_allocations_at_a_time():
    a = memscope.open("samples/llm_bs16.pickle")
    peak = a.peak()
    at = a.allocations_at(peak["point"]["time_us"])
    assert at["point"]["bytes"] >= 0
    assert at["point"]["time_us"] <= peak["point"]["time_us"]
    before = a.allocations_at(0)
    assert before["point"]["event_index"] == -1


def test_timeline_keeps_the_peak_and_adds_up():
    a = memscope.open("samples/llm_bs16.pickle")
    s = a.summary()["devices"][0]
    t = a.timeline(columns=300)
    assert len(t) == 300
    assert t["requested_bytes"].max() == s["peak_requested_bytes"]
    assert t["event_index"].is_monotonic_increasing
    assert (t[list(memscope.CATEGORIES)].sum(axis=1) == t["requested_bytes"]).all()
    whole = a.timeline(columns=10**9)
    assert len(whole) == s["events"]
    with pytest.raises(ValueError):
        a.timeline(columns=0)


def test_plot_and_notebook_display():
    import matplotlib
    matplotlib.use("Agg")
    a = memscope.open("samples/llm_bs16.pickle")
    fig = a.plot()
    ax = fig.axes[0]
    assert len(ax.collections) == len(memscope.CATEGORIES)
    assert [t.get_text() for t in ax.get_legend().get_texts()][-1] == "Reserved"
    html = a._repr_html_()
    assert "<table>" in html and "data:image/png;base64," in html


def test_ranks_equal_cli_json(cli):
    folder = "tests/data/ranks"
    assert memscope.ranks(folder) == cli_json(cli, "summary", folder, "--json")


def test_threads_analyse_at_once():
    results = {}

    def work(path):
        results[path] = memscope.open(path).allocations()["size"].sum()

    paths = ["samples/llm_bs16.pickle", "samples/loss_leak.pickle", "samples/many_small.pickle"]
    threads = [threading.Thread(target=work, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in paths:
        assert results[p] == memscope.open(p).allocations()["size"].sum()
