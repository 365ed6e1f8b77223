#pragma once

#include "cli.h"

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace memscope {

/*
 * `memscope mcp`: a Model Context Protocol server (revision 2025-06-18) over stdio, so an
 * assistant can answer "why did this run out of memory" from a snapshot. One JSON-RPC 2.0
 * message a line in, one a line out; stdout carries nothing else (the tools' own output is
 * captured). Methods: initialize, ping, tools/list, tools/call; notifications are read and
 * not answered. Malformed input gets the JSON-RPC errors (-32700 parse error, -32600 invalid
 * request, batches included, -32601 unknown method, -32602 unknown tool or bad arguments);
 * a file that cannot be read is a tool result with isError and the command line's one-line
 * message. Nothing is ever a crash, and a pickle is read by the core's reader, never run.
 *
 * Tools (docs/PYTHON.md has their answers): summary(path), explain_peak(path, device?, top?),
 * diagnose(path, device?, top?), diff(path_a, path_b, device?, top?), whatif(path, device?,
 * set?, capacity?, recorded_batch?, batch?, max_batch?, checkpoint?, precision?, optimizer?,
 * accumulate?, seq?, recorded_seq?, recorded_precision?, recorded_optimizer?, plan?, top?),
 * allocations_at(path, time_us, device?, top?), ranks(folder). Each answer is the headless command's JSON (the same core/io
 * writers), with lists cut to the top N (10 unless `top` says) and each byte count also
 * written for a person ("…_text": "1.50 GiB"). The analyses of the last few files are kept,
 * so several questions about one file read it once.
 */
inline constexpr char kMcpUsage[] = "usage: memscope mcp  (an MCP server on stdin/stdout; see README: Assistants)";

int runMcp(const std::vector<std::string>& args);
// The server loop on any pair of streams (tests); returns when `in` ends.
void serveMcp(std::istream& in, std::ostream& out);

// Runs a headless command with std::cout captured and returns what it printed; its
// exceptions (UsageError, LoadError, …) pass through, and a non-zero status throws
// std::runtime_error. The Python module's whatif() and the mcp whatif tool call `whatif`
// through this, so they answer exactly what `memscope whatif --json` prints.
std::string runCapturingStdout(HeadlessRun run, const std::vector<std::string>& args);

} // namespace memscope
