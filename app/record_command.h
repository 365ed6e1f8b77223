#pragma once

#include <string>
#include <vector>

namespace memscope {

/*
 * memscope record -o OUT.pickle [--duration S] -- COMMAND ARGS...
 * memscope record --attach PID|SOCKET|HOST:PORT [--token T] -o OUT.pickle [--duration S]
 * memscope record --recover STREAM.mscp -o OUT.pickle
 *
 * Launch: COMMAND runs with MEMSCOPE_AGENT=1, the agent package on PYTHONPATH and a
 * socket chosen here, so an unmodified `python train.py` streams to us. Attach: an
 * agent already running; HOST:PORT is its TCP listener (on a GPU server, forwarded here
 * with `ssh -L`), --token the token it printed. --light (stacks on allocations only) and
 * --markers (no stacks, phase markers: the cheapest) reach the launched agent as
 * MEMSCOPE_AGENT_LIGHT=1 / MEMSCOPE_AGENT_MARKERS=1. An agent that refuses us (a wrong token)
 * writes no OUT and exits 1. The recording ends when the process exits, after --duration,
 * or on Ctrl-C, and OUT is written in every case (a protocol-4 pickle, as PyTorch's
 * own _dump_snapshot writes). While recording, the raw stream goes to OUT.mscp
 * (flushed at least every second), removed once OUT is written; --recover turns such
 * a file into a snapshot after a crash.
 *
 * All ranks of a torchrun job (docs/LIVE.md, "torchrun"): with --all-ranks, COMMAND (a
 * torchrun line) runs with MEMSCOPE_AGENT=ranks and MEMSCOPE_AGENT_JOB=record-PID, each
 * rank's agent listens on job-record-PID-rank-R.sock, and every rank is recorded as its
 * socket appears; --attach-job JOB attaches to the ranks of a running job. OUT is then a
 * folder: OUT/rank<R>.pickle per rank (torch has no name of its own for per-rank dumps;
 * memscope's rank discovery reads rank<R>.pickle), a dead rank's partial recording too.
 */
inline constexpr char kRecordUsage[] =
    "usage: memscope record -o OUT.pickle [--duration S] [--light | --markers] -- COMMAND ARGS...\n"
    "       memscope record --attach PID|SOCKET|HOST:PORT [--token T] -o OUT.pickle [--duration S]\n"
    "       memscope record --recover STREAM.mscp -o OUT.pickle\n"
    "       memscope record --all-ranks -o DIR [--duration S] [--lag S] -- torchrun ARGS...\n"
    "       memscope record --attach-job JOB -o DIR [--duration S] [--lag S]";

int runRecord(const std::vector<std::string>& args);

} // namespace memscope
