// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/exposedpanel.h"

#include "analysis/grouplayout.h"
#include "common/elidedlabel.h"
#include "common/labels.h"
#include "common/theme.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

namespace exposure {

namespace {

enum Column {
    ColSpan,
    ColCompute,
    ColCommBusy,
    ColCommSum,
    ColHidden,
    ColExposed,
    ColWaiting,
    ColExposedWaiting,
    ColRatio,
    ColBackward,
    ColIdle,
    ColUnclassified,
    ColCount
};

struct ScopeResult
{
    TimeRange window;
    std::vector<WindowStats> stats;
    std::vector<CollectiveWaitStats> waits;
    std::vector<TimeNs> lengths; // per rank: its step's length (step scope) or its span
    std::vector<std::vector<CommRoleShare>> roles; // split by role: per rank, then the sums; empty otherwise
};

enum RoleColumn { RoleBusy, RoleExposed, RoleWaiting, RoleTransfer, RoleKernels, RoleColumnCount };

// The ranks' parts summed per role, in the order of first appearance over the ranks (single roles before
// combinations, as each rank lists them).
std::vector<CommRoleShare> sumShares(const std::vector<std::vector<CommRoleShare>>& perRank)
{
    std::vector<CommRoleShare> total;
    for (const auto& shares : perRank)
        for (const CommRoleShare& s : shares) {
            auto it
                = std::find_if(total.begin(), total.end(), [&](const CommRoleShare& t) { return t.role == s.role; });
            if (it == total.end()) {
                total.push_back({ s.role });
                it = total.end() - 1;
            }
            it->count += s.count;
            it->busyNs += s.busyNs;
            it->exposedNs += s.exposedNs;
            it->waitNs += s.waitNs;
            it->transferNs += s.transferNs;
        }
    // Single roles first: a combination that only a later rank has goes after every single role.
    std::stable_partition(
        total.begin(), total.end(), [](const CommRoleShare& t) { return t.role.find('+') == std::string::npos; });
    return total;
}

// Each rank's communication split by role over the scope (in a step scope, over the rank's own window of `step`),
// then the sums over the ranks.
std::vector<std::vector<CommRoleShare>> roleSharesOf(const Trace& trace, const Analysis& analysis,
    const CollectiveMatch* collectives, bool stepScope, int step, TimeRange window)
{
    std::vector<std::vector<CommRoleShare>> roles;
    const SharedGroupLayout layout(trace); // inferred once for all ranks, where a role needs it
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        TimeRange w = window;
        if (stepScope) {
            w = {};
            for (const auto& st : analysis.ranks.at(r).steps)
                if (st.index == step)
                    w = st.range;
        }
        roles.push_back(w.isEmpty() ? std::vector<CommRoleShare> {}
                                    : commRoleShares(trace, analysis, collectives, int(r), w, &layout));
    }
    roles.push_back(sumShares(roles));
    return roles;
}

// "Step 2" for a detected step named "step 2"; "Step 0 (ProfilerStep#4)" when the name says more.
QString scopeStepLabel(int index, const QString& name)
{
    const QString plain = ExposedPanel::tr("Step %1").arg(index);
    if (name.isEmpty() || name.compare(plain, Qt::CaseInsensitive) == 0)
        return plain;
    return ExposedPanel::tr("Step %1 (%2)").arg(index).arg(name);
}

QString pct(const std::optional<double>& r)
{
    return r ? QString::number(*r * 100.0, 'f', 1) + QStringLiteral(" %") : QStringLiteral("–");
}

} // namespace

