"""`memscope mcp` spoken to over stdio as the MCP specification (revision 2025-06-18) says a
client does: JSON-RPC 2.0, one message a line; initialize, notifications/initialized,
tools/list, tools/call of every tool, and requests a server must refuse without dying."""

import json
import queue
import subprocess
import threading

import pytest

from conftest import ROOT

PROTOCOL = "2025-06-18"
TOOLS = {"summary", "explain_peak", "diagnose", "diff", "whatif", "allocations_at", "ranks"}
LLM = "samples/llm_bs16.pickle"


class Server:
    def __init__(self, cli):
        self.p = subprocess.Popen([cli, "mcp"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_line(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def receive(self):
        line = self.lines.get(timeout=120)
        assert line is not None, "the server closed stdout: " + self.p.stderr.read()
        assert line.endswith("\n") and "\n" not in line[:-1]
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_line(json.dumps(message))
        answer = self.receive()
        assert answer["id"] == self.next_id
        return answer

    def call(self, name, **arguments):
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "error" not in answer, answer
        return answer["result"]

    def close(self):
        self.p.stdin.close()
        code = self.p.wait(timeout=60)
        assert self.lines.get(timeout=10) is None
        return code


@pytest.fixture
def server(cli):
    s = Server(cli)
    init = s.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "memscope-test", "version": "1"}})
    result = init["result"]
    assert result["protocolVersion"] == PROTOCOL
    assert "tools" in result["capabilities"]
    assert result["serverInfo"]["name"] == "memscope"
    s.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))  # no answer
    yield s
    if s.p.poll() is None:
        assert s.close() == 0


def cli_json(cli, *args):
    r = subprocess.run([cli, *args], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def raw(j):
    """The answer without what the server adds for a person (*_text) or for brevity (*_total)."""
    if isinstance(j, dict):
        return {k: raw(v) for k, v in j.items() if not k.endswith("_text") and not k.endswith("_total")}
    if isinstance(j, list):
        return [raw(v) for v in j]
    return j


def structured(result):
    assert result["isError"] is False
    assert result["content"][0]["type"] == "text"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]


