#include "mcp_command.h"

#include "command_line.h"
#include "whatif_command.h"

#include "analysis/analysis.h"
#include "common/format_bytes.h"
#include "common/load_error.h"
#include "compare/comparison.h"
#include "compare/comparison_writer.h"
#include "io/diagnostics_json.h"
#include "io/point_json.h"
#include "io/summary_writer.h"
#include "job/job_summary_writer.h"
#include "job/rank_set.h"
#include "query/point_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <iostream>
#include <list>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace memscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kProtocolVersion[] = "2025-06-18";
constexpr size_t kDefaultTop = 10;

// A JSON-RPC error answered to the request that caused it.
struct RpcError : std::runtime_error {
    int code;
    RpcError(int c, const std::string& message) : std::runtime_error(message), code(c) { }
};

enum class ArgType { String, Integer, Number, Boolean, Strings };

struct ToolArg {
    const char* name;
    ArgType type;
    bool required;
    const char* description;
};

struct Tool {
    const char* name;
    const char* title;
    const char* description;
    std::vector<ToolArg> args;
};

const ToolArg kDevice{"device", ArgType::Integer, false,
                      "CUDA device ordinal; default: the device that ran out of memory, else the highest peak"};
const ToolArg kTop{"top", ArgType::Integer, false, "how many items each list keeps (default 10)"};

const std::vector<Tool>& tools()
{
    static const std::vector<Tool> list = {
        {"summary",
         "Snapshot summary",
         "Headline numbers of a PyTorch CUDA memory snapshot (.pickle, .pickle.gz, .json): per device the events, requested "
         "and reserved peaks, allocations, out-of-memory events and truncation. Start here.",
         {{"path", ArgType::String, true, "the snapshot file"}}},
        {"explain_peak",
         "Explain the peak",
         "What is live at a device's requested-memory peak: its phase and iteration, bytes by category (parameters, "
         "optimizer state, gradients, activations, ...), the largest live allocations and the call sites holding the most.",
         {{"path", ArgType::String, true, "the snapshot file"}, kDevice, kTop}},
        {"diagnose",
         "Diagnose",
         "The findings of memscope's detectors (out of memory and its cause, memory growth across iterations, forward passes "
         "under no backward that keep their graph, unused cache, the peak), each with a fix; the device that went wrong first.",
         {{"path", ArgType::String, true, "the snapshot file"}, kDevice, kTop}},
        {"diff",
         "Compare two runs",
         "Two runs compared by iteration and phase: each peak, the change by category and phase, the call sites that grew.",
         {{"path_a", ArgType::String, true, "the first (baseline) snapshot"},
          {"path_b", ArgType::String, true, "the second snapshot"},
          kDevice,
          kTop}},
        {"whatif",
         "What if",
         "The recorded allocations replayed through a model of PyTorch's caching allocator under other settings "
         "(PYTORCH_CUDA_ALLOC_CONF), a GPU capacity, another batch size and the changes people make to fit: activation "
         "checkpointing, precision, optimizer, gradient accumulation, sequence length. Reserved peak, fragmentation, "
         "whether it runs out of memory, the largest batch that fits, the recorded run's own setup, and with plan the "
         "changes that fit under capacity, cheapest first (tight: within 8% of it, where the real run may not fit).",
         {{"path", ArgType::String, true, "the snapshot file"},
          kDevice,
          {"set", ArgType::Strings, false, "allocator settings, each KEY:VALUE, e.g. [\"expandable_segments:True\"]"},
          {"capacity", ArgType::String, false, "GPU memory to fit in, e.g. \"80GiB\", \"24GB\" or bytes"},
          {"recorded_batch", ArgType::Number, false, "the batch size the snapshot was recorded with (default 1)"},
          {"batch", ArgType::Number, false, "the batch size to simulate"},
          {"max_batch", ArgType::Boolean, false, "search the largest batch that fits in capacity"},
          {"checkpoint", ArgType::String, false, "activation checkpointing of every repeated block (\"all\") or of N"},
          {"precision", ArgType::String, false, "fp32, bf16, fp16, amp-bf16 or amp-fp16"},
          {"optimizer", ArgType::String, false, "adamw, adam, sgd, sgd-momentum, adafactor, adamw-8bit or adamw-fused"},
          {"accumulate", ArgType::Integer, false, "gradient accumulation: K micro-batches of batch / K a step"},
          {"seq", ArgType::Number, false, "the sequence length to simulate (needs recorded_seq)"},
          {"recorded_seq", ArgType::Number, false, "the sequence length the snapshot was recorded with"},
          {"shard", ArgType::String, false,
           "data-parallel sharding over N GPUs, each rank training the recorded batch: \"ddp:N\", \"zero1:N\" or "
           "\"fsdp2:N\" (the result gains each rank's peaks under \"ranks\")"},
          {"recorded_precision", ArgType::String, false, "override the precision read off the recording"},
          {"recorded_optimizer", ArgType::String, false, "override the optimizer read off the recording"},
          {"plan", ArgType::Boolean, false, "list the changes, alone and combined, that fit under capacity"},
          kTop}},
        {"allocations_at",
         "Allocations at a time",
         "What is live on a device at a moment of the trace (the last event at or before time_us, the trace's own "
         "microsecond clock as summary and explain_peak report it): bytes by category, largest allocations, call sites.",
         {{"path", ArgType::String, true, "the snapshot file"},
          {"time_us", ArgType::Integer, true, "a time_us of the trace"},
          kDevice,
          kTop}},
        {"ranks",
         "Ranks of a distributed job",
         "A distributed job's ranks found in a folder (one snapshot or *.summary.json per rank): each rank's peak, its phase, "
         "out-of-memory and where, how far above the mean, and the rank to open first.",
         {{"folder", ArgType::String, true, "the job's folder"}}},
    };
    return list;
}

