// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/findbar.h"

#include "common/labels.h"
#include "timeline/timelineplot.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace exposure {

FindOverview::FindOverview(TimelinePlot* timeline, QWidget* parent)
    : QWidget(parent)
    , m_timeline(timeline)
{
    setObjectName(QStringLiteral("findOverview"));
    setToolTip(tr("Where the matches lie in the whole trace; the frame is the visible range. Click to go there."));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    connect(timeline, &TimelinePlot::visibleRangeChanged, this, qOverload<>(&QWidget::update));
    connect(timeline, &TimelinePlot::intervalSelected, this, qOverload<>(&QWidget::update));
}

QSize FindOverview::sizeHint() const
{
    return QSize(200, std::max(10, fontMetrics().height() * 2 / 3));
}

void FindOverview::setResults(std::shared_ptr<const SearchResults> results)
{
    m_results = std::move(results);
    update();
}

std::vector<std::uint32_t> FindOverview::columnCounts() const
{
    std::vector<std::uint32_t> columns(std::size_t(std::max(1, width())), 0);
    if (!m_results)
        return columns;
    const auto& bins = m_results->bins();
    for (std::size_t b = 0; b < bins.size(); ++b)
        columns[b * columns.size() / bins.size()] += bins[b];
    return columns;
}

int FindOverview::markedColumns() const
{
    const auto columns = columnCounts();
    return int(std::count_if(columns.begin(), columns.end(), [](std::uint32_t c) { return c > 0; }));
}

void FindOverview::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const auto columns = columnCounts();
    const double most = double(*std::max_element(columns.begin(), columns.end()));
    const QColor mark = m_timeline->scene().palette.selection();
    for (std::size_t x = 0; x < columns.size(); ++x) {
        if (!columns[x])
            continue;
        const double share = 0.35 + 0.65 * std::log1p(double(columns[x])) / std::log1p(std::max(1.0, most));
        const int h = std::max(2, int(std::lround(share * height())));
        p.fillRect(QRect(int(x), height() - h, 1, h), mark);
    }
    if (!m_results || !m_timeline->trace())
        return;
    const TimeRange extent = m_results->extent();
    const double span = double(std::max<TimeNs>(1, extent.duration()));
    auto xOf = [&](TimeNs t) { return int(std::lround(double(t - extent.start) / span * width())); };
    const TimeRange v = m_timeline->visibleRange();
    p.setPen(QPen(palette().text().color(), 1));
    p.drawRect(QRect(QPoint(xOf(v.start), 0), QPoint(std::max(xOf(v.start) + 2, xOf(v.end)), height() - 1)));
}

void FindOverview::mousePressEvent(QMouseEvent* event)
{
    if (!m_results || !m_timeline->trace() || width() <= 0)
        return;
    const TimeRange extent = m_results->extent();
    const TimeNs at = extent.start + TimeNs(double(extent.duration()) * event->position().x() / width());
    const TimeNs half = m_timeline->visibleRange().duration() / 2;
    m_timeline->setVisibleRange({ at - half, at + half });
}

FindBar::FindBar(TimelinePlot* timeline, QWidget* parent)
    : QWidget(parent)
    , m_timeline(timeline)
    , m_search(new TraceSearch(this))
    , m_field(new QLineEdit(this))
    , m_regex(new QCheckBox(QStringLiteral(".*"), this))
    , m_case(new QCheckBox(QStringLiteral("Aa"), this))
    , m_count(new QLabel(this))
    , m_previous(new QToolButton(this))
    , m_next(new QToolButton(this))
    , m_overview(new FindOverview(timeline, this))
{
    setObjectName(QStringLiteral("findBar"));
    m_field->setPlaceholderText(tr("Find a kernel or CPU region by name"));
    m_field->setClearButtonEnabled(true);
    m_field->setToolTip(tr("Matches the demangled and the recorded name; Enter or F3: next, Shift+F3: previous, "
                           "Escape: close"));
    m_previous->setArrowType(Qt::UpArrow);
    m_previous->setToolTip(tr("Previous match (Shift+F3)"));
    m_next->setArrowType(Qt::DownArrow);
    m_next->setToolTip(tr("Next match (F3)"));
    auto* closeButton = new QToolButton(this);
    closeButton->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    closeButton->setAutoRaise(true);
    closeButton->setToolTip(tr("Close the find bar (Escape)"));
    m_regex->setToolTip(tr("Regular expression (else plain text)"));
    m_case->setToolTip(tr("Match case"));
    m_count->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("88 888 of 88 888")));
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_field, 1);
    row->addWidget(m_previous);
    row->addWidget(m_next);
    row->addWidget(m_regex);
    row->addWidget(m_case);
    row->addWidget(m_count);
    row->addWidget(closeButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addLayout(row);
    layout->addWidget(m_overview);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(250);
    connect(&m_debounce, &QTimer::timeout, this, [this] { m_search->start(currentQuery()); });
    connect(m_field, &QLineEdit::textEdited, this, [this] { m_debounce.start(); });
    connect(m_regex, &QCheckBox::toggled, this, [this] { m_search->start(currentQuery()); });
    connect(m_case, &QCheckBox::toggled, this, [this] { m_search->start(currentQuery()); });
    connect(m_field, &QLineEdit::returnPressed, this, [this] {
        if (m_debounce.isActive() || !(m_search->query() == currentQuery())) {
            m_debounce.stop();
            m_search->start(currentQuery());
        }
        findNext(+1);
    });
    connect(m_previous, &QToolButton::clicked, this, [this] { findNext(-1); });
    connect(m_next, &QToolButton::clicked, this, [this] { findNext(+1); });
    connect(closeButton, &QToolButton::clicked, this, &FindBar::close);
    connect(m_search, &TraceSearch::resultsChanged, this, [this] {
        m_timeline->setSearchResults(m_search->results());
        m_overview->setResults(m_search->results());
        updateCount();
    });
    connect(m_search, &TraceSearch::finished, this, &FindBar::updateCount);
    connect(timeline, &TimelinePlot::intervalSelected, this, &FindBar::updateCount);
    connect(timeline, &TimelinePlot::selectionCleared, this, &FindBar::updateCount);
    m_field->installEventFilter(this);
    hide();
}

