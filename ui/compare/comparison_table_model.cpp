#include "ui/compare/comparison_table_model.h"

#include "common/format_bytes.h"
#include "ui/style/text_format.h"

#include <QBrush>
#include <QColor>

namespace memscope {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString bytes(qint64 b) { return QString::fromStdString(formatBytes(b)); }

QString signedBytes(qint64 b)
{
    if (b == 0)
        return QStringLiteral("0 B");
    return (b > 0 ? QStringLiteral("+") : QStringLiteral("−")) + bytes(b > 0 ? b : -b);
}

} // namespace

ComparisonTableModel::ComparisonTableModel(QObject* parent) : QAbstractTableModel(parent) { }

void ComparisonTableModel::setComparison(std::shared_ptr<const Comparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    m_rows.clear();
    if (const Comparison* c = m_comparison.get()) {
        const ComparedRun& a = c->a();
        const ComparedRun& b = c->b();
        m_rows.push_back({tr("Peak"), a.peak.requested, b.peak.requested,
                          a.peak.phase == b.peak.phase
                              ? text(phaseLabel(a.peak.phase))
                              : tr("%1 → %2").arg(text(phaseLabel(a.peak.phase)), text(phaseLabel(b.peak.phase))),
                          tr("The global requested peak, as report.json gives it")});
        for (Category k : kAllCategories) {
            const size_t i = static_cast<size_t>(k);
            if (a.peak.byCategory[i] == 0 && b.peak.byCategory[i] == 0)
                continue;
            m_rows.push_back({tr("At the peak: %1").arg(text(categoryLabel(k))),
                              a.peak.byCategory[i],
                              b.peak.byCategory[i],
                              {},
                              tr("%1 live at each run's global peak").arg(text(categoryLabel(k)))});
        }
        for (Phase p : kAllPhases) {
            const PhasePeak& pa = a.phases[static_cast<size_t>(p)];
            const PhasePeak& pb = b.phases[static_cast<size_t>(p)];
            if (!pa.present && !pb.present)
                continue;
            Row r{tr("Peak of %1").arg(text(phaseLabel(p))), {}, {}, {}, tr("The highest requested bytes during this phase")};
            if (pa.present)
                r.a = pa.bytes;
            if (pb.present)
                r.b = pb.bytes;
            m_rows.push_back(r);
        }
        size_t sites = 0;
        for (const CallSiteDelta& s : c->sites) {
            if (sites == kCallSiteRows || s.delta() == 0)
                break;
            ++sites;
            m_rows.push_back({tr("Call site: %1").arg(QString::fromStdString(s.topFrame)), s.bytesA, s.bytesB,
                              QString::fromLatin1(siteChangeName(s.change)),
                              tr("%1\n%2 at the peak; %3 → %4 allocations, %5 of the same size in both")
                                  .arg(QString::fromStdString(s.summary), text(categoryName(s.category)))
                                  .arg(s.countA)
                                  .arg(s.countB)
                                  .arg(s.matched),
                              QString::fromStdString(s.op), moduleCellText(s.module), moduleToolTip(s.module)});
        }
    }
    endResetModel();
}

int ComparisonTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ComparisonTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ComparisonTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = m_rows[static_cast<size_t>(index.row())];
    std::optional<qint64> value;
    switch (index.column()) {
    case A: value = r.a; break;
    case B: value = r.b; break;
    case Delta:
        if (r.a && r.b)
            value = *r.b - *r.a;
        break;
    default: break;
    }
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == What)
            return r.what;
        if (index.column() == Op)
            return r.op;
        if (index.column() == Module)
            return r.module;
        if (index.column() == Change)
            return r.change;
        if (!value)
            return QStringLiteral("—");
        return index.column() == Delta ? signedBytes(*value) : bytes(*value);
    case BytesRole: return value ? QVariant::fromValue(*value) : QVariant();
    case Qt::ToolTipRole:
        if (index.column() == Op && !r.op.isEmpty())
            return r.op;
        if (index.column() == Module && !r.moduleTip.isEmpty())
            return r.moduleTip;
        return r.tooltip;
    case Qt::TextAlignmentRole:
        return index.column() == What || index.column() == Change || index.column() == Op || index.column() == Module
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (index.column() == Delta && value && *value != 0)
            return QBrush(*value > 0 ? QColor(0xb0, 0x20, 0x20) : QColor(0x20, 0x80, 0x30));
        return {};
    default: return {};
    }
}

QVariant ComparisonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && (section == Op || section == Module))
        return section == Op ? tr("A call site's operation: the innermost library frame below your code, else the "
                                  "autograd node and ATen operator")
                             : tr("A call site's nn.Module path, outside in (each level: a module's forward at the line "
                                  "where it called the next); backward allocations with native stacks show their "
                                  "autograd node");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case What: return tr("Figure");
    case Op: return tr("Op");
    case Module: return tr("Module");
    case A: return tr("A");
    case B: return tr("B");
    case Delta: return tr("B − A");
    case Change: return tr("Change");
    default: return {};
    }
}

} // namespace memscope