def test_ping_and_tools_list(server):
    assert server.request("ping")["result"] == {}
    tools = server.request("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    by_name = {t["name"]: t for t in tools}
    for t in tools:
        assert t["description"]
        assert t["inputSchema"]["type"] == "object"
        assert set(t["inputSchema"]["required"]) <= set(t["inputSchema"]["properties"])
    assert by_name["summary"]["inputSchema"]["required"] == ["path"]
    assert by_name["diff"]["inputSchema"]["required"] == ["path_a", "path_b"]
    assert by_name["allocations_at"]["inputSchema"]["required"] == ["path", "time_us"]
    assert by_name["ranks"]["inputSchema"]["required"] == ["folder"]
    assert "device" in by_name["explain_peak"]["inputSchema"]["properties"]
    for option in ["set", "capacity", "recorded_batch", "batch", "max_batch", "checkpoint", "precision", "optimizer",
                   "accumulate", "seq", "recorded_seq", "recorded_precision", "recorded_optimizer", "plan"]:
        assert option in by_name["whatif"]["inputSchema"]["properties"]


def test_summary(server, cli):
    s = structured(server.call("summary", path=LLM))
    assert raw(s) == cli_json(cli, "summary", LLM, "--json")
    d = s["devices"][0]
    assert d["peak_requested_bytes_text"].endswith("iB")


def test_explain_peak(server, cli):
    p = structured(server.call("explain_peak", path=LLM, top=3))
    summary = cli_json(cli, "summary", LLM, "--json")["devices"][0]
    assert p["point"]["bytes"] == summary["peak_requested_bytes"]
    assert p["point"]["bytes_text"]
    assert sum(p["point"]["by_category"].values()) == p["point"]["bytes"]
    assert set(p["point"]["by_category_text"]) == set(p["point"]["by_category"])
    assert 0 < len(p["top_allocations"]) <= 3 and 0 < len(p["top_call_sites"]) <= 3
    assert p["live_allocations"] >= len(p["top_allocations"])


def test_diagnose(server, cli):
    d = structured(server.call("diagnose", path="samples/oom.pickle"))
    expected = cli_json(cli, "diagnose", "samples/oom.pickle", "--json")
    assert [f["kind"] for f in d["findings"]] == [f["kind"] for f in expected]
    assert "out_of_memory" in {f["kind"] for f in d["findings"]} or any("memory" in f["message"] for f in d["findings"])


def test_diff(server, cli):
    b = "tests/data/compare/llm_bs2.pickle"
    d = structured(server.call("diff", path_a=LLM, path_b=b, top=5))
    expected = cli_json(cli, "diff", LLM, b, "--json")
    assert d["delta"]["bytes"] == expected["delta"]["bytes"]
    assert d["a"]["peak"] == raw(d["a"]["peak"]) | {k: v for k, v in d["a"]["peak"].items() if k.endswith("_text")}
    assert raw(d["a"]["peak"]) == expected["a"]["peak"]
    assert len(d["call_sites"]["at_peak"]) <= 5


def test_whatif(server, cli):
    w = structured(server.call("whatif", path=LLM, set=["expandable_segments:True"], capacity="2GiB",
                               recorded_batch=16, max_batch=True))
    expected = cli_json(cli, "whatif", LLM, "--set", "expandable_segments:True", "--capacity", "2GiB",
                        "--recorded-batch", "16", "--max-batch", "--json")
    assert w["reserved_peak_bytes"] == expected["reserved_peak_bytes"]
    assert w["max_batch"] == expected["max_batch"]
    assert w["reserved_peak_bytes_text"]


def test_whatif_model_changes_and_plan(server, cli):
    # an assistant's "will it fit in 4 GiB, and what should I change?"
    w = structured(server.call("whatif", path=LLM, recorded_batch=16, checkpoint="all", precision="bf16",
                               optimizer="sgd-momentum", accumulate=2, capacity="4GiB", plan=True))
    expected = cli_json(cli, "whatif", LLM, "--recorded-batch", "16", "--checkpoint", "all", "--precision", "bf16",
                        "--optimizer", "sgd-momentum", "--accumulate", "2", "--capacity", "4GiB", "--plan", "--json")
    assert raw(w["changes"]) == expected["changes"]
    assert w["changes"]["checkpoint"] == "all" and w["changes"]["precision"] == "bf16"
    assert w["reserved_peak_bytes"] == expected["reserved_peak_bytes"]
    assert w["reserved_peak_bytes"] < expected["recorded"]["reserved_peak_bytes"]
    # the plan's first rows (top, 10 by default: those that fit come first), and how many there are
    assert len(expected["plan"]) > 10
    assert w["plan_total"] == len(expected["plan"])
    assert [raw(r) for r in w["plan"]] == expected["plan"][:10]
    assert all(r["fits"] for r in w["plan"]) and all("tight" in r for r in expected["plan"])
    more = structured(server.call("whatif", path=LLM, recorded_batch=16, capacity="4GiB", plan=True, top=100))
    assert [raw(r) for r in more["plan"]] == cli_json(cli, "whatif", LLM, "--recorded-batch", "16", "--capacity", "4GiB",
                                                      "--plan", "--json")["plan"]


def test_whatif_shard(server, cli):
    # "will it fit on 4 GPUs with FSDP2?": every rank's peaks, as the CLI prints them
    w = structured(server.call("whatif", path=LLM, recorded_batch=16, shard="fsdp2:4"))
    expected = cli_json(cli, "whatif", LLM, "--recorded-batch", "16", "--shard", "fsdp2:4", "--json")
    assert raw(w["changes"])["shard"] == expected["changes"]["shard"] == {"kind": "fsdp2", "ranks": 4}
    assert [raw(r) for r in w["ranks"]] == expected["ranks"]
    assert len(expected["ranks"]) == 4
    assert w["reserved_peak_bytes"] == expected["reserved_peak_bytes"] < expected["recorded"]["reserved_peak_bytes"]


def test_allocations_at(server):
    peak = structured(server.call("explain_peak", path=LLM))
    at = structured(server.call("allocations_at", path=LLM, time_us=peak["point"]["time_us"]))
    assert at["point"]["time_us"] == peak["point"]["time_us"]
    assert at["point"]["bytes"] >= 0


def test_ranks(server, cli):
    r = structured(server.call("ranks", folder="tests/data/ranks"))
    expected = cli_json(cli, "summary", "tests/data/ranks", "--json")
    assert r["ranks_count"] == expected["ranks_count"] == 2
    assert [x["peak_requested_bytes"] for x in r["ranks"]] == [x["peak_requested_bytes"] for x in expected["ranks"]]


@pytest.mark.parametrize("path", ["tests/data/evil_global_os_system.pickle", "tests/data/not_a_snapshot.pickle",
                                  "tests/data/no_such_file.pickle"])
def test_unreadable_file_is_a_tool_error_with_the_cli_message(server, cli, path):
    """Tool execution errors are results with isError (the specification's rule), not JSON-RPC errors."""
    result = server.call("summary", path=path)
    assert result["isError"] is True
    r = subprocess.run([cli, "summary", path], cwd=ROOT, capture_output=True, text=True)
    assert result["content"][0]["text"] == r.stderr.strip()
    if "evil" in path:
        assert "refused pickle opcode" in result["content"][0]["text"]


BAD = [
    ("not json at all", -32700),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700),
    ("[]", -32600),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
    ('"hello"', -32600),
    ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    ('{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "no/such"}', -32601),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": []}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "rm"}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "summary"}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "summary", "arguments": {"path": 3}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "summary", "arguments": []}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "summary", '
     '"arguments": {"path": "samples/oom.pickle", "rm": "-rf"}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "explain_peak", '
     '"arguments": {"path": "samples/oom.pickle", "device": "zero"}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "explain_peak", '
     '"arguments": {"path": "samples/oom.pickle", "device": 9}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "explain_peak", '
     '"arguments": {"path": "samples/oom.pickle", "top": -1}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "allocations_at", '
     '"arguments": {"path": "samples/oom.pickle", "time_us": "soon"}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "allocations_at", '
     '"arguments": {"path": "samples/oom.pickle", "time_us": 1.5}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "allocations_at", '
     '"arguments": {"path": "samples/oom.pickle", "time_us": 1e300}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "allocations_at", '
     '"arguments": {"path": "samples/oom.pickle", "time_us": 18446744073709551615}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "summary", "arguments": {"path": '
     + "[" * 100000 + "]" * 100000 + "}}}", -32600),
    ("[" * 1000000 + "]" * 1000000, -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whatif", '
     '"arguments": {"path": "samples/oom.pickle", "batch": -3}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whatif", '
     '"arguments": {"path": "samples/oom.pickle", "capacity": "lots"}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whatif", '
     '"arguments": {"path": "samples/oom.pickle", "set": ["no_such_setting:1"]}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whatif", '
     '"arguments": {"path": "samples/oom.pickle", "set": "expandable_segments:True"}}}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "diff", '
     '"arguments": {"path_a": "samples/oom.pickle"}}}', -32602),
]


@pytest.mark.parametrize("line,code", BAD, ids=range(len(BAD)))
def test_malformed_requests_get_json_rpc_errors(server, line, code):
    server.send_line(line)
    answer = server.receive()
    assert answer["error"]["code"] == code, answer
    assert answer["error"]["message"]
    # The server lives on: the next request is answered.
    assert server.request("ping")["result"] == {}


def test_notifications_are_not_answered_and_eof_ends_the_server(cli):
    s = Server(cli)
    s.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    s.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}))
    s.send_line("")
    assert s.request("ping")["id"] == 1
    assert s.close() == 0