const char* typeName(ArgType t)
{
    switch (t) {
    case ArgType::String: return "string";
    case ArgType::Integer: return "integer";
    case ArgType::Number: return "number";
    case ArgType::Boolean: return "boolean";
    case ArgType::Strings: return "array";
    }
    return "string";
}

Json toolJson(const Tool& tool)
{
    Json properties = Json::object();
    Json required = Json::array();
    for (const ToolArg& a : tool.args) {
        Json p;
        p["type"] = typeName(a.type);
        if (a.type == ArgType::Strings)
            p["items"] = {{"type", "string"}};
        p["description"] = a.description;
        properties[a.name] = std::move(p);
        if (a.required)
            required.push_back(a.name);
    }
    Json schema;
    schema["type"] = "object";
    schema["properties"] = std::move(properties);
    schema["required"] = std::move(required);
    schema["additionalProperties"] = false;
    Json j;
    j["name"] = tool.name;
    j["title"] = tool.title;
    j["description"] = tool.description;
    j["inputSchema"] = std::move(schema);
    return j;
}

bool hasType(const Json& v, ArgType t)
{
    switch (t) {
    case ArgType::String: return v.is_string();
    case ArgType::Integer:
        // 3 and 3.0 are integers; 2^63 and past, 1.5 and 1e300 are not.
        if (v.is_number_unsigned())
            return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        if (v.is_number_float()) {
            const double x = v.get<double>();
            return std::isfinite(x) && std::trunc(x) == x && std::fabs(x) < 9.2e18;
        }
        return v.is_number_integer();
    case ArgType::Number: return v.is_number();
    case ArgType::Boolean: return v.is_boolean();
    case ArgType::Strings:
        if (!v.is_array())
            return false;
        for (const Json& s : v)
            if (!s.is_string())
                return false;
        return true;
    }
    return false;
}

