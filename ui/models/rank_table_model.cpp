#include "ui/models/rank_table_model.h"

#include "ui/style/text_format.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>

namespace memscope {

RankTableModel::RankTableModel(QObject* parent) : QAbstractTableModel(parent) { }

void RankTableModel::setRankSet(std::shared_ptr<const RankSet> set)
{
    beginResetModel();
    m_set = std::move(set);
    endResetModel();
}

int RankTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_set ? 0 : static_cast<int>(m_set->size());
}

int RankTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RankTableModel::data(const QModelIndex& index, int role) const
{
    if (!m_set || !index.isValid() || index.row() < 0 || index.row() >= rowCount() || index.column() < 0 ||
        index.column() >= ColumnCount)
        return {};
    const RankEntry& e = m_set->ranks()[static_cast<size_t>(index.row())];
    const RankSummary& s = e.summary;
    if (role == RankIndexRole)
        return index.row();
    const bool ok = e.ok();
    if (role == SortRole) {
        switch (index.column()) {
        case Rank: return s.rank;
        case Device: return ok ? QVariant(s.device) : QVariant(-1);
        case Peak: return QVariant::fromValue<qlonglong>(ok ? s.peakRequested : -1);
        case PeakPhase: return QString::fromStdString(s.peakPhase);
        case PeakTime: return ok ? s.peakSeconds() : -1.0;
        case Reserved: return QVariant::fromValue<qlonglong>(ok ? s.peakReserved : -1);
        case Communication: return QVariant::fromValue<qlonglong>(ok ? s.collectiveAtPeakTotal() : -1);
        case Oom: return s.oom ? 2 : s.oomDump ? 1 : 0;
        case AboveMean: return e.aboveMean;
        case Live: return QString::fromStdString(e.live);
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        if (index.column() == Live)
            return QString::fromStdString(e.live);
        if (!ok)
            return index.column() == Rank   ? QVariant(s.rank)
                   : index.column() == Peak ? QVariant(QString::fromStdString(e.error))
                                            : QVariant();
        switch (index.column()) {
        case Rank: return s.rank;
        case Device: return s.device;
        case Peak: return bytesText(s.peakRequested);
        case PeakPhase: return s.peakPhase.empty() ? QStringLiteral("–") : QString::fromStdString(s.peakPhase);
        case PeakTime: return tr("%1 s").arg(s.peakSeconds(), 0, 'f', 3);
        case Reserved: return bytesText(s.peakReserved);
        case Communication: return bytesText(s.collectiveAtPeakTotal());
        case Oom:
            if (s.oom)
                return s.oomPhase.empty() ? tr("OOM") : tr("OOM in %1").arg(QString::fromStdString(s.oomPhase));
            return s.oomDump ? tr("OOM dump") : QString();
        case AboveMean:
            return QStringLiteral("%1%2 %")
                .arg(e.aboveMean >= 0 ? QStringLiteral("+") : QString())
                .arg(e.aboveMean * 100, 0, 'f', 1);
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        QString tip = QString::fromStdString(e.source.path.empty() ? e.source.summaryPath : e.source.path);
        if (!ok)
            tip += QLatin1Char('\n') + QString::fromStdString(e.error);
        else if (s.oom && !s.oomWhere.empty())
            tip += tr("\nOut of memory asking %1 at %2").arg(bytesText(s.oomAskedBytes), QString::fromStdString(s.oomWhere));
        if (!e.live.empty())
            tip += tr("\nLive: %1; double-click opens its own live window").arg(QString::fromStdString(e.live));
        else if (!e.canLoad())
            tip += tr("\nOnly its summary is here: copy its snapshot next to it to open it in full.");
        return tip;
    }
    if (role == Qt::TextAlignmentRole) {
        const bool number = index.column() != PeakPhase && index.column() != Oom && index.column() != Live;
        return QVariant::fromValue(Qt::Alignment(number ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter));
    }
    if (role == Qt::ForegroundRole && index.column() == Live) {
        if (e.live.rfind("dead", 0) == 0 || e.live.rfind("failed", 0) == 0)
            return QBrush(QColor(0xc6, 0x28, 0x28));
        if (e.live.rfind("lagging", 0) == 0)
            return QBrush(QColor(0xe6, 0x7e, 0x00));
        return {};
    }
    if (role == Qt::ForegroundRole && (!ok || (index.column() == Oom && s.oom)))
        return QBrush(QColor(0xc6, 0x28, 0x28));
    return {};
}

QVariant RankTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Rank: return tr("Rank");
        case Device: return tr("Device");
        case Peak: return tr("Peak");
        case PeakPhase: return tr("Peak phase");
        case PeakTime: return tr("Peak at");
        case Reserved: return tr("Reserved");
        case Communication: return tr("Communication");
        case Oom: return tr("OOM");
        case AboveMean: return tr("vs mean");
        case Live: return tr("State");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Peak: return tr("The rank's highest requested bytes");
        case PeakTime: return tr("Seconds from the rank's first event to its peak");
        case Communication:
            return tr("Collective-communication memory at the peak: DDP buckets, collective buffers, FSDP "
                      "unsharded parameters, frees pending on other streams (docs/RANKS.md)");
        case AboveMean: return tr("How far the rank's peak is above the ranks' mean");
        case Live:
            return tr("A live job's rank: streaming, lagging (quiet while the others stream), dead (its process "
                      "ended without finishing the stream), ended");
        default: return {};
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace memscope
