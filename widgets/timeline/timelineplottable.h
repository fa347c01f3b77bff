// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"
#include "timeline/palette.h"
#include "timeline/rowpaint.h"
#include "timeline/timelineoptions.h"
#include "timeline/timelinescene.h"
#include "view/drawlist.h"
#include "view/viewindex.h"

#include <functional>
#include <memory>
#include <qcustomplot.h>
#include <vector>

namespace exposure {

// A piece of text drawn by the plot, in widget pixels.
struct PlotText
{
    enum class Role { RowLabel, TickLabel, AxisLabel, Legend, Title, BlockLabel };
    QRectF rect;
    QString text;
    double pointSize = 0;
    Role role = Role::RowLabel;
};

// The draw list and the exact time per class and pixel column (ShareIndex::columns) of one row of a scene for an
// axis state; rows outside the value range [valueLower, valueUpper] (± half a row) get neither.
void buildRowData(const TimelineScene& scene, int row, const DrawListParams& params, const ColumnGrid& grid,
    double valueLower, double valueUpper, std::vector<DrawItem>& list, std::vector<TimeNs>& columns);

// The single plottable that draws every row of the timeline from bounded draw lists.
// Never one QCP item per kernel: a 10-million-interval trace still costs O(width · log n) per row.
// The hatch over the part of a communication block spent waiting for the last peer.
QBrush waitingBrush(const Palette& palette);

class TimelinePlottable : public QCPAbstractPlottable
{
    Q_OBJECT
public:
    TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineScene* scene);

    double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
        const QCPRange& inKeyRange = QCPRange()) const override;

    // Draw lists for the current axis state (rebuilt lazily; also used for hit testing).
    const std::vector<DrawItem>& items(int row) const;
    // Pixel geometry of the current axis state.
    double xOrigin() const; // pixel x of column 0
    QRect rowBand(int row) const; // full row height
    // The painted box of a row across the axis rect: where column stacks grow from the bottom.
    QRect rowBox(int row) const;
    QRect boxRect(int row, const DrawItem& item) const;
    QRect boxRect(int row, TimeNs start, TimeNs end) const;
    int rowAtPixel(double y) const; // -1 outside rows
    DrawListParams currentParams() const;
    ColumnGrid currentGrid() const; // pixel columns of the current axis state, column 0 at xOrigin()
    // Time per class of a row in every column (ShareIndex::columns layout), for the current axis state.
    const std::vector<TimeNs>& columnTimes(int row) const;
    // Whole pixel columns fully inside [start, end): the part of a block drawn as a solid box.
    QRect solidRect(int row, TimeNs start, TimeNs end) const;
    void invalidate() { m_cacheValid = false; }
    // The names written into blocks by the last draw().
    const std::vector<PlotText>& drawnLabels() const { return m_drawnLabels; }

    // What each row paints for the current axis state (see RowPaint), computed from the scene's trace; with
    // `wanted`, only the rows whose entry is non-zero (the others stay empty).
    std::vector<RowPaint> computeRowPaints(const std::vector<char>* wanted = nullptr) const;
    // Where draw() takes the rows' RowPaints from: by default computeRowPaints(); a source replaces that (by row,
    // for the axis state given: see buildRowData), e.g. rows computed by other processes of an MPI job. Unset with {}.
    using PaintSource = std::function<std::vector<RowPaint>(
        const DrawListParams& params, const ColumnGrid& grid, double valueLower, double valueUpper)>;
    bool hasPaintSource() const { return bool(m_paintSource); }
    void setPaintSource(PaintSource source)
    {
        m_paintSource = std::move(source);
        m_paintsValid = false;
    }

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    void ensureLists() const;
    const std::vector<RowPaint>& rowPaints() const;
    void drawColumns(QCPPainter* painter, int row, const RowPaint& paint) const;
    static constexpr int kMaxPeerArrows = int(RowPaint::kMaxArrows);
    void drawPeerCopies(QCPPainter* painter, const std::vector<RowPaint>& paints) const;
    // Per column: exposed and hidden communication time of a rank (for the two-tone split).
    const std::vector<TimeNs>& overlapColumns(int rank) const;

    const TimelineScene* m_scene;
    // Cache of the last build; mutable because hit tests and draw() share it.
    mutable bool m_cacheValid = false;
    mutable DrawListParams m_cacheParams;
    mutable std::uint64_t m_cacheGeneration = ~0ull;
    mutable QCPRange m_cacheValueRange;
    mutable std::vector<std::vector<DrawItem>> m_lists; // by row
    mutable std::vector<std::vector<TimeNs>> m_columns; // by row, ShareIndex::columns layout
    mutable std::vector<std::vector<TimeNs>> m_overlapColumns; // by rank, ShareIndex::columns layout
    mutable std::vector<char> m_overlapColumnsValid; // by rank
    mutable std::vector<RowPaint> m_paints; // by row, for the cached axis state
    mutable bool m_paintsValid = false;
    PaintSource m_paintSource;
    std::vector<PlotText> m_drawnLabels;
};

} // namespace exposure
