// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "model/trace.h"
#include "timeline/launchlinks.h"
#include "timeline/timelineoptions.h"
#include "timeline/timelineplottable.h"
#include "view/viewindex.h"
#include "view/zoomhistory.h"

#include <QTimer>
#include <functional>
#include <memory>
#include <optional>
#include <qcustomplot.h>
#include <set>
#include <string>
#include <vector>

class QScrollBar;

namespace exposure {

class SearchResults;
class TimeAxisTicker;
class TimelineOverlay;

// What lies under a point of the timeline.
struct TimelineHit
{
    int row = -1;
    int rank = -1;
    int lane = -1; // -1: the overlap row
    bool overlapRow = false;
    std::uint32_t first = 0; // first interval of the item
    std::uint32_t count = 0; // > 1 for a folded run
    std::uint32_t largest = 0;
    TimeNs start = 0;
    TimeNs end = 0;
};

// What a folded block holds: exact time per class inside its span (what its column stacks paint).
struct FoldComposition
{
    TimeNs span = 0;
    TimeNs busy = 0; // all but idle / sync (overlap rows: every state)
    std::vector<std::pair<QString, TimeNs>> classes; // label and time, largest first
    QString dominant() const { return classes.empty() ? QString() : classes.front().first; }
    // "gemm 9.1 %, elementwise 6.0 %, …" (at most `max` classes)
    QString sharesText(int max = 6) const;
};

// The selected interval of the timeline.
using TimelineSelection = IntervalRef;

// The master timeline: a QCustomPlot with one TimelinePlottable drawing every row, a time axis,
// lane labels, a category legend, and a buffered overlay layer for hover / selection.
// Works on screen and off-screen (create, setTrace, setOptions, resize, savePng / savePdf / toPainter),
// so figure export reuses exactly this drawing code.
class TimelinePlot : public QCustomPlot
{
    Q_OBJECT
public:
    explicit TimelinePlot(QWidget* parent = nullptr);
    ~TimelinePlot() override;

    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const ViewIndex> index = {});
    void clearTrace();
    // Matched collectives of the current trace (setTrace clears them): hatches the waiting part of communication
    // blocks and adds a legend entry when there is at least one matched collective.
    void setCollectives(std::shared_ptr<const CollectiveMatch> collectives);
    const std::shared_ptr<const Trace>& trace() const { return m_scene.trace; }
    const std::shared_ptr<const Analysis>& analysis() const { return m_scene.analysis; }
    const std::shared_ptr<const ViewIndex>& viewIndex() const { return m_scene.index; }

    // Applies everything but `range`, which is applied only when set (then it becomes the view).
    void setOptions(const TimelineOptions& options);
    // The options, with `range` filled in with the visible range.
    TimelineOptions options() const;

    const std::vector<TimelineRow>& rows() const { return m_scene.rows; }
    QStringList rowLabels() const;
    const TimelineScene& scene() const { return m_scene; }
    TimelinePlottable* plottable() const { return m_plottable; }
    // Where a figure's legend (options().legendDrawnOnly) takes the classes drawn in a range from when the rows are
    // painted elsewhere (a paint source: exposure-mpi render): merged from the processes that hold the rows.
    // Unset ({}), such a plot's legend names the classes the trace has.
    using DrawnClassesSource = std::function<DrawnClasses(TimeRange range)>;
    void setDrawnClassesSource(DrawnClassesSource source) { m_drawnClassesSource = std::move(source); }

    // The text of the plot as last laid out (and, for block labels, last drawn), in widget pixels: what the
    // figure checks test for overlaps, clipping and size.
    std::vector<PlotText> textBoxes() const;
    // Runs the layout now (row range, row labels included), e.g. before measuring an off-screen figure.
    void layOutNow() { updateLayout(); }
    // A horizontal legend wrapped into as many columns as fit `availableWidth`; returns the column count.
    int wrapLegend(int availableWidth);
    // A legend taller than a fifth of the plot on screen shows some of its lines: scrolls it by `lines` (the wheel
    // over it does); false when it shows every line.
    bool scrollLegend(int lines);
    bool legendScrolls() const { return m_legendLines > m_legendShownLines; }

    // --- view range and navigation ---
    TimeRange visibleRange() const;
    TimeRange fullRange() const;
    // What Zoom to Fit (Ctrl+0) and a newly opened trace show: the recorded activity (activityRange), without a
    // tail in which only background threads poll.
    TimeRange fitRange() const;
    // Sets the view (clamped to the trace); commits it to the history unless pushHistory is false.
    void setVisibleRange(TimeRange range, bool pushHistory = true);
    ZoomHistory& history() { return m_history; }
    void zoomIn();
    void zoomOut();
    void zoomToFit();
    void panLeft();
    void panRight();
    bool back();
    bool forward();
    bool zoomToSelection();
    bool zoomToStep(int stepIndex); // index into the first rank's steps that has one
    bool toggleRankCollapsed(int rank);
    // Ranks in groups (TimelineOptions::grouping): the groups of the trace, collapsing one, all or none.
    const std::vector<RankGroup>& rankGroups() const { return m_scene.groups; }
    bool toggleGroupCollapsed(int group);
    void setGrouping(RankGrouping grouping, bool collapseAll);
    void setAllGroupsCollapsed(bool collapsed);
    // Expands the collapsed group that holds rank index `rank`; false if there is none.
    bool expandGroupOf(int rank);
    // Rows that do not all fit at TimelineOptions::minRowPixels: the first row shown and how many are shown.
    int firstRow() const { return m_firstRow; }
    int shownRowCount() const { return m_shownRows; }
    void setFirstRow(int row);
    void ensureRowVisible(int row);

