// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <qcustomplot.h>

namespace exposure {

class TimelinePlot;

// Hover, selection, highlighted instances (a name, the matches of Find) and the links from a launch call to its GPU
// work live on their own buffered layer, so that moving the mouse repaints only this layer, never the millions of
// boxes below.
class TimelineOverlay : public QCPLayerable
{
public:
    explicit TimelineOverlay(TimelinePlot* plot);

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override { painter->setAntialiasing(false); }
    QRect clipRect() const override;
    void draw(QCPPainter* painter) override;

private:
    void drawNameHighlight(QCPPainter* painter) const;
    void drawMatches(QCPPainter* painter) const;
    void drawLinks(QCPPainter* painter) const;

    TimelinePlot* m_plot;
};

} // namespace exposure
