"""Which rank of which distributed job this process is (torchrun, torch.distributed.launch).

torchrun gives every worker RANK, LOCAL_RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID (the
rendezvous id, "none" unless --rdzv-id or --standalone set one) and MASTER_ADDR/MASTER_PORT.
The job id is MEMSCOPE_AGENT_JOB when set (``memscope record --all-ranks`` sets it), else
the run id, else MASTER_ADDR-MASTER_PORT; it is made safe for a file name. Each rank's
socket is then ``job-<id>-rank-<r>.sock`` in the private directory, so a client finds a
job's ranks together by name.
"""

import os
import re
import sys

LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")


def _int(env, name):
    try:
        return int(env[name])
    except (KeyError, ValueError):
        return None


def safe_id(text):
    """A job id usable in a file name: letters, digits, '.', '_' and '-' (64 at most)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.")[:64]


def job_id(env=None):
    env = os.environ if env is None else env
    explicit = env.get("MEMSCOPE_AGENT_JOB")
    if explicit:
        return safe_id(explicit)
    run_id = env.get("TORCHELASTIC_RUN_ID")
    if run_id and run_id.lower() != "none":
        return safe_id(run_id)
    if env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        return safe_id("%s-%s" % (env["MASTER_ADDR"], env["MASTER_PORT"]))
    return None


def rank_info(env=None):
    """{"job", "rank", "world_size", "local_rank"} for a rank of a job, else None (RANK unset,
    or no job id can be had)."""
    env = os.environ if env is None else env
    rank = _int(env, "RANK")
    if rank is None or rank < 0:
        return None
    job = job_id(env)
    if not job:
        return None
    info = {"job": job, "rank": rank}
    world = _int(env, "WORLD_SIZE")
    if world is not None:
        info["world_size"] = world
    local = _int(env, "LOCAL_RANK")
    if local is not None:
        info["local_rank"] = local
    return info


def socket_name(info):
    return "job-%s-rank-%d.sock" % (info["job"], info["rank"])


def is_launcher(argv=None):
    """True in torchrun's own process (the launcher starts the ranks; it has no GPU work)."""
    argv = list(getattr(sys, "orig_argv", None) or sys.argv) if argv is None else list(argv)
    if any(os.path.basename(a) == "torchrun" for a in argv[:2]):  # the script, or python running it
        return True
    return len(argv) > 2 and argv[1] == "-m" and argv[2] in LAUNCHER_MODULES
