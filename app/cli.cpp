#include "cli.h"
#include "report_command.h"

#include "diagnose_commands.h"
#include "attribute/attributor.h"
#include "common/load_error.h"
#include "io/allocations_csv.h"
#include "io/summary_writer.h"
#include "replay/replay.h"
#include "snapshot/snapshot_reader.h"
#include "record_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace memscope {

namespace {

struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::optional<int> parseDevice(const std::string& s)
{
    try {
        size_t used = 0;
        int d = std::stoi(s, &used);
        if (used == s.size() && d >= 0)
            return d;
    } catch (...) {
    }
    throw Usage("--device takes a device ordinal (0, 1, …), got '" + s + "'");
}

} // namespace

bool isHeadlessCommand(const std::string& name)
{
    if (name == "report")
        return true;
    if (name == "record")
        return true;
    return name == "summary" || name == "allocations" || name == "diagnose" || name == "estimate";
}

int runSummary(const std::vector<std::string>& args)
{
    std::optional<int> device;
    bool json = false;
    std::string file;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json")
            json = true;
        else if (a == "--device" && i + 1 < args.size())
            device = parseDevice(args[++i]);
        else if (a.rfind("--device=", 0) == 0)
            device = parseDevice(a.substr(9));
        else if (!a.empty() && a[0] == '-')
            throw Usage("unknown option '" + a + "'");
        else if (file.empty())
            file = a;
        else
            throw Usage("summary takes one file, got '" + file + "' and '" + a + "'");
    }
    if (file.empty())
        throw Usage("usage: memscope summary FILE [--device N] [--json]");
    auto replay = replaySnapshot(readSnapshotFile(file));
    if (device && !replay->device(*device))
        throw Usage(file + ": has no device " + std::to_string(*device) + " (it has " +
                    std::to_string(replay->devices.size()) + ")");
    std::cout << (json ? summaryJson(*replay, device) : summaryText(*replay, device));
    return 0;
}

int runAllocations(const std::vector<std::string>& args)
{
    std::optional<int> device;
    std::string file, csv;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--csv" && i + 1 < args.size())
            csv = args[++i];
        else if (a.rfind("--csv=", 0) == 0)
            csv = a.substr(6);
        else if (a == "--device" && i + 1 < args.size())
            device = parseDevice(args[++i]);
        else if (a.rfind("--device=", 0) == 0)
            device = parseDevice(a.substr(9));
        else if (!a.empty() && a[0] == '-' && a != "-")
            throw Usage("unknown option '" + a + "'");
        else if (file.empty())
            file = a;
        else
            throw Usage("allocations takes one file, got '" + file + "' and '" + a + "'");
    }
    if (file.empty() || csv.empty())
        throw Usage("usage: memscope allocations FILE [--device N] --csv OUT (OUT '-' is stdout)");
    auto replay = replaySnapshot(readSnapshotFile(file));
    if (replay->devices.empty())
        throw Usage(file + ": has no device traces");
    size_t index = 0;
    if (device) {
        while (index < replay->devices.size() && replay->devices[index].device != *device)
            ++index;
        if (index == replay->devices.size())
            throw Usage(file + ": has no device " + std::to_string(*device) + " (it has " +
                        std::to_string(replay->devices.size()) + ")");
    }
    auto attribution = attribute(replay);
    if (csv == "-") {
        writeAllocationsCsv(std::cout, *attribution, index);
        std::cout.flush();
        return std::cout ? 0 : 1;
    }
    std::ofstream out(csv, std::ios::binary | std::ios::trunc);
    if (!out)
        throw Usage(csv + ": cannot open for writing");
    writeAllocationsCsv(out, *attribution, index);
    out.close();
    if (!out)
        throw Usage(csv + ": write failed");
    return 0;
}

int runHeadless(const std::string& name, const std::vector<std::string>& args)
{
    try {
        if (name == "record")
            return runRecord(args);
        if (name == "summary")
            return runSummary(args);
        if (name == "report")
            return runReport(args);
        if (name == "allocations")
            return runAllocations(args);
        if (name == "diagnose")
            return runDiagnose(args);
        if (name == "estimate")
            return runEstimate(args);
        std::cerr << "memscope: unknown command '" << name << "'\n";
        return 2;
    } catch (const Usage& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    } catch (const LoadError& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "memscope " << name << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace memscope
