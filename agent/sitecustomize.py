"""Starts the memscope agent in an unmodified script when MEMSCOPE_AGENT=1.

Under torchrun (MEMSCOPE_AGENT=1 or =ranks) the launcher's own process starts none and
keeps the switch for its workers, each of which starts one for its rank; with
MEMSCOPE_AGENT=ranks only processes with a RANK in their environment start one.

Python imports ``sitecustomize`` from sys.path at start-up; with this directory on
PYTHONPATH that is this file. It then hands over to the sitecustomize that would have
run otherwise (one later on sys.path), so a system's own customisation still runs.
"""

import os
import sys


def _chain():
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_memscope_chained_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                sys.stderr.write("memscope-agent: %s failed: %s\n" % (candidate, e))
            return


def _is_launcher():
    try:
        from memscope_agent.job import is_launcher

        return is_launcher()
    except Exception:
        return False


def _start():
    switch = os.environ.get("MEMSCOPE_AGENT")
    if switch not in ("1", "ranks"):
        return
    if "RANK" not in os.environ and (switch == "ranks" or _is_launcher()):
        return  # torchrun itself (or a process outside the job): its ranks start their own
    # Children of this process (DataLoader workers, subprocesses) start no agent of their own.
    del os.environ["MEMSCOPE_AGENT"]
    try:
        import memscope_agent

        memscope_agent.start()
    except Exception as e:  # never stop the user's program from running
        sys.stderr.write("memscope-agent: not started: %s: %s\n" % (type(e).__name__, e))


_chain()
_start()