    // --- picking and selection ---
    std::optional<TimelineHit> hitAt(const QPoint& pos) const;
    QString tooltipFor(const TimelineHit& hit) const;
    // Over a group row: the group and its ranks' share of each state in the five pixel columns around `pos`, largest
    // first (what the hover shows there); empty elsewhere.
    QString groupTooltipAt(const QPoint& pos) const;
    FoldComposition foldComposition(const TimelineHit& hit) const;
    std::optional<TimelineSelection> selection() const { return m_selection; }
    void select(const TimelineSelection& sel, bool ensureVisible = false);
    void clearSelection();
    // Widget pixel at the centre of an interval's box (the part of it that is visible).
    std::optional<QPoint> pixelOf(IntervalRef ref) const;
    // Outline every visible instance of a name (kInvalidString to clear).
    void setHighlightedName(StringId name);
    StringId highlightedName() const { return m_highlightName; }
    std::optional<TimelineHit> hover() const { return m_hover; }
    // Outline every match of Find (null: none); the results may grow, refreshMatches() redraws them.
    void setSearchResults(std::shared_ptr<const SearchResults> results);
    const std::shared_ptr<const SearchResults>& searchResults() const { return m_search; }
    void refreshMatches() { refreshOverlay(); }

    // --- launch links: the arrows from a launch call to the GPU work it started, shown for the selection ---
    const std::vector<LaunchLink>& launchLinks() const { return m_links; }
    // An arrow's end points in widget pixels (from the call to the work); nullopt where a row is not shown.
    std::optional<QLineF> linkLine(const LaunchLink& link) const;
    // The arrow within a few pixels of `pos`.
    std::optional<LaunchLink> linkAt(const QPoint& pos) const;
    // Selects the end of `link` that is not selected (the call, or the work when the call is selected) and scrolls to
    // it, as clicking the arrow does.
    void followLink(const LaunchLink& link);

signals:
    void visibleRangeChanged(exposure::TimeRange range); // committed ranges (after a gesture ends)
    void intervalSelected(exposure::IntervalRef ref);
    void foldClicked(const exposure::TimelineHit& hit);
    void selectionCleared();
    void cursorTimeChanged(qint64 ns);
    void rankCollapseToggled(int rank, bool collapsed);
    void groupCollapseToggled(int group, bool collapsed);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void updateLayout() override;

private:
    void rebuildRows();
    void rebuildColors();
    bool updateRowRange();
    // Row labels for the current row height: all of them, or, when rows are thinner than a line of text, one per
    // rank in the middle of its band (leaving out those that would come closer than a line), so that labels never
    // overprint.
    bool updateRowTicks(); // true if the labels changed
    std::vector<std::pair<int, int>> rankBands() const; // (first row, row count) of each rank's rows
    QString rankLabel(int row) const; // "Rank 0": the rank of a row
    void updateRowScrollBar();
    void rebuildLegend();
    void fillLegend(bool horizontal); // the items of m_legendEntries, wrapped (and, on screen, capped in height)
    struct LegendEntry
    {
        QBrush brush;
        QString text;
        bool outlined = false;
        QColor base; // under a pattern brush
    };
    DrawnClasses presentClasses() const;
    DrawnClasses drawnClasses(TimeRange range) const;
    std::vector<LegendEntry> legendEntries() const;
    void applyLayout();
    void applyStyle();
    void onKeyRangeChanged(const QCPRange& range);
    void commitRange();
    void refreshOverlay();

    TimelineScene m_scene;
    TimelinePlottable* m_plottable = nullptr;
    TimelineOverlay* m_overlay = nullptr;
    QSharedPointer<TimeAxisTicker> m_ticker;
    QSharedPointer<QCPAxisTickerText> m_rowTicker;
    QMap<double, QString> m_rowLabels; // every row's label, by row
    QCPTextElement* m_title = nullptr;
    QCPLayoutGrid* m_legendHolder = nullptr;
    QCPLayoutGrid* m_sideHolder = nullptr; // the legend on the right, packed at the top
    int m_legendWrap = 0;
    int m_legendLine = 0; // the first line shown of a legend that scrolls
    int m_legendLines = 0; // its lines (0: it does not scroll)
    int m_legendShownLines = 0;
    std::vector<LegendEntry> m_legendEntries;
    QScrollBar* m_rowScroll = nullptr;
    int m_firstRow = 0;
    int m_shownRows = 0;
    ZoomHistory m_history;
    QTimer m_commitTimer;
    bool m_settingRange = false;
    QPoint m_pressPos;
    bool m_rubberBand = false;
    bool m_dragged = false;
    std::optional<TimelineSelection> m_selection;
    std::optional<TimelineHit> m_hover;
    DrawnClassesSource m_drawnClassesSource;
    StringId m_highlightName = kInvalidString;
    std::shared_ptr<const SearchResults> m_search;
    std::vector<LaunchLink> m_links; // of the selection

    friend class TimelineOverlay;
};

// How many columns of a row-by-row legend with entries of these widths fit in `available` pixels (at least 1).
int legendColumnsThatFit(const std::vector<int>& widths, int available, int spacing);

} // namespace exposure

Q_DECLARE_METATYPE(exposure::TimelineHit)
Q_DECLARE_METATYPE(exposure::TimeRange)
