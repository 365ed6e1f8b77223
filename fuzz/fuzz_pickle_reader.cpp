// libFuzzer harness for the pickle virtual machine alone, behind a sink that keeps
// every container (so memo references, appends and SETITEMS land somewhere real)
// but applies no snapshot rules: the VM's own bounds and refusals are what is fuzzed.
#include "common/load_error.h"
#include "pickle/pickle_reader.h"
#include "common/string_pool.h"

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace {

using namespace memscope;

class KeepingSink : public PickleSink {
public:
    PickleValue newContainer(ContainerKind kind, int64_t) override
    {
        m_kinds.push_back(kind);
        m_sizes.push_back(0);
        return PickleValue::fromNode(static_cast<uint32_t>(m_kinds.size() - 1), 7);
    }
    PickleValue newTuple(std::span<const PickleValue> items, int64_t offset) override
    {
        PickleValue v = newContainer(ContainerKind::Tuple, offset);
        for (const PickleValue& item : items)
            touch(item);
        m_sizes.back() += items.size();
        return v;
    }
    void append(PickleValue container, std::span<const PickleValue> items, int64_t offset) override
    {
        checkReference(container, offset);
        for (const PickleValue& item : items)
            touch(item);
        m_sizes[container.node] += items.size();
    }
    void setItems(PickleValue dict, std::span<const PickleValue> keyValues, int64_t offset) override
    {
        checkReference(dict, offset);
        if (keyValues.size() % 2)
            std::abort(); // the VM must hand over whole pairs
        for (const PickleValue& item : keyValues)
            touch(item);
        m_sizes[dict.node] += keyValues.size() / 2;
    }
    void checkReference(PickleValue value, int64_t) override
    {
        if (value.kind != PickleKind::Container || value.node >= m_kinds.size() || value.generation != 7)
            std::abort(); // the VM handed over something that is not one of our handles
    }
    void finish(PickleValue root, int64_t offset) override
    {
        if (root.kind == PickleKind::Container)
            checkReference(root, offset);
    }

    StringPool* strings = nullptr;

private:
    void touch(const PickleValue& v)
    {
        if (v.kind == PickleKind::Container)
            checkReference(v, 0);
        else if ((v.kind == PickleKind::String || v.kind == PickleKind::Bytes) && strings)
            (void)strings->view(StringId{v.str}).size();
    }
    std::vector<ContainerKind> m_kinds;
    std::vector<size_t> m_sizes;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    StringPool strings;
    KeepingSink sink;
    sink.strings = &strings;
    PickleReader reader(std::span<const uint8_t>(data, size), "fuzz", strings, sink);
    try {
        reader.run();
    } catch (const LoadError& e) {
        // Every refusal must be a one-line message that says where.
        const std::string what = e.what();
        if (what.find('\n') != std::string::npos || what.rfind("fuzz: byte ", 0) != 0)
            std::abort();
    }
    return 0;
}