RankBarChart::RankBarChart(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void RankBarChart::setData(QStringList labels, std::vector<WindowStats> stats)
{
    m_labels = std::move(labels);
    m_stats = std::move(stats);
    updateGeometry();
    update();
}

QSize RankBarChart::sizeHint() const
{
    // Narrow: the table beside it needs the width for its twelve columns (the legend wraps).
    return QSize(240, 2 * (fontMetrics().height() + 6) + int(m_stats.size()) * 20);
}

QSize RankBarChart::minimumSizeHint() const
{
    return QSize(160, 2 * (fontMetrics().height() + 6) + int(m_stats.size()) * 14);
}

void RankBarChart::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const Palette pal(PaletteKind::Default, palette());
    const QFontMetrics fm(font());
    int labelW = 0;
    for (const auto& l : m_labels)
        labelW = std::max(labelW, fm.horizontalAdvance(l));
    labelW += 8;
    const int n = int(m_stats.size());
    if (n == 0)
        return;
    const int x0 = labelW, w = std::max(10, width() - labelW - 8);
    struct Part
    {
        QString name;
        QBrush brush;
    };
    const Part parts[] = { { overlapStateShortLabel(OverlapState::ComputeOnly),
                               QBrush(pal.overlap(OverlapState::ComputeOnly)) },
        { overlapStateShortLabel(OverlapState::Hidden), pal.hiddenBrush() },
        { overlapStateShortLabel(OverlapState::Exposed), pal.exposedBrush() }, { tr("idle"), QBrush(pal.idle()) } };
    // The legend wraps onto as many lines as the width needs.
    int lx = x0, ly = 0;
    for (const auto& part : parts) {
        const int itemW = 16 + fm.horizontalAdvance(part.name) + 14;
        if (lx > x0 && lx + itemW - 14 > width()) {
            lx = x0;
            ly += fm.height() + 2;
        }
        p.fillRect(QRect(lx, ly + 3, 12, fm.height() - 4), part.brush);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(lx + 16, ly, itemW, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, part.name);
        lx += itemW;
    }
    const int legendH = ly + fm.height() + 6;
    const int barH = std::clamp((height() - legendH - 4) / n - 4, 6, 18);
    for (int i = 0; i < n; ++i) {
        const WindowStats& s = m_stats[i];
        const int y = legendH + i * (barH + 4);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(0, y, labelW - 6, barH), Qt::AlignRight | Qt::AlignVCenter, m_labels.value(i));
        const double span = double(std::max<TimeNs>(1, s.spanNs));
        const TimeNs values[]
            = { std::max<TimeNs>(0, s.computeBusyNs - s.overlappedNs), s.overlappedNs, s.exposedNs, s.idleNs };
        double x = x0;
        for (int k = 0; k < 4; ++k) {
            const double pw = w * double(values[k]) / span;
            p.fillRect(QRectF(x, y, pw, barH), parts[k].brush);
            x += pw;
        }
        p.setPen(pal.grid());
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRect(x0, y, w, barH));
    }
}