// The arguments checked against the tool's schema: every required one present, none unknown,
// each of its type. Anything else is -32602 naming the argument.
void checkArguments(const Tool& tool, const Json& args)
{
    if (!args.is_object())
        throw RpcError(-32602, std::string(tool.name) + ": arguments must be an object");
    for (const ToolArg& a : tool.args) {
        const auto it = args.find(a.name);
        if (it == args.end() || it->is_null()) {
            if (a.required)
                throw RpcError(-32602, std::string(tool.name) + ": missing argument '" + a.name + "' (" + typeName(a.type) + ")");
            continue;
        }
        if (!hasType(*it, a.type))
            throw RpcError(-32602, std::string(tool.name) + ": argument '" + a.name + "' must be " +
                                       (a.type == ArgType::Strings   ? std::string("an array of strings")
                                        : a.type == ArgType::Integer ? std::string("an integer")
                                                                     : std::string("a ") + typeName(a.type)) +
                                       ", got " +
                                       (it->is_string() ? std::string("a string") : std::string("a JSON ") + it->type_name()));
    }
    for (auto it = args.begin(); it != args.end(); ++it) {
        bool known = false;
        for (const ToolArg& a : tool.args)
            known = known || it.key() == a.name;
        if (!known)
            throw RpcError(-32602, std::string(tool.name) + ": unknown argument '" + it.key() + "'");
    }
}

std::optional<int> deviceArg(const Json& args)
{
    const auto it = args.find("device");
    if (it == args.end() || it->is_null())
        return std::nullopt;
    const int64_t d = it->get<int64_t>();
    if (d < 0 || d > 1 << 20)
        throw RpcError(-32602, "argument 'device' must be a CUDA device ordinal (0, 1, …), got " + std::to_string(d));
    return static_cast<int>(d);
}

size_t topArg(const Json& args)
{
    const auto it = args.find("top");
    if (it == args.end() || it->is_null())
        return kDefaultTop;
    const int64_t n = it->get<int64_t>();
    if (n < 1 || n > 1000)
        throw RpcError(-32602, "argument 'top' must be between 1 and 1000, got " + std::to_string(n));
    return static_cast<size_t>(n);
}

// Each byte count also for a person: "bytes": 1610612736 gains "bytes_text": "1.50 GiB", and a
// by_category object of bytes gains by_category_text. Lists longer than `top` keep their first
// `top` items (each writer orders them most important first) and say how many there were.
void compact(Json& j, size_t top)
{
    if (j.is_array()) {
        for (Json& v : j)
            compact(v, top);
        return;
    }
    if (!j.is_object())
        return;
    Json extra = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        Json& v = it.value();
        const bool bytesKey = key == "bytes" || key.ends_with("_bytes") || key == "delta";
        if (bytesKey && v.is_number_integer()) {
            extra[key + "_text"] = formatBytes(v.get<int64_t>());
        } else if (key.ends_with("by_category") && v.is_object()) {
            Json text = Json::object();
            bool all = true;
            for (auto c = v.begin(); c != v.end(); ++c) {
                all = all && c.value().is_number_integer();
                if (c.value().is_number_integer())
                    text[c.key()] = formatBytes(c.value().get<int64_t>());
            }
            if (all && !v.empty())
                extra[key + "_text"] = std::move(text);
        } else if (v.is_array() && v.size() > top && key != "warnings") {
            extra[key + "_total"] = v.size();
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(top), v.end());
        }
        compact(v, top);
    }
    for (auto it = extra.begin(); it != extra.end(); ++it)
        if (!j.contains(it.key()))
            j[it.key()] = it.value();
}

Json parseWriter(const std::string& text) { return Json::parse(text); }

// How deeply a line's arrays and objects nest, strings skipped. Copying, printing and
// comparing a parsed value recurse once a level, so a message nested deeper than any request
// needs is refused before it is parsed.
constexpr size_t kMaxNesting = 64;