void FindBar::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    m_search->setTrace(std::move(trace), std::move(analysis));
    if (isVisible() && !m_field->text().isEmpty())
        m_search->start(currentQuery());
}

void FindBar::activate()
{
    show();
    m_field->setFocus(Qt::ShortcutFocusReason);
    m_field->selectAll();
}

void FindBar::close()
{
    m_debounce.stop();
    m_search->clear();
    hide();
    m_timeline->setFocus(Qt::OtherFocusReason);
}

void FindBar::find(const QString& text, bool regex)
{
    show();
    m_debounce.stop();
    m_field->setText(text);
    const QSignalBlocker block(m_regex);
    m_regex->setChecked(regex);
    m_search->start(currentQuery());
}

SearchQuery FindBar::currentQuery() const
{
    return SearchQuery { m_field->text(), m_regex->isChecked(), m_case->isChecked() };
}

std::uint64_t FindBar::matchCount() const
{
    const auto results = m_search->results();
    return results ? results->count() : 0;
}

bool FindBar::findNext(int direction)
{
    const auto results = m_search->results();
    const auto trace = m_search->trace();
    if (!results || !trace || results->count() == 0) {
        emit message(m_search->running() ? tr("Still searching") : tr("No match"));
        return false;
    }
    const auto sel = m_timeline->selection();
    std::optional<IntervalRef> next = sel
        ? results->step(*trace, *sel, direction)
        : results->stepFromTime(
            *trace, direction > 0 ? m_timeline->visibleRange().start : m_timeline->visibleRange().end, direction);
    if (!next) {
        next = direction > 0 ? results->first(*trace) : results->last(*trace);
        emit message(direction > 0 ? tr("Wrapped to the first match") : tr("Wrapped to the last match"));
    }
    m_timeline->select(*next, true);
    return true;
}

bool FindBar::eventFilter(QObject* watched, QEvent* event)
{
    // Escape in the field closes the bar (a key of the field, not a window action).
    if (watched == m_field && event->type() == QEvent::KeyPress
        && static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
        close();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

QString FindBar::countText() const
{
    return m_count->text();
}

void FindBar::updateCount()
{
    const auto results = m_search->results();
    const auto trace = m_search->trace();
    QString text;
    if (!m_search->error().isEmpty())
        text = tr("invalid: %1").arg(m_search->error());
    else if (!results)
        text.clear();
    else if (m_search->running())
        text = tr("searching… %1").arg(groupDigits(results->count()));
    else if (results->count() == 0)
        text = tr("no match");
    else if (const auto sel = m_timeline->selection(); sel && trace && results->contains(*sel))
        text = tr("%1 of %2").arg(groupDigits(results->rankOf(*trace, *sel) + 1), groupDigits(results->count()));
    else
        text = results->count() == 1 ? tr("1 match") : tr("%1 matches").arg(groupDigits(results->count()));
    m_count->setText(text);
    m_count->setToolTip(
        results ? tr("%1 distinct names match").arg(groupDigits(m_search->matchingNames())) : QString());
    m_timeline->refreshMatches();
}

} // namespace exposure