ExposedPanel::ExposedPanel(QWidget* parent)
    : QWidget(parent)
    , m_scopeBox(new QComboBox(this))
    , m_splitBox(new QComboBox(this))
    , m_caption(new ElidedLabel(this))
    // Two-line titles: the table fits beside the chart at 1400 px without scrolling sideways.
    , m_model(new TableModel({ tr("Span"), tr("Compute\nbusy"), tr("Comm.\nbusy"), tr("Comm.\nkernel sum"),
                                 tr("Hidden"), tr("Exposed"), tr("Waiting"), tr("Exposed\nwaiting"), tr("Overlap"),
                                 tr("Backward\noverlap"), tr("Idle"), tr("Unclassified") },
          this))
    , m_table(new QTableView(this))
    , m_roleModel(new TableModel(
          { tr("Comm.\nbusy"), tr("Exposed"), tr("Waiting"), tr("Transfer"), tr("Comm.\nkernels") }, this))
    , m_roleTable(new QTableView(this))
    , m_chart(new RankBarChart(this))
    , m_jobs(new JobSlot(this))
{
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Scope:"), this));
    // The step entries arrive with a trace, after the box was first shown: it must grow to them.
    m_scopeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    top->addWidget(m_scopeBox);
    top->addWidget(m_caption, 1);
    // The split on a row of its own: beside a step's scope box it would widen the panel past its dock at 200 %.
    auto* splitRow = new QHBoxLayout;
    splitRow->addWidget(new QLabel(tr("Split:"), this));
    m_splitBox->setObjectName(QStringLiteral("splitBox"));
    m_splitBox->addItem(tr("None"), int(Split::Totals));
    m_splitBox->addItem(tr("By role"), int(Split::ByRole));
    m_splitBox->setToolTip(tr("By role: each rank's communication by the parallelism of its process groups (dp, tp, "
                              "pp, ep, cp, other); the parts add up to the rank's totals"));
    splitRow->addWidget(m_splitBox);
    splitRow->addStretch(1);
    m_table->setModel(m_model);
    m_roleTable->setModel(m_roleModel);
    m_roleModel->setColumnToolTip(RoleBusy,
        tr("Time the role's communication kernels run while no other role's do; a row \"dp+tp\" holds the time "
           "kernels of those roles run at once. The rows of a rank add up to its communication busy time"));
    m_roleModel->setColumnToolTip(
        RoleExposed, tr("The same time with no compute running; the rows add up to the rank's exposed time"));
    m_roleModel->setColumnToolTip(RoleWaiting,
        tr("Time the role's kernels waited for the last peer (sum over its kernels, clipped to the scope)"));
    m_roleModel->setColumnToolTip(RoleTransfer, tr("Time the role's kernels ran with all peers present"));
    m_roleModel->setColumnToolTip(RoleKernels, tr("Communication kernels of the role in the scope"));
    m_roleTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_roleTable->setSelectionMode(QAbstractItemView::NoSelection);
    m_roleTable->verticalHeader()->setDefaultSectionSize(m_roleTable->fontMetrics().height() + 6);
    m_roleTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_roleTable->hide();
    m_model->setColumnToolTip(ColUnclassified,
        tr("Compute time only a catch-all rule matched (the column is hidden while it is 0 everywhere)"));
    m_model->setColumnToolTip(ColWaiting,
        tr("Time NCCL kernels spent waiting for the last peer to join the collective (sum over the rank's kernels, "
           "clipped to the scope)"));
    m_model->setColumnToolTip(
        ColExposedWaiting, tr("Waiting for peers during which no compute kernel of the rank runs"));
    m_model->setColumnToolTip(ColCommBusy, tr("Time at least one communication kernel runs"));
    m_model->setColumnToolTip(ColCommSum, tr("Sum of communication kernel durations"));
    m_model->setColumnToolTip(ColHidden, tr("Communication time during which compute runs"));
    m_model->setColumnToolTip(ColExposed, tr("Communication time with no compute running"));
    m_model->setColumnToolTip(ColRatio, tr("Hidden / communication busy"));
    m_model->setColumnToolTip(ColBackward, tr("Communication time overlapped by backward kernels"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* body = new QHBoxLayout;
    body->addWidget(m_table, 1);
    body->addWidget(m_roleTable, 1);
    body->addWidget(m_chart, 0);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(splitRow);
    layout->addLayout(body, 1);
    connect(m_scopeBox, qOverload<int>(&QComboBox::activated), this, &ExposedPanel::onScopeChanged);
    connect(m_splitBox, qOverload<int>(&QComboBox::activated), this,
        [this](int i) { setSplit(Split(m_splitBox->itemData(i).toInt())); });
    setTrace(nullptr, nullptr);
}

void ExposedPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const CollectiveMatch> collectives)
{
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_collectives = std::move(collectives);
    m_jobs->cancel();
    m_scopeBox->clear();
    m_scopeBox->addItem(tr("Whole trace"), -2);
    m_scopeBox->addItem(tr("Visible range"), -1);
    if (m_analysis) {
        std::set<std::pair<int, std::string>> steps;
        for (const auto& ra : m_analysis->ranks)
            for (const auto& st : ra.steps)
                steps.insert({ st.index, st.name });
        std::set<int> seen;
        for (const auto& [idx, name] : steps)
            if (seen.insert(idx).second)
                m_scopeBox->addItem(scopeStepLabel(idx, QString::fromStdString(name)), idx);
    }
    m_stats.clear();
    m_waits.clear();
    m_lengths.clear();
    m_roleShares.clear();
    m_model->clear();
    m_roleModel->clear();
    m_chart->setData({}, {});
    if (m_trace)
        m_visible = activityRange(*m_trace);
    setScope(Scope::WholeTrace);
}

void ExposedPanel::onScopeChanged(int comboIndex)
{
    const int choice = m_scopeBox->itemData(comboIndex).toInt();
    if (choice == -2)
        setScope(Scope::WholeTrace);
    else if (choice == -1)
        setScope(Scope::VisibleRange);
    else
        setScope(Scope::Step, choice);
}

void ExposedPanel::setScope(Scope scope, int step)
{
    m_scope = scope;
    m_step = step;
    const int want = scope == Scope::WholeTrace ? -2 : scope == Scope::VisibleRange ? -1 : step;
    const int i = m_scopeBox->findData(want);
    if (i >= 0)
        m_scopeBox->setCurrentIndex(i);
    recompute();
}

void ExposedPanel::setSplit(Split split)
{
    m_split = split;
    m_splitBox->setCurrentIndex(m_splitBox->findData(int(split)));
    m_table->setVisible(split == Split::Totals);
    m_roleTable->setVisible(split == Split::ByRole);
    if (split == Split::Totals) {
        m_roleShares.clear();
        m_roleModel->clear();
    }
    recompute();
}

void ExposedPanel::setVisibleRange(TimeRange range)
{
    m_visible = range;
    if (m_scope == Scope::VisibleRange)
        recompute();
}

void ExposedPanel::recompute()
{
    if (!m_trace || !m_analysis) {
        m_caption->setText(m_trace ? tr("no analysis") : QString());
        return;
    }
    const TimeRange window = m_scope == Scope::VisibleRange ? m_visible : activityRange(*m_trace);
    // A step scope reports each rank's step time; the other scopes report the window's length.
    m_model->setColumnTitle(ColSpan, m_scope == Scope::Step ? tr("Step time") : tr("Span"),
        m_scope == Scope::Step ? tr("Length of the step on each rank")
                               : tr("Length of the window (whole trace or visible range)"));
    m_caption->setText(m_scope == Scope::Step
            ? tr("step %1 on each rank's GPU: from the end of the previous step's GPU "
                 "work to the end of the work launched in this step")
                  .arg(m_step)
            : tr("%1 – %2 (%3)")
                  .arg(durationText(window.start), durationText(window.end), durationText(window.duration())));
    auto trace = m_trace;
    auto analysis = m_analysis;
    auto collectives = m_collectives;
    const Scope scope = m_scope;
    const int step = m_step;
    const bool byRole = m_split == Split::ByRole;
    m_jobs->run<ScopeResult>(
        [trace, analysis, collectives, scope, step, window, byRole] {
            std::vector<WindowStats> out;
            std::vector<CollectiveWaitStats> waits;
            const int rankCount = int(trace->ranks.size());
            if (collectives) {
                CollectiveWaitStats total;
                for (int r = 0; r < rankCount; ++r) {
                    // In a step scope each rank's own step range is its window.
                    TimeRange w = window;
                    if (scope == Scope::Step) {
                        w = {};
                        if (std::size_t(r) < analysis->ranks.size())
                            for (const auto& st : analysis->ranks[r].steps)
                                if (st.index == step)
                                    w = st.range;
                    }
                    const auto ws = collectiveWaitInWindow(*collectives, *analysis, r, w);
                    total.waitNs += ws.waitNs;
                    total.exposedWaitNs += ws.exposedWaitNs;
                    total.members += ws.members;
                    waits.push_back(ws);
                }
                waits.push_back(total);
            }
            const int ranks = int(trace->ranks.size());
            auto roles = byRole ? roleSharesOf(*trace, *analysis, collectives.get(), scope == Scope::Step, step, window)
                                : std::vector<std::vector<CommRoleShare>> {};
            std::vector<TimeNs> lengths;
            if (scope == Scope::Step) {
                // Each rank's step window on the GPU (StepWindow::range): the statistics and the waiting above are
                // both taken over it, so waiting never exceeds communication and nothing exceeds the step.
                for (int r = 0; r < ranks; ++r) {
                    WindowStats s;
                    TimeNs length = 0;
                    for (const auto& st : analysis->ranks[std::size_t(r)].steps)
                        if (st.index == step) {
                            s = computeStepWindowStats(*trace, *analysis, r, st.range);
                            length = st.range.duration();
                        }
                    out.push_back(s);
                    lengths.push_back(length);
                }
                // Total = sums of the per-rank values; the ratio from the sums (as computeTotal does).
                out.push_back(sumStats(out));
            } else {
                for (int r = 0; r < ranks; ++r) {
                    out.push_back(computeStats(*trace, *analysis, r, window));
                    lengths.push_back(out.back().spanNs);
                }
                out.push_back(computeTotal(*trace, *analysis, window));
            }
            return ScopeResult { window, std::move(out), std::move(waits), std::move(lengths), std::move(roles) };
        },
        [this](const ScopeResult& result) {
            m_window = result.window;
            m_lengths = result.lengths;
            if (m_split == Split::ByRole)
                showRoles(result.roles);
            show(result.stats, result.waits);
        });
}

void ExposedPanel::show(const std::vector<WindowStats>& stats, const std::vector<CollectiveWaitStats>& waits)
{
    m_stats = stats;
    m_waits = waits;
    const int n = int(stats.size());
    QStringList labels, titles;
    std::vector<TableModel::Row> rows;
    const QColor exposedColour = readableOn(Palette(PaletteKind::Default, palette()).overlap(OverlapState::Exposed),
        m_table->palette().color(QPalette::Base));
    for (int i = 0; i < n; ++i) {
        const bool total = i == n - 1;
        const QString label = total ? tr("All ranks") : QString::fromStdString(m_trace->ranks[i].label);
        titles << label;
        if (!total)
            labels << label;
        const WindowStats& s = stats[i];
        const bool hasWait = std::size_t(i) < waits.size();
        const CollectiveWaitStats ws = hasWait ? waits[std::size_t(i)] : CollectiveWaitStats {};
        const QString none = QStringLiteral("–");
        // A rank's step time or span; for all ranks the longest of them (the ranks run side by side: their times
        // are not added up).
        TimeNs length = std::size_t(i) < m_lengths.size() ? m_lengths[std::size_t(i)] : s.spanNs;
        if (total)
            length = m_lengths.empty() ? 0 : *std::max_element(m_lengths.begin(), m_lengths.end());
        const QString cells[ColCount] = { total ? tr("%1 (longest)").arg(durationText(length)) : durationText(length),
            durationText(s.computeBusyNs), durationText(s.commBusyNs), durationText(s.commKernelSumNs),
            durationText(s.overlappedNs), durationText(s.exposedNs), hasWait ? durationText(ws.waitNs) : none,
            hasWait ? durationText(ws.exposedWaitNs) : none, pct(s.overlapRatio), durationText(s.backwardOverlappedNs),
            durationText(s.idleNs), durationText(s.unclassifiedNs) };
        TableModel::Row row(ColCount);
        for (int c = 0; c < ColCount; ++c) {
            TableCell& cell = row[std::size_t(c)];
            cell.text = cells[c];
            cell.alignment = Qt::AlignRight | Qt::AlignVCenter;
            cell.bold = total;
            if (total && c == ColSpan)
                cell.toolTip = (m_scope == Scope::Step
                        ? tr("The longest rank's step time: ranks run their steps side by side, so their "
                             "step times are not added up. The other columns are sums over the ranks.")
                        : tr("The longest rank's span: ranks run side by side, so their spans are not "
                             "added up. The other columns are sums over the ranks."));
            if ((c == ColExposed && s.exposedNs > 0) || (c == ColExposedWaiting && ws.exposedWaitNs > 0))
                cell.foreground = exposedColour;
        }
        rows.push_back(std::move(row));
    }
    m_model->setRowTitles(titles);
    m_model->setRows(std::move(rows));
    // Unclassified time is the exception (a kernel renamed past the rules); its column shows when there is some.
    m_table->setColumnHidden(ColUnclassified,
        std::all_of(stats.begin(), stats.end(), [](const WindowStats& s) { return s.unclassifiedNs == 0; }));
    std::vector<WindowStats> perRank(stats.begin(), stats.end() - (n > 0 ? 1 : 0));
    m_chart->setData(labels, perRank);
    emit updated();
}

void ExposedPanel::showRoles(const std::vector<std::vector<CommRoleShare>>& shares)
{
    m_roleShares = shares;
    QStringList titles;
    std::vector<TableModel::Row> rows;
    const QString dot = QStringLiteral(" \u00B7 ");
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const bool total = i + 1 == shares.size();
        const QString rank = total ? tr("All ranks") : QString::fromStdString(m_trace->ranks[i].label);
        for (const CommRoleShare& s : shares[i]) {
            titles << rank + dot + QString::fromStdString(s.role);
            const bool combination = s.role.find('+') != std::string::npos;
            const bool matched = m_collectives != nullptr;
            const QString none = QStringLiteral("\u2013");
            const QString cells[RoleColumnCount] = { durationText(s.busyNs), durationText(s.exposedNs),
                combination || !matched ? none : durationText(s.waitNs),
                combination || !matched ? none : durationText(s.transferNs),
                combination ? none : QString::number(s.count) };
            const TimeNs keys[RoleColumnCount] = { s.busyNs, s.exposedNs, s.waitNs, s.transferNs, TimeNs(s.count) };
            TableModel::Row row(RoleColumnCount);
            for (int c = 0; c < RoleColumnCount; ++c) {
                TableCell& cell = row[std::size_t(c)];
                cell.text = cells[c];
                cell.sortKey = qint64(keys[c]);
                cell.alignment = Qt::AlignRight | Qt::AlignVCenter;
                cell.bold = total;
                if (combination)
                    cell.toolTip = tr("Kernels of %1 run at the same time: this time belongs to no one role")
                                       .arg(QString::fromStdString(s.role));
            }
            rows.push_back(std::move(row));
        }
    }
    m_roleModel->setRowTitles(titles);
    m_roleModel->setRows(std::move(rows));
}

} // namespace exposure
