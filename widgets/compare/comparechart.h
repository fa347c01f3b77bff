// SPDX-License-Identifier: GPL-3.0-or-later
// The Compare Runs window's chart: where each run's mean step time goes, one stacked bar per run.
#pragma once

#include "analysis/compare.h"
#include "model/timerange.h"

#include <QRectF>
#include <QString>
#include <QWidget>
#include <array>
#include <optional>
#include <vector>

namespace exposure {

// One horizontal stacked bar per run: compute only, hidden communication, exposed communication and
// idle/other, all scaled to the slowest run's step time so that slower steps are longer bars.
class CompareChart : public QWidget
{
    Q_OBJECT
public:
    enum Part { ComputeOnly, Hidden, Exposed, Idle, PartCount };
    struct Bar
    {
        QString label;
        RunSummary summary;
    };

    explicit CompareChart(QWidget* parent = nullptr);
    void setBars(std::vector<Bar> bars);
    int barCount() const { return int(m_bars.size()); }
    // Pixel rectangle of one part of bar `index` (empty if that part has no width); for tests and tooltips.
    QRectF partRect(int index, Part part) const;
    // Durations of the parts of a run's mean step (they add up to its step time).
    static std::array<TimeNs, PartCount> parts(const RunSummary& s);
    static QString partName(Part part);
    // The texts of the chart and the Compare Runs table: a duration, and a share with compareTable's rounding (so
    // that the window and `exposure-cli compare` agree to the digit; "-" when unknown).
    static QString durationLabel(TimeNs ns);
    static QString shareLabel(std::optional<double> share);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct Geometry
    {
        double x0 = 0, width = 0, top = 0, barH = 0, gap = 0;
        int labelW = 0;
    };
    Geometry geometry() const;
    TimeNs scaleMax() const;

    std::vector<Bar> m_bars;
};

} // namespace exposure
