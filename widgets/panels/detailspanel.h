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
    void showInterval(const Trace& trace, const Analysis* analysis, const ViewIndex* index, IntervalRef ref,
        const CollectiveMatch* collectives = nullptr);
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
    void peerInstanceRequested(exposure::IntervalRef ref);

private:
    // What showInterval() describes, looked up once; each topic below adds its section or fields.
    struct Subject
    {
        const Trace& trace;
        const Analysis* analysis;
        const ViewIndex* index;
        const CollectiveMatch* collectives;
        IntervalRef ref;
        const Lane& lane;
        StringId id;
        const NameClass* nc;
        Category category;
        QString display; // the name shown
    };
    static Subject subject(const Trace& trace, const Analysis* analysis, const ViewIndex* index, IntervalRef ref,
        const CollectiveMatch* collectives);
    void addIdentity(const Subject& s); // name, classification (section Kernel / Copy / Region)
    void addCommunication(const Subject& s); // collective, algorithm, protocol parsed from the name
    void addProfilerArgs(const Subject& s); // what torch.profiler recorded about a collective
    void addPhase(const Subject& s); // phase and what decided it
    void addPlacement(const Subject& s); // rank, host, device, stream or thread, step
    void addLaunch(const Subject& s); // the call that launched GPU work (graph node k of n)
    void addTiming(const Subject& s); // start, end, duration, hidden / exposed
    void addAcrossRanks(const Subject& s); // waiting for peers, transfer, who arrived last
    void addLaunchParameters(const Subject& s);
    void addInstances(const Subject& s); // statistics over all instances of the name

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

} // namespace exposure