size_t nesting(const std::string& line)
{
    size_t depth = 0, deepest = 0;
    bool inString = false, escaped = false;
    for (char c : line) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// The analyses of the last few files, so that several questions about one file read it once;
// a file changed on disk (size or time) is read again.
class AnalysisCache {
public:
    std::shared_ptr<const Analysis> get(const std::string& path)
    {
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        const auto time = std::filesystem::last_write_time(path, ec);
        const std::string key = path + "\n" + std::to_string(ec ? 0 : size) + "\n" +
                                std::to_string(ec ? 0 : time.time_since_epoch().count());
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
            if (it->first == key) {
                m_entries.splice(m_entries.begin(), m_entries, it);
                return it->second;
            }
        auto analysis = analyze(AnalysisSource::file(path));
        m_entries.emplace_front(key, analysis);
        if (m_entries.size() > kKept)
            m_entries.pop_back();
        return analysis;
    }

private:
    static constexpr size_t kKept = 4;
    std::list<std::pair<std::string, std::shared_ptr<const Analysis>>> m_entries;
};

Json callTool(const Tool& tool, const Json& args, AnalysisCache& cache)
{
    const std::string name = tool.name;
    if (name == "summary") {
        const auto a = cache.get(args["path"].get<std::string>());
        std::optional<int> focus;
        if (a->deviceCount() > 0)
            focus = a->replay->devices[a->focusDevice()].device;
        return parseWriter(summaryJson(*a->replay, std::nullopt, focus));
    }
    if (name == "explain_peak" || name == "allocations_at") {
        const size_t top = topArg(args);
        const auto a = cache.get(args["path"].get<std::string>());
        const size_t index = a->deviceIndex(deviceArg(args));
        const DeviceReplay& d = a->replay->devices.at(index);
        int64_t event = peakEvent(d);
        if (name == "allocations_at")
            event = eventAtTime(a->snapshot->devices.at(index).events, args["time_us"].get<int64_t>());
        Json j = parseWriter(pointJson(*a->attribution, buildPointReport(*a->attribution, index, event), *a->frames, top));
        if (name == "explain_peak") {
            j["peak_reserved_bytes"] = d.peakReserved.bytes;
            j["oom_events"] = d.oomEvents.size();
            // The detectors' reading of this device (the peak's cause, an OOM's), most severe first.
            j["findings"] = parseWriter(diagnosticsToJson(a->findingsFocusFirst(), *a->replay, *a->frames, index, -1, top));
        }
        return j;
    }
    if (name == "diagnose") {
        const size_t top = topArg(args);
        const auto a = cache.get(args["path"].get<std::string>());
        std::optional<size_t> index;
        if (const auto device = deviceArg(args))
            index = a->deviceIndex(device);
        Json j;
        j["file"] = a->name;
        if (a->deviceCount() > 0) {
            j["focus_device"] = a->replay->devices[a->focusDevice()].device;
            j["focus_reason"] = a->focusReason();
        }
        j["findings"] = parseWriter(diagnosticsToJson(a->findingsFocusFirst(), *a->replay, *a->frames, index, -1, top));
        return j;
    }
    if (name == "diff") {
        const size_t top = topArg(args);
        const auto a = cache.get(args["path_a"].get<std::string>());
        const auto b = cache.get(args["path_b"].get<std::string>());
        ComparisonWriteOptions options;
        options.callSites = top;
        return parseWriter(comparisonJson(*compareRuns(a, b, {.device = deviceArg(args)}), options));
    }
    if (name == "whatif") {
        std::vector<std::string> cl = {args["path"].get<std::string>(), "--json"};
        if (const auto device = deviceArg(args))
            cl.insert(cl.end(), {"--device", std::to_string(*device)});
        if (args.contains("set") && !args["set"].is_null())
            for (const Json& s : args["set"])
                cl.insert(cl.end(), {"--set", s.get<std::string>()});
        if (args.contains("capacity") && !args["capacity"].is_null())
            cl.insert(cl.end(), {"--capacity", args["capacity"].get<std::string>()});
        for (const auto& [key, option] : {std::pair{"recorded_batch", "--recorded-batch"}, std::pair{"batch", "--batch"}})
            if (args.contains(key) && !args[key].is_null())
                cl.insert(cl.end(), {option, args[key].dump()});
        for (const auto& [key, option] :
             {std::pair{"checkpoint", "--checkpoint"}, std::pair{"precision", "--precision"},
              std::pair{"optimizer", "--optimizer"}, std::pair{"shard", "--shard"},
              std::pair{"recorded_precision", "--recorded-precision"}, std::pair{"recorded_optimizer", "--recorded-optimizer"}})
            if (args.contains(key) && !args[key].is_null())
                cl.insert(cl.end(), {option, args[key].is_string() ? args[key].get<std::string>() : args[key].dump()});
        for (const auto& [key, option] :
             {std::pair{"accumulate", "--accumulate"}, std::pair{"seq", "--seq"}, std::pair{"recorded_seq", "--recorded-seq"}})
            if (args.contains(key) && !args[key].is_null())
                cl.insert(cl.end(), {option, args[key].dump()});
        if (args.contains("max_batch") && args["max_batch"].is_boolean() && args["max_batch"].get<bool>())
            cl.push_back("--max-batch");
        if (args.contains("plan") && args["plan"].is_boolean() && args["plan"].get<bool>())
            cl.push_back("--plan");
        return Json::parse(runCapturingStdout(runWhatIf, cl));
    }
    if (name == "ranks") {
        const auto set = RankSet::open({args["folder"].get<std::string>()});
        return parseWriter(jobSummaryJson(*set));
    }
    throw RpcError(-32602, "unknown tool '" + name + "'");
}

Json response(const Json& id, Json result)
{
    Json j;
    j["jsonrpc"] = "2.0";
    j["id"] = id;
    j["result"] = std::move(result);
    return j;
}

Json errorResponse(const Json& id, int code, const std::string& message)
{
    Json j;
    j["jsonrpc"] = "2.0";
    j["id"] = id;
    j["error"] = {{"code", code}, {"message", message}};
    return j;
}

Json toolResult(Json structured, bool isError)
{
    Json result;
    Json text;
    text["type"] = "text";
    text["text"] = isError ? structured.get<std::string>() : structured.dump(-1, ' ', false, Json::error_handler_t::replace);
    result["content"] = Json::array({std::move(text)});
    if (!isError)
        result["structuredContent"] = std::move(structured);
    result["isError"] = isError;
    return result;
}

// One request's answer (null for a notification).
Json handle(const Json& message, AnalysisCache& cache)
{
    if (!message.is_object())
        return errorResponse(nullptr, -32600,
                             message.is_array() ? "batches are not part of MCP 2025-06-18: send one message a line"
                                                : "a JSON-RPC message is an object");
    const auto idIt = message.find("id");
    const bool notification = idIt == message.end();
    Json id = notification ? Json(nullptr) : *idIt;
    if (!notification && !id.is_string() && !id.is_number_integer())
        return errorResponse(nullptr, -32600, "id must be a string or an integer");
    const auto version = message.find("jsonrpc");
    if (version == message.end() || *version != "2.0")
        return errorResponse(id, -32600, "jsonrpc must be \"2.0\"");
    const auto methodIt = message.find("method");
    if (methodIt == message.end() || !methodIt->is_string())
        return notification ? Json() : errorResponse(id, -32600, "method must be a string");
    const std::string method = methodIt->get<std::string>();
    if (notification)
        return Json(); // notifications/initialized, notifications/cancelled, …: nothing to answer
    const auto paramsIt = message.find("params");
    const Json params = paramsIt == message.end() ? Json::object() : *paramsIt;
    if (!params.is_object())
        return errorResponse(id, -32602, "params must be an object");
    try {
        if (method == "initialize") {
            Json result;
            // We speak one revision; a client asking for another decides whether to go on.
            result["protocolVersion"] = kProtocolVersion;
            result["capabilities"] = {{"tools", {{"listChanged", false}}}};
            result["serverInfo"] = {{"name", "memscope"}, {"title", "memscope"}, {"version", versionText().substr(9)}};
            result["instructions"] = "Tools read PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot). Start with "
                                     "summary, then explain_peak or diagnose; bytes come raw and as *_text.";
            return response(id, std::move(result));
        }
        if (method == "ping")
            return response(id, Json::object());
        if (method == "tools/list") {
            Json list = Json::array();
            for (const Tool& t : tools())
                list.push_back(toolJson(t));
            return response(id, {{"tools", std::move(list)}});
        }
        if (method == "tools/call") {
            const auto nameIt = params.find("name");
            if (nameIt == params.end() || !nameIt->is_string())
                throw RpcError(-32602, "tools/call needs params.name, a tool's name (tools/list)");
            const Tool* tool = nullptr;
            for (const Tool& t : tools())
                if (*nameIt == t.name)
                    tool = &t;
            if (!tool)
                throw RpcError(-32602, "unknown tool '" + nameIt->get<std::string>() + "' (tools/list names them)");
            const auto argsIt = params.find("arguments");
            const Json args = argsIt == params.end() || argsIt->is_null() ? Json::object() : *argsIt;
            checkArguments(*tool, args);
            const size_t top = args.contains("top") ? topArg(args) : kDefaultTop;
            try {
                Json structured = callTool(*tool, args, cache);
                compact(structured, top);
                return response(id, toolResult(std::move(structured), false));
            } catch (const RpcError&) {
                throw;
            } catch (const std::invalid_argument& e) {
                // No such device, a --set the allocator does not know, …: the command line's message.
                throw RpcError(-32602, std::string("memscope ") + tool->name + ": " + e.what());
            } catch (const std::exception& e) {
                // The file could not be read, has no such device, …: the command line's message.
                return response(id, toolResult(std::string("memscope ") + tool->name + ": " + e.what(), true));
            }
        }
        return errorResponse(id, -32601, "method not found: " + method);
    } catch (const RpcError& e) {
        return errorResponse(id, e.code, e.what());
    } catch (const std::exception& e) {
        return errorResponse(id, -32603, e.what());
    }
}

} // namespace

