// SnapshotBuilder's side of the parallel parse (parallel_parse.h): where the VM stands at
// a MARK that opens a batch of trace entries, the batches the workers decoded from that
// byte on are resolved against the real memo and committed, with the same changes the VM
// and fastDict would have made: the same rows, the same strs, frames and stacks interned
// in the same order, the same memo entries (each entry's dict dead, its strs, its new
// frame list as the Frozen stack token). Resolution comes first, entry by entry; the first
// entry it cannot take the way fastDict would (a reference it does not name as fastDict
// would accept it, a frame not converted yet, a rewritten str) ends what is committed at
// the batch before it, and the VM runs that batch itself. Interning strs and stacks of the
// batch given up is harmless: the VM interns the same ones in the same order.

#include "snapshot/parallel_parse.h"
#include "snapshot/snapshot_builder.h"

#include "pickle/pickle_memo.h"

#include <algorithm>

namespace memscope {

bool SnapshotBuilder::startParallel(std::span<const uint8_t> bytes, size_t offset)
{
    m_parallelTried = true;
    // Worth it only with room to split; the keys must be in the memo (the first entries
    // set them).
    if (m_threads <= 1 || (m_chunkBytes == 0 && bytes.size() - offset < (size_t(1) << 20)))
        return false;
    std::vector<uint8_t> keyFields(m_memo->size(), 0xff);
    for (size_t i = 0; i < keyFields.size(); ++i) {
        PickleValue v;
        if (m_memo->tryGet(i, v) && v.kind == PickleKind::String)
            keyFields[i] = static_cast<uint8_t>(
                static_cast<size_t>(v.str) < m_fieldOf.size() ? m_fieldOf[static_cast<size_t>(v.str)] : Field::None);
    }
    m_parallelRewrites = m_memo->textRewrites();
    m_parallel = std::make_unique<ParallelParse>(bytes, offset, std::move(keyFields), m_threads, m_chunkBytes);
    return true;
}

size_t SnapshotBuilder::fastBatches(std::span<const uint8_t> bytes, size_t offset, PickleValue listValue)
{
    if (!m_fastPath || !m_memo || m_threads <= 1)
        return 0;
    if (!m_parallel) {
        // Start once a list holds entries: their keys are memoized by then.
        if (m_parallelTried || m_tables.empty() || m_tables.front().count() == 0)
            return 0;
        if (!startParallel(bytes, offset))
            return 0;
    }
    size_t first = 0;
    DecodedBatches* d = m_parallel->batchAt(offset, first);
    if (!d)
        return 0;
    if (m_memo->textRewrites() != m_parallelRewrites) { // a key's memo entry may name another str
        m_parallel.reset();
        return 0;
    }
    if (listValue.kind != PickleKind::Container || listValue.node >= m_nodes.size() ||
        m_nodes[listValue.node].generation != listValue.generation || m_nodes[listValue.node].mode != Mode::Generic ||
        m_nodes[listValue.node].kind != ContainerKind::List)
        return 0;

    const DecodedBatches::Batch& b0 = d->batches[first];
    const DecodedBatches::Run& run = d->runs[b0.run];
    const size_t lastBatch = run.firstBatch + run.batchCount; // one past
    const uint64_t memoBase = m_memo->size(); // the memo index of slot b0.firstSlot
    const uint32_t slotBase0 = b0.firstSlot;
    if (m_runStrings.size() < d->strings.size())
        m_runStrings.resize(d->strings.size());
    std::fill(m_runStrings.begin(), m_runStrings.begin() + static_cast<std::ptrdiff_t>(d->strings.size()), -1);
    const size_t lists = d->listStart.size() - 1;
    if (m_runLists.size() < lists)
        m_runLists.resize(lists);
    std::fill(m_runLists.begin(), m_runLists.begin() + static_cast<std::ptrdiff_t>(lists), -2);

    // What the memo reference r of entry e stands for, as fastDict's lookup would see it.
    auto resolve = [&](uint32_t r, uint32_t entrySlot, PickleValue& v) -> bool {
        if (r >= memoBase) {
            const uint64_t j = r - memoBase + slotBase0;
            if (j >= entrySlot)
                return false; // the entry's own dict or a str it makes: the VM's business
            const uint32_t slot = d->slots[j];
            const uint32_t index = slot & ~DecodedBatches::kSlotKind;
            switch (slot & DecodedBatches::kSlotKind) {
            case DecodedBatches::kSlotString:
                v = PickleValue::fromString(StringId{m_runStrings[index]});
                return m_runStrings[index] >= 0;
            case DecodedBatches::kSlotList:
                v = PickleValue::fromFrozen(static_cast<uint32_t>(m_runLists[index] + 1));
                return m_runLists[index] != -2; // -1: an empty list, no stack
            default: return false; // an earlier entry: dead once its batch is committed
            }
        }
        if (!m_memo->tryGet(r, v))
            return false;
        return v.kind != PickleKind::Container ||
               (v.node < m_nodes.size() && m_nodes[v.node].generation == v.generation && m_nodes[v.node].mode != Mode::Consumed);
    };
    auto text = [&](uint32_t code, uint32_t entrySlot, bool action, int32_t& id) -> bool {
        if (code == DecodedBatches::kAbsent) {
            id = StringPool::empty().value;
            return true;
        }
        if (code & DecodedBatches::kNew) {
            id = m_runStrings[code & ~DecodedBatches::kNew];
            return id >= 0;
        }
        PickleValue v;
        if (!resolve(code, entrySlot, v))
            return false;
        if (v.kind == PickleKind::String || (action && v.kind == PickleKind::Bytes)) {
            id = v.str;
            return true;
        }
        if (!action && v.kind == PickleKind::None) {
            id = StringPool::empty().value;
            return true;
        }
        return false;
    };
    std::vector<FrameId>& frames = m_fastFrames;

    // Resolve, entry by entry, into the decoded columns themselves.
    size_t stringCursor = 0;
    {
        const uint32_t e0 = b0.firstEntry;
        while (stringCursor < d->strings.size() && d->strings[stringCursor].entry < e0)
            ++stringCursor;
    }
    size_t okBatches = first;
    for (size_t b = first; b < lastBatch; ++b) {
        const uint32_t e0 = d->batches[b].firstEntry;
        const uint32_t e1 = b + 1 < d->batches.size() ? d->batches[b + 1].firstEntry : static_cast<uint32_t>(d->entries());
        bool ok = true;
        for (uint32_t e = e0; e < e1 && ok; ++e) {
            const uint32_t entrySlot = d->slotBase[e];
            if (d->flags[e] & DecodedBatches::HasNewString) {
                for (; stringCursor < d->strings.size() && d->strings[stringCursor].entry == e; ++stringCursor) {
                    const DecodedBatches::Str& st = d->strings[stringCursor];
                    m_runStrings[stringCursor] =
                        st.same != DecodedBatches::kAbsent && m_runStrings[st.same] >= 0
                            ? m_runStrings[st.same] // the same bytes: interning them again gives this id
                            : internShort(std::string_view(reinterpret_cast<const char*>(bytes.data() + st.offset), st.length))
                                  .value;
                }
            }
            if (d->flags[e] & DecodedBatches::HasOtherRef) {
                auto it = std::lower_bound(d->otherRefs.begin(), d->otherRefs.end(), e,
                                           [](const std::pair<uint32_t, uint32_t>& x, uint32_t k) { return x.first < k; });
                for (; it != d->otherRefs.end() && it->first == e && ok; ++it) {
                    PickleValue v;
                    ok = resolve(it->second, entrySlot, v);
                }
                if (!ok)
                    break;
            }
            int32_t actionId, metadata, context;
            if (!text(d->action[e], entrySlot, true, actionId) || !text(d->metadata[e], entrySlot, false, metadata) ||
                !text(d->context[e], entrySlot, false, context)) {
                ok = false;
                break;
            }
            // The stack.
            const uint32_t f = d->frames[e];
            int32_t stack = -1;
            if (f == DecodedBatches::kAbsent) {
            } else if (f & DecodedBatches::kNew) {
                const uint32_t k = f & ~DecodedBatches::kNew;
                if (m_runLists[k] == -2) {
                    const uint32_t from = d->listStart[k], to = d->listStart[k + 1];
                    if (frames.size() < to - from)
                        frames.resize(to - from);
                    for (uint32_t i = from; i < to && ok; ++i) {
                        PickleValue item;
                        if (d->listRefs[i] >= memoBase || !m_memo->tryGet(d->listRefs[i], item) ||
                            item.kind != PickleKind::Container || item.node >= m_nodes.size()) {
                            ok = false;
                            break;
                        }
                        const Node& fn = m_nodes[item.node];
                        // A frame converted already (the VM converts the first use of each).
                        if (fn.generation != item.generation || fn.mode == Mode::Consumed || fn.cache < 0 ||
                            fn.kind != ContainerKind::Dict) {
                            ok = false;
                            break;
                        }
                        frames[i - from] = FrameId{fn.cache};
                    }
                    if (!ok)
                        break;
                    m_runLists[k] = m_snapshot.stacks.intern(std::span<const FrameId>(frames.data(), to - from)).value;
                }
                stack = m_runLists[k];
            } else {
                PickleValue v;
                if (!resolve(f, entrySlot, v)) {
                    ok = false;
                    break;
                }
                if (v.kind == PickleKind::Frozen && !(v.node & kPoolToken))
                    stack = static_cast<int32_t>(v.node) - 1;
                else if (v.kind != PickleKind::None) {
                    ok = false; // a list node: stackOf's business
                    break;
                }
            }
            d->action[e] = static_cast<uint32_t>(actionOf(StringId{actionId}));
            d->frames[e] = static_cast<uint32_t>(stack);
            d->metadata[e] = static_cast<uint32_t>(metadata);
            d->context[e] = static_cast<uint32_t>(context);
        }
        if (!ok)
            break;
        okBatches = b + 1;
    }
    if (okBatches == first)
        return 0;

    // Commit: the rows, then the memo entries, as the VM would leave them.
    EventTable& table = tableOf(m_nodes[listValue.node]);
    const uint32_t eBegin = b0.firstEntry;
    const uint32_t eEnd = okBatches < d->batches.size() ? d->batches[okBatches].firstEntry : static_cast<uint32_t>(d->entries());
    auto freeIt = std::lower_bound(d->deviceFree.begin(), d->deviceFree.end(), eBegin,
                                   [](const std::pair<uint32_t, uint64_t>& x, uint32_t e) { return x.first < e; });
    for (uint32_t e = eBegin; e < eEnd; ++e) {
        const size_t row = table.count();
        const uint8_t fl = d->flags[e];
        if (fl & DecodedBatches::HasTime)
            table.hasTime = true;
        if (fl & DecodedBatches::HasDeviceFree) {
            table.deviceFree.emplace(static_cast<int64_t>(row), freeIt->second);
            ++freeIt;
        }
        table.push(static_cast<Action>(d->action[e]), d->addr[e], d->size[e], d->stream[e], d->time[e],
                   StackId{static_cast<int32_t>(d->frames[e])}, StringId{static_cast<int32_t>(d->metadata[e])},
                   StringId{static_cast<int32_t>(d->context[e])});
    }
    const uint32_t sEnd = okBatches < d->batches.size() ? d->batches[okBatches].firstSlot
                                                        : static_cast<uint32_t>(d->slots.size());
    for (uint32_t j = slotBase0; j < sEnd; ++j) {
        const uint32_t slot = d->slots[j];
        const uint32_t index = slot & ~DecodedBatches::kSlotKind;
        const uint64_t at = memoBase + (j - slotBase0);
        switch (slot & DecodedBatches::kSlotKind) {
        case DecodedBatches::kSlotString: m_memo->put(at, PickleValue::fromString(StringId{m_runStrings[index]})); break;
        case DecodedBatches::kSlotList:
            m_memo->put(at, PickleValue::fromFrozen(static_cast<uint32_t>(m_runLists[index] + 1)));
            break;
        default: m_memo->putDead(at); break;
        }
    }
    m_parallelBatches += okBatches - first;
    const size_t end = okBatches < lastBatch ? d->batches[okBatches].offset : run.end;
    return end - offset;
}

} // namespace memscope
