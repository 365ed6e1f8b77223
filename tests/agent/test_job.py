"""The agent under torchrun, without torch or a GPU: the rank and job read from the
environment, one socket per rank named by job and rank, torchrun's own process starting
none, and every rank of a job recorded together (agent/tools/record_ranks.py).

    PYTHONPATH=agent python3 -m unittest discover -s tests/agent -v
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AGENT_DIR = os.path.join(ROOT, "agent")
RANKS = os.path.join(ROOT, "tests", "data", "ranks")
sys.path.insert(0, AGENT_DIR)

from memscope_agent import client, job, safe_pickle  # noqa: E402


def env_for(tmp, **extra):
    env = dict(os.environ)
    for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", "MEMSCOPE_AGENT",
              "MEMSCOPE_AGENT_JOB", "MEMSCOPE_AGENT_SOCKET"):
        env.pop(k, None)
    env.update(PYTHONPATH=AGENT_DIR + os.pathsep + env.get("PYTHONPATH", ""), MEMSCOPE_AGENT_QUIET="1", TMPDIR=tmp,
               XDG_RUNTIME_DIR="")
    env.update(extra)
    return env


def event_count(path):
    return sum(len(t) for t in safe_pickle.load_file(path)["device_traces"])


class JobTest(unittest.TestCase):
    def test_rank_and_job_from_the_environment(self):
        base = {"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}
        self.assertEqual(job.rank_info(dict(base, TORCHELASTIC_RUN_ID="abc-123")),
                         {"job": "abc-123", "rank": 3, "world_size": 8, "local_rank": 1})
        # torchrun's default run id is "none": the rendezvous address names the job then.
        self.assertEqual(job.rank_info(dict(base, TORCHELASTIC_RUN_ID="none", MASTER_ADDR="10.0.0.1",
                                            MASTER_PORT="29500"))["job"], "10.0.0.1-29500")
        self.assertEqual(job.rank_info(dict(base, TORCHELASTIC_RUN_ID="x", MEMSCOPE_AGENT_JOB="rec 7/../a"))["job"],
                         "rec-7-..-a")
        self.assertEqual(job.socket_name(job.rank_info(dict(base, MEMSCOPE_AGENT_JOB="j"))), "job-j-rank-3.sock")
        self.assertIsNone(job.rank_info({"TORCHELASTIC_RUN_ID": "abc"}))  # no RANK: not a rank
        self.assertIsNone(job.rank_info({"RANK": "0"}))  # a RANK but no job to name it by
        self.assertIsNone(job.rank_info({"RANK": "x", "MEMSCOPE_AGENT_JOB": "j"}))

    def test_torchrun_launcher_is_recognised(self):
        self.assertTrue(job.is_launcher(["/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc_per_node", "2", "t.py"]))
        self.assertTrue(job.is_launcher(["torchrun", "t.py"]))
        self.assertTrue(job.is_launcher(["python3", "-m", "torch.distributed.run", "t.py"]))
        self.assertTrue(job.is_launcher(["python3", "-m", "torch.distributed.launch", "t.py"]))
        self.assertFalse(job.is_launcher(["python3", "train.py", "torchrun"]))
        self.assertFalse(job.is_launcher(["python3", "-m", "memscope_agent", "t.py"]))

    def test_each_rank_listens_by_job_and_rank_and_says_so(self):
        tmp = tempfile.mkdtemp(prefix="msj-")
        procs = []
        try:
            for r in (0, 1):
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "memscope_agent", "--replay", os.path.join(RANKS, "ddp_rank%d.pickle" % r),
                     "--speed", "0", "--linger", "5"],
                    env=env_for(tmp, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2", TORCHELASTIC_RUN_ID="j1"),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            directory = os.path.join(tmp, "memscope-%d" % os.getuid())
            socks = [os.path.join(directory, "job-j1-rank-%d.sock" % r) for r in (0, 1)]
            deadline = time.monotonic() + 30
            while not all(os.path.exists(s[:-5] + ".json") for s in socks) and time.monotonic() < deadline:
                time.sleep(0.05)
            for r, s in enumerate(socks):
                with open(s[:-5] + ".json") as f:
                    info = json.load(f)
                self.assertEqual((info["job"], info["rank"], info["world_size"], info["local_rank"], info["pid"]),
                                 ("j1", r, 2, r, procs[r].pid))
            listed = subprocess.run([sys.executable, "-m", "memscope_agent", "--list"], env=env_for(tmp),
                                    capture_output=True, text=True, timeout=60).stdout
            self.assertIn("job j1 rank 0/2", listed)
            self.assertIn("job j1 rank 1/2", listed)
            for r, s in enumerate(socks):
                got = client.receive(client.connect(s, timeout=30), timeout=60)
                self.assertEqual((got.hello["job"], got.hello["rank"], got.hello["world_size"]), ("j1", r, 2))
                self.assertEqual(got.hello["protocol"], "1.1")
                self.assertEqual(got.event_count, event_count(os.path.join(RANKS, "ddp_rank%d.pickle" % r)))
        finally:
            for p in procs:
                p.kill()
                p.communicate()
            shutil.rmtree(tmp)

    def test_replay_keeps_each_event_on_its_device(self):
        # Regression: the replay put every event on the last device of device_traces (a
        # generator read its loop variable late); rank 0's file has devices 0 and 1, events on 0.
        tmp = tempfile.mkdtemp(prefix="msj-")
        sock = os.path.join(tmp, "r.sock")
        os.chmod(tmp, 0o700)
        p = subprocess.Popen([sys.executable, "-m", "memscope_agent", "--replay", os.path.join(RANKS, "ddp_rank0.pickle"),
                              "--speed", "0", "--socket", sock, "--linger", "5"], env=env_for(tmp),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            got = client.receive(client.connect(sock, timeout=30), timeout=60)
            traces = safe_pickle.load_file(os.path.join(RANKS, "ddp_rank0.pickle"))["device_traces"]
            self.assertEqual({d: len(t) for d, t in got.devices.items()}, {d: len(t) for d, t in enumerate(traces) if t})
            self.assertEqual(list(got.devices), [0])
        finally:
            p.kill()
            p.communicate()
            shutil.rmtree(tmp)

    def test_launcher_starts_none_its_ranks_do_and_are_recorded_together(self):
        # A stand-in for torchrun: it starts two ranks with torchrun's variables; under
        # MEMSCOPE_AGENT=ranks the launcher (no RANK) starts no agent, each rank starts one.
        tmp = tempfile.mkdtemp(prefix="msj-")
        launcher = os.path.join(tmp, "launcher.py")
        with open(launcher, "w") as f:
            f.write("import os, subprocess, sys\n"
                    "assert os.environ.get('MEMSCOPE_AGENT') == 'ranks'\n"
                    "import memscope_agent; assert memscope_agent.running() is None\n"
                    "ps = [subprocess.Popen([sys.executable, '-c', 'import os, memscope_agent; "
                    "assert \"MEMSCOPE_AGENT\" not in os.environ; memscope_agent.running().source.done.wait(60)'],\n"
                    "      env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE='2', TORCHELASTIC_RUN_ID='none',\n"
                    "               MASTER_ADDR='127.0.0.1', MASTER_PORT='29555',\n"
                    "               MEMSCOPE_AGENT_REPLAY=os.path.join(%r, 'ddp_rank%%d.pickle' %% r))) for r in (0, 1)]\n"
                    "sys.exit(max(p.wait() for p in ps))\n" % RANKS)
        out = os.path.join(tmp, "rec")
        try:
            r = subprocess.run([sys.executable, os.path.join(AGENT_DIR, "tools", "record_ranks.py"), "-o", out, "--",
                                sys.executable, launcher], env=env_for(tmp, MEMSCOPE_AGENT_SPEED="0"),
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "record.json")) as f:
                rec = json.load(f)
            self.assertEqual([x["rank"] for x in rec["ranks"]], [0, 1])
            for x in rec["ranks"]:
                self.assertEqual(x["state"], "ended")
                self.assertEqual(x["world_size"], 2)
                self.assertEqual(x["events_received"], event_count(os.path.join(RANKS, "ddp_rank%d.pickle" % x["rank"])))
                self.assertTrue(os.path.getsize(os.path.join(out, "rank%d.mscp" % x["rank"])) > 0)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
