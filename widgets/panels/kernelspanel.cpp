// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/kernelspanel.h"

#include "common/labels.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

namespace exposure {

void KernelsModel::setRows(
    std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis, std::vector<KernelRow> rows)
{
    beginResetModel();
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_rows = std::move(rows);
    endResetModel();
}

int KernelsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int KernelsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString KernelsModel::nameOf(const KernelRow& r) const
{
    return m_trace ? QString::fromStdString(displayName(*m_trace, m_analysis.get(), r.name)) : QString();
}

QVariant KernelsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= int(m_rows.size()))
        return {};
    const KernelRow& r = m_rows[index.row()];
    if (role == Qt::UserRole + 1)
        return quint32(r.name);
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Count ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role == Qt::ToolTipRole && index.column() == Name)
        return m_trace ? QString::fromStdString(m_trace->name(r.name)) : QString();
    if (role != Qt::DisplayRole && role != Qt::UserRole)
        return {};
    const bool raw = role == Qt::UserRole;
    switch (index.column()) {
    case Name:
        return nameOf(r);
    case Category:
        return categoryLabel(r.category);
    case Subgroup:
        return QString::fromStdString(r.subgroup);
    case Phase:
        return phaseLabel(r.phase);
    case Count:
        return raw ? QVariant(qulonglong(r.count)) : QVariant(groupDigits(r.count));
    case Total:
        return raw ? QVariant(qlonglong(r.totalNs)) : QVariant(durationText(r.totalNs));
    case Mean:
        return raw ? QVariant(r.meanNs) : QVariant(durationText(TimeNs(std::llround(r.meanNs))));
    case Min:
        return raw ? QVariant(qlonglong(r.minNs)) : QVariant(durationText(r.minNs));
    case Max:
        return raw ? QVariant(qlonglong(r.maxNs)) : QVariant(durationText(r.maxNs));
    case Share:
        return raw ? QVariant(r.gpuShare) : QVariant(QString::number(r.gpuShare * 100, 'f', 1) + QStringLiteral(" %"));
    }
    return {};
}

QVariant KernelsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[]
        = { "Kernel", "Category", "Sub-group", "Phase", "Count", "Total", "Mean", "Min", "Max", "GPU share" };
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

KernelsPanel::KernelsPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new KernelsModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_filter(new QLineEdit(this))
    , m_caption(new QLabel(this))
    , m_view(new QTableView(this))
    , m_jobs(new JobSlot(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(Qt::UserRole);
    m_proxy->setFilterKeyColumn(KernelsModel::Name);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter kernels by name…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, &KernelsPanel::setFilterText);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(KernelsModel::Total, Qt::DescendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setSectionResizeMode(KernelsModel::Name, QHeaderView::Stretch);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    connect(
        m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            emit kernelSelected(current.isValid() ? current.data(Qt::UserRole + 1).toUInt() : kInvalidString);
        });
    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_caption);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
}

void KernelsPanel::setFilterText(const QString& text)
{
    if (m_filter->text() != text)
        m_filter->setText(text);
    m_proxy->setFilterFixedString(text);
}

void KernelsPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_jobs->cancel();
    m_model->setRows(m_trace, m_analysis, {});
    if (m_trace)
        m_range = activityRange(*m_trace);
    recompute();
}

void KernelsPanel::setVisibleRange(TimeRange range)
{
    m_range = range;
    recompute();
}

void KernelsPanel::recompute()
{
    if (!m_trace || !m_analysis)
        return;
    auto trace = m_trace;
    auto analysis = m_analysis;
    const TimeRange range = m_range;
    m_caption->setText(tr("visible range: %1").arg(durationText(range.duration())));
    m_jobs->run<std::vector<KernelRow>>([trace, analysis, range] { return kernelTable(*trace, *analysis, range); },
        [this, trace, analysis](const std::vector<KernelRow>& rows) {
            // Keep the selected kernel selected across recomputations.
            const QModelIndex cur = m_view->currentIndex();
            const QVariant sel = cur.isValid() ? cur.data(Qt::UserRole + 1) : QVariant();
            m_model->setRows(trace, analysis, rows);
            if (sel.isValid()) {
                for (int r = 0; r < m_proxy->rowCount(); ++r) {
                    const QModelIndex i = m_proxy->index(r, 0);
                    if (i.data(Qt::UserRole + 1) == sel) {
                        const QSignalBlocker block(m_view->selectionModel());
                        m_view->setCurrentIndex(i);
                        m_view->selectRow(r);
                        break;
                    }
                }
            }
        });
}

} // namespace exposure