std::string runCapturingStdout(HeadlessRun run, const std::vector<std::string>& args)
{
    // std::cout is one stream: one capture at a time.
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    std::ostringstream captured;
    struct Restore {
        std::streambuf* old;
        ~Restore() { std::cout.rdbuf(old); }
    } restore{std::cout.rdbuf(captured.rdbuf())};
    const int status = run(args);
    if (status != 0)
        throw std::runtime_error("exited with status " + std::to_string(status));
    return captured.str();
}

void serveMcp(std::istream& in, std::ostream& out)
{
    AnalysisCache cache;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos)
            continue;
        Json answer;
        try {
            if (nesting(line) > kMaxNesting)
                answer = errorResponse(nullptr, -32600,
                                       "a message nested deeper than " + std::to_string(kMaxNesting) + " levels is refused");
            else
                answer = handle(Json::parse(line), cache);
        } catch (const Json::parse_error& e) {
            answer = errorResponse(nullptr, -32700, std::string("parse error: ") + e.what());
        } catch (const std::exception& e) {
            answer = errorResponse(nullptr, -32603, e.what());
        }
        if (answer.is_null())
            continue;
        out << answer.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
        out.flush();
    }
}

int runMcp(const std::vector<std::string>& args)
{
    const CommandLine cl(args, {.command = "mcp", .flags = {}, .options = {}, .maxOperands = 0});
    // The messages go through their own stream on stdout's buffer (made after sync_with_stdio,
    // which replaces that buffer), so what a tool prints to std::cout is captured, never sent.
    std::ios::sync_with_stdio(false);
    std::ostream out(std::cout.rdbuf());
    serveMcp(std::cin, out);
    return 0;
}

} // namespace memscope
