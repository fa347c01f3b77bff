// SPDX-License-Identifier: GPL-3.0-or-later
// Edit ▸ Find (Ctrl+F): a bar above the timeline that searches kernel and CPU-region names (plain text or a regular
// expression) in the background, counts the matches as they stream in, outlines them in the timeline and marks them
// in an overview of the whole trace below the field; F3 / Shift+F3 select the next / previous match.
#pragma once

#include "model/trace.h"
#include "timeline/tracesearch.h"

#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>

class QCheckBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace exposure {

class TimelinePlot;

// The whole trace in one strip: where the matches lie (a mark per column that holds any, taller for more), and the
// visible range as a frame. A click centres the timeline there.
class FindOverview : public QWidget
{
    Q_OBJECT
public:
    FindOverview(TimelinePlot* timeline, QWidget* parent = nullptr);
    void setResults(std::shared_ptr<const SearchResults> results);
    // Columns of the strip (of its width) that show a match mark; for tests.
    int markedColumns() const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    std::vector<std::uint32_t> columnCounts() const;
    TimelinePlot* m_timeline;
    std::shared_ptr<const SearchResults> m_results;
};

class FindBar : public QWidget
{
    Q_OBJECT
public:
    FindBar(TimelinePlot* timeline, QWidget* parent = nullptr);

    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    // Shows the bar and puts the cursor in the field, its text selected.
    void activate();
    // Closes the bar and drops the matches.
    void close();
    // Starts a search now (what typing starts after a short pause).
    void find(const QString& text, bool regex);
    // Selects the next (direction > 0) or previous match, from the selection (or from the visible range's start when
    // nothing is selected), wrapping at the ends; scrolls to it. False when there is none.
    bool findNext(int direction);

    TraceSearch* search() const { return m_search; }
    QLineEdit* field() const { return m_field; }
    QCheckBox* regexBox() const { return m_regex; }
    FindOverview* overview() const { return m_overview; }
    QString countText() const; // "3 of 1 204", "no match", "searching… 1 204"
    std::uint64_t matchCount() const;

signals:
    void message(const QString& text); // for the status bar: "Wrapped to the first match", a bad expression

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateCount();
    SearchQuery currentQuery() const;

    TimelinePlot* m_timeline;
    TraceSearch* m_search;
    QLineEdit* m_field;
    QCheckBox* m_regex;
    QCheckBox* m_case;
    QLabel* m_count;
    QToolButton* m_previous;
    QToolButton* m_next;
    FindOverview* m_overview;
    QTimer m_debounce;
};

} // namespace exposure
