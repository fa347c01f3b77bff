// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"
#include "timeline/timelineplot.h"
#include "view/viewindex.h"

#include <QList>
#include <QPair>
#include <QWidget>

class QTextBrowser;
class QPushButton;

namespace exposure {

// The story of one clicked kernel (or folded block): names, classification, placement, timing,
// hidden / exposed time of this instance, launch parameters and statistics over all instances.
class DetailsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit DetailsPanel(QWidget* parent = nullptr);

    // `collectives` (may be null) adds, for a communication kernel, its split into waiting for peers and transfer
    // and links to the same collective on the other ranks.
    void showInterval(const Trace& trace, const Analysis* analysis, const ViewIndex* index, int rank, int lane,
                      std::uint32_t interval, const CollectiveMatch* collectives = nullptr);
    // A folded block: its composition (exact time per class in its span), then its longest interval.
    void showFold(const Trace& trace, const Analysis* analysis, const ViewIndex* index, const TimelineHit& hit,
                  const FoldComposition& composition, const CollectiveMatch* collectives = nullptr);
    void clear();

    // Shown fields in order (label, plain text) and one of them by label ("" if absent): for tests.
    const QList<QPair<QString, QString>>& fields() const { return m_fields; }
    QString field(const QString& label) const;
    QString heading() const { return m_heading; }
    // One line under the heading (e.g. a communication kernel's waiting / transfer split), "" if none.
    QString summary() const { return m_summary; }
    // The same collective's instances on the other ranks, in the order of their links ("peer:<i>").
    const QList<TimelineSelection>& peers() const { return m_peers; }
    QTextBrowser* browser() const { return m_view; }

signals:
    void previousInstanceRequested();
    void nextInstanceRequested();
    void zoomToSelectionRequested();
    // A peer link was clicked: select (and show) that instance of the collective on another rank.
    void peerInstanceRequested(int rank, int lane, quint32 interval);

private:
    void add(const QString& label, const QString& value);
    void section(const QString& title);
    void render();

    QTextBrowser* m_view;
    QPushButton* m_prev;
    QPushButton* m_next;
    QPushButton* m_zoom;
    QString m_heading;
    QString m_summary;
    QList<QPair<QString, QString>> m_fields;
    QList<int> m_sections; // indexes in m_fields where a section title starts
    QStringList m_sectionTitles;
    QList<TimelineSelection> m_peers;
    QStringList m_peerLabels;
};

QString phaseLabel(Phase p);

} // namespace exposure
