// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/detailspanel.h"

#include "analysis/commops.h"
#include "analysis/grouplayout.h"
#include "analysis/kernelop.h"
#include "common/labels.h"
#include "common/theme.h"
#include "model/utf8.h"

#include <QHBoxLayout>
#include <QMimeData>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace exposure {

namespace {

// The role of a kernel's process group as the stats report gives it: rules, name, then the job's group layout.
std::string roleOfGroupInJob(const Trace& trace, const Rules& rules, const CollectiveArgs* args)
{
    std::string source;
    const std::string role = roleOfGroup(rules, nullptr, args, &source);
    if (role != "other" || source != "name")
        return role;
    const GroupLayout layout = inferGroupLayout(trace);
    return roleOfGroup(rules, &layout, args);
}

QString percent(TimeNs part, TimeNs whole)
{
    if (whole <= 0)
        return QStringLiteral("–");
    return QString::number(100.0 * double(part) / double(whole), 'f', 1) + QStringLiteral(" %");
}

QString nsAndUnit(TimeNs ns)
{
    return QStringLiteral("%1 (%2 ns)").arg(durationText(ns), groupDigits(std::uint64_t(std::max<TimeNs>(0, ns))));
}

// "335.3 µs (335 323 ns, 97.4 %)": a part of `whole` in the same form as every other time of the panel.
QString partOf(TimeNs part, TimeNs whole)
{
    return QStringLiteral("%1 (%2 ns, %3)")
        .arg(durationText(part), groupDigits(std::uint64_t(std::max<TimeNs>(0, part))), percent(part, whole));
}

// The "Launch" topic of a GPU interval: the call that launched it and, for work replayed from a CUDA graph or
// launched with others by one call, its place among what that call launched. Empty for CPU intervals.
QList<QPair<QString, QString>> launchTopic(const Trace& trace, const Analysis& analysis, IntervalRef gpu)
{
    QList<QPair<QString, QString>> out;
    const auto launch = launchOfWork(analysis, gpu);
    if (!launch) {
        out.append({ DetailsPanel::tr("Launched by"), DetailsPanel::tr("unknown (no launch call in the trace)") });
        return out;
    }
    const Lane& cpu = trace.ranks.at(std::size_t(gpu.rank)).lanes.at(std::size_t(launch->call.lane));
    const QString call = QString::fromStdString(trace.name(cpu.intervals.name(launch->call.interval)));
    const QString at = durationText(cpu.intervals.start(launch->call.interval));
    const QString thread = QString::fromStdString(cpu.name);
    if (launch->graph) {
        out.append({ DetailsPanel::tr("Launched by"),
            DetailsPanel::tr("replayed from a CUDA graph launched at %1 (%2 on %3), node %4 of %5")
                .arg(at, call, thread)
                .arg(launch->node + 1)
                .arg(launch->nodes) });
    } else {
        out.append({ DetailsPanel::tr("Launched by"), DetailsPanel::tr("%1 at %2 on %3").arg(call, at, thread) });
        if (launch->nodes > 1)
            out.append({ DetailsPanel::tr("Same call"),
                DetailsPanel::tr("%1 of the %2 GPU operations it launched").arg(launch->node + 1).arg(launch->nodes) });
    }
    return out;
}

const QChar kBreak(0x200B); // zero-width space: a line may break here

const QChar kNoBreakSpace(0x00A0);
const QChar kWordJoiner(0x2060); // no line break here

// Kernel names are long C++ signatures ("void at::native::vectorized_elementwise_kernel<4, …>(int, …)"): offer
// line breaks after "::" and ", " and before "<" and "(", so that a name wraps between its parts, never inside an
// identifier. With `onlyThere` (a name), those are its only break points: other spaces ("unsigned long", "bias_T /
// NT") do not break, nor does a line break after "-" or "/". Only the displayed text gets the (invisible) marks;
// copying removes them (BreakingBrowser).
QString withNameBreaks(const QString& text, bool onlyThere = false)
{
    QString out;
    out.reserve(text.size() + text.size() / 4);
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if ((c == QLatin1Char('<') || c == QLatin1Char('(')) && i > 0 && text[i - 1] != QLatin1Char(' '))
            out += kBreak;
        if (onlyThere && c == QLatin1Char(' ') && !(i > 0 && text[i - 1] == QLatin1Char(','))) {
            out += kNoBreakSpace;
            continue;
        }
        out += c;
        if (c == QLatin1Char(':') && i > 0 && text[i - 1] == QLatin1Char(':'))
            out += kBreak;
        else if (onlyThere && !c.isLetterOrNumber() && c != QLatin1Char('_') && c != QLatin1Char(' ')
            && c != QLatin1Char(',') && c != QLatin1Char(':') && i + 1 < text.size())
            out += kWordJoiner; // "-", "/", ")", ... : no break after them
    }
    return out;
}

// A QTextBrowser whose copies leave out the break marks of withNameBreaks.
class BreakingBrowser : public QTextBrowser
{
public:
    using QTextBrowser::QTextBrowser;

protected:
    QMimeData* createMimeDataFromSelection() const override
    {
        auto* mime = new QMimeData;
        QString text = textCursor().selection().toPlainText();
        text.remove(kBreak);
        text.remove(kWordJoiner);
        text.replace(kNoBreakSpace, QLatin1Char(' '));
        mime->setText(text);
        return mime;
    }
};

} // namespace

DetailsPanel::DetailsPanel(QWidget* parent)
    : QWidget(parent)
    , m_view(new BreakingBrowser(this))
    , m_prev(new QPushButton(tr("◀ Previous"), this))
    , m_next(new QPushButton(tr("Next ▶"), this))
    , m_zoom(new QPushButton(tr("Zoom to it"), this))
{
    m_prev->setToolTip(tr("Select the previous instance of this kernel on the same stream"));
    m_next->setToolTip(tr("Select the next instance of this kernel on the same stream"));
    m_zoom->setToolTip(tr("Zoom the timeline to the selected kernel"));
    m_view->setOpenLinks(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_prev);
    buttons->addWidget(m_next);
    buttons->addStretch();
    buttons->addWidget(m_zoom);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_view);
    layout->addLayout(buttons);
    connect(m_prev, &QPushButton::clicked, this, &DetailsPanel::previousInstanceRequested);
    connect(m_next, &QPushButton::clicked, this, &DetailsPanel::nextInstanceRequested);
    connect(m_zoom, &QPushButton::clicked, this, &DetailsPanel::zoomToSelectionRequested);
    connect(m_view, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        // Links are "peer:<index into m_peers>"; anything else is ignored (no external links here).
        if (url.scheme() != QLatin1String("peer"))
            return;
        bool ok = false;
        const int i = url.path().toInt(&ok);
        if (ok && i >= 0 && i < m_peers.size())
            emit peerInstanceRequested(m_peers[i]);
    });
    clear();
}

void DetailsPanel::clear()
{
    m_heading.clear();
    m_summary.clear();
    m_fields.clear();
    m_sections.clear();
    m_sectionTitles.clear();
    m_peers.clear();
    m_peerLabels.clear();
    m_prev->setEnabled(false);
    m_next->setEnabled(false);
    m_zoom->setEnabled(false);
    m_view->setHtml(tr("<p style='color:%1'>Click a kernel in the timeline to see its details.</p>")
                        .arg(dimmedText(palette()).name()));
}

QString DetailsPanel::field(const QString& label) const
{
    for (const auto& f : m_fields)
        if (f.first == label)
            return f.second;
    return {};
}

void DetailsPanel::add(const QString& label, const QString& value)
{
    m_fields.append({ label, value });
}

void DetailsPanel::section(const QString& title)
{
    m_sections.append(int(m_fields.size()));
    m_sectionTitles.append(title);
}

void DetailsPanel::render()
{
    QString html
        = QStringLiteral("<h3 style='margin-bottom:4px'>%1</h3>").arg(withNameBreaks(m_heading, true).toHtmlEscaped());
    if (!m_summary.isEmpty()) // the answer to "why is this kernel long", above the long classification list
        html += QStringLiteral("<p style='margin-top:0'>%1</p>").arg(m_summary.toHtmlEscaped());
    html += QStringLiteral("<table cellspacing='0' cellpadding='2'>");
    // Labels are dimmed, but readable on a light and a dark palette alike.
    const QString labelColour = dimmedText(palette()).name();
    int s = 0;
    for (int i = 0; i < m_fields.size(); ++i) {
        while (s < m_sections.size() && m_sections[s] == i) {
            html += QStringLiteral("<tr><td colspan='2' style='padding-top:8px'><b>%1</b></td></tr>")
                        .arg(m_sectionTitles[s].toHtmlEscaped());
            ++s;
        }
        const QString& label = m_fields[i].first;
        const bool name = label == tr("Name") || label == tr("Full name") || label == tr("Longest");
        if (label == tr("Name") && m_fields[i].second == m_heading)
            continue; // the heading says it: a name is printed once
        const QString value = withNameBreaks(m_fields[i].second, name).toHtmlEscaped();
        if (name) {
            // Kernel names get the panel's whole width (under their label), so they rarely need to wrap.
            // (Outside the table: a spanning cell would widen the label column of every other row.)
            html += QStringLiteral("</table><p style='margin-top:2px;margin-bottom:0px;margin-left:2px;color:%2'>%1</p>"
                                   "<p style='margin-top:0px;margin-bottom:2px;margin-left:12px'>%3</p>"
                                   "<table cellspacing='0' cellpadding='2'>")
                        .arg(label.toHtmlEscaped(), labelColour, value);
            continue;
        }
        html += QStringLiteral("<tr><td style='color:%3;padding-right:10px' valign='top'>%1</td><td>%2</td></tr>")
                    .arg(label.toHtmlEscaped(), value, labelColour);
    }
    html += QStringLiteral("</table>");
    if (!m_peers.isEmpty()) {
        html += QStringLiteral("<p style='margin-top:6px'>%1 ").arg(tr("Same collective on:").toHtmlEscaped());
        for (int i = 0; i < m_peers.size(); ++i)
            html += QStringLiteral("%1<a href='peer:%2'>%3</a>")
                        .arg(i ? QStringLiteral(" · ") : QString())
                        .arg(i)
                        .arg(m_peerLabels.value(i).toHtmlEscaped());
        html += QStringLiteral("</p>");
    }
    m_view->setHtml(html);
}

void DetailsPanel::showInterval(const Trace& trace, const Analysis* analysis, const ViewIndex* index, IntervalRef ref,
    const CollectiveMatch* collectives)
{
    clear();
    const Subject s = subject(trace, analysis, index, ref, collectives);
    m_heading = s.display;
    addIdentity(s);
    addCommunication(s);
    addProfilerArgs(s);
    addPhase(s);
    addPlacement(s);
    addLaunch(s);
    addTiming(s);
    addAcrossRanks(s);
    addLaunchParameters(s);
    addInstances(s);
    render();
    m_prev->setEnabled(true);
    m_next->setEnabled(true);
    m_zoom->setEnabled(true);
}

DetailsPanel::Subject DetailsPanel::subject(const Trace& trace, const Analysis* analysis, const ViewIndex* index,
    IntervalRef ref, const CollectiveMatch* collectives)
{
    const Lane& l = trace.ranks.at(std::size_t(ref.rank)).lanes.at(std::size_t(ref.lane));
    const StringId id = l.intervals.name(ref.interval);
    const NameClass* nc = analysis && id < analysis->names.size() ? &analysis->names[id] : nullptr;
    return Subject { trace, analysis, index, collectives, ref, l, id, nc, categoryOf(trace, analysis, id),
        QString::fromStdString(displayName(trace, analysis, id)) };
}

void DetailsPanel::addIdentity(const Subject& s)
{
    // A CPU lane holds regions (functions, annotations), a GPU stream kernels and copies.
    section(!s.lane.isGpu() ? tr("Region") : s.category == Category::Memcpy ? tr("Copy") : tr("Kernel"));
    add(tr("Name"), s.display);
    const StringId canon = s.id < s.trace.canonicalNames.size() ? s.trace.canonicalNames[s.id] : s.id;
    if (const QString full = QString::fromStdString(s.trace.name(canon)); full != s.display)
        add(tr("Full name"), full); // the mangled name, where it differs
    // A name that was not valid UTF-8 in the trace is shown decoded (U+FFFD for each bad sequence); its bytes here.
    const std::string* raw
        = s.trace.strings.rawBytes(canon) ? s.trace.strings.rawBytes(canon) : s.trace.strings.rawBytes(s.id);
    if (raw)
        add(tr("Raw bytes"), QString::fromStdString(escapedBytes(*raw)));
    add(tr("Category"), categoryLabel(s.category));
    if (s.nc && !s.nc->subgroup.empty())
        add(tr("Sub-group"), QString::fromStdString(s.nc->subgroup));
    if (s.nc && s.nc->unclassified)
        add(tr("Classification"), tr("unclassified (only a catch-all rule matched)"));
    if (s.nc && s.nc->rule >= 0 && std::size_t(s.nc->rule) < s.analysis->rules.rules().size())
        add(tr("Rule"), QString::fromStdString(s.analysis->rules.rules()[std::size_t(s.nc->rule)].id));
}

void DetailsPanel::addCommunication(const Subject& s)
{
    if (s.category != Category::Communication || !s.nc)
        return;
    const NameClass& nc = *s.nc;
    // The operation the program called, which the kernel's name does not always say: "all_reduce
    // (nccl:all_reduce), runs as a send_recv kernel".
    CommOpSource source = CommOpSource::KernelName;
    std::string call;
    const std::string op = commOpOf(s.trace, *s.analysis, s.ref, &source, &call);
    const std::string kernelType = kernelNameOp(s.trace, *s.analysis, s.id);
    QString opText = QString::fromStdString(op);
    if (!call.empty())
        opText += QStringLiteral(" (%1)").arg(QString::fromStdString(call));
    if (!kernelType.empty() && kernelType != op)
        opText += tr(", runs as a %1 kernel").arg(QString::fromStdString(kernelType));
    add(tr("Operation"), opText);
    const CollectiveArgs* args = collectiveArgsOf(s.trace, s.lane, s.ref.interval);
    const std::string role = s.lane.commRole != CommRole::None ? std::string(commRoleName(s.lane.commRole))
                                                               : roleOfGroupInJob(s.trace, s.analysis->rules, args);
    if (role != "unknown")
        add(tr("Parallelism role"), QString::fromStdString(role));
    if (!nc.collective.empty())
        add(tr("Collective"), QString::fromStdString(nc.collective));
    if (!nc.algorithm.empty())
        add(tr("Algorithm"), QString::fromStdString(nc.algorithm));
    if (!nc.protocol.empty())
        add(tr("Protocol"), QString::fromStdString(nc.protocol));
    if (!nc.dataType.empty())
        add(tr("Data type"), QString::fromStdString(nc.dataType));
    if (!nc.reduction.empty())
        add(tr("Reduction"), QString::fromStdString(nc.reduction));
}

void DetailsPanel::addProfilerArgs(const Subject& s)
{
    // What torch.profiler recorded about the collective: message, process group, and the bus bandwidth it reached.
    if (!s.lane.isGpu())
        return;
    const auto& args = s.lane.collectiveArgs;
    auto it = std::lower_bound(args.begin(), args.end(), std::make_pair(s.ref.interval, 0u));
    if (it == args.end() || it->first != s.ref.interval || it->second >= s.trace.collectiveArgs.size())
        return;
    const CollectiveArgs& ca = s.trace.collectiveArgs[it->second];
    add(tr("Collective (profiler)"), QString::fromStdString(ca.collective));
    if (ca.inElements > 0 || ca.outElements > 0) // 0 / 0: the profiler did not record them
        add(tr("Elements in / out"),
            QStringLiteral("%1 / %2").arg(groupDigits(ca.inElements), groupDigits(ca.outElements)));
    if (!ca.dtype.empty())
        add(tr("Element type"), QString::fromStdString(ca.dtype));
    if (const std::uint64_t bytes = collectiveBytes(ca))
        add(tr("Message size"), byteCountText(bytes, true));
    if (ca.groupSize > 0)
        add(tr("Process group"),
            tr("%1, %2 ranks %3")
                .arg(QString::fromStdString(ca.processGroup))
                .arg(ca.groupSize)
                .arg(QString::fromStdString(ca.groupRanks)));
    const double seconds = double(s.lane.intervals.duration(s.ref.interval)) / 1e9;
    if (const double bw = busBandwidth(ca, seconds); bw > 0)
        add(tr("Bus bandwidth"), tr("%1 GB/s over the kernel's duration").arg(bw / 1e9, 0, 'f', 2));
    if (!s.collectives)
        return;
    const CollectiveMember* me = s.collectives->member(s.ref);
    if (me && me->transferNs > 0)
        if (const double bw = busBandwidth(ca, double(me->transferNs) / 1e9); bw > 0)
            add(tr("Bus bandwidth (transfer)"),
                tr("%1 GB/s over the transfer, after the last rank joined").arg(bw / 1e9, 0, 'f', 2));
}

void DetailsPanel::addPhase(const Subject& s)
{
    if (!s.analysis || std::size_t(s.ref.rank) >= s.analysis->ranks.size() || !s.lane.isGpu())
        return;
    const RankAnalysis& ra = s.analysis->ranks[std::size_t(s.ref.rank)];
    const auto lane = std::size_t(s.ref.lane);
    if (lane >= ra.phases.size() || s.ref.interval >= ra.phases[lane].size())
        return;
    const Phase phase = ra.phases[lane][s.ref.interval];
    add(tr("Phase"), phaseLabel(phase));
    // The rank's way of deciding phases applies to kernels whose launch is known; one without a launch record
    // got its phase from its name, or from where it lies in its step.
    const bool launched = lane < ra.launchOf.size() && s.ref.interval < ra.launchOf[lane].size()
        && ra.launchOf[lane][s.ref.interval].cpuLane != kUnknownLaunch;
    QString by;
    if (launched)
        by = QString::fromUtf8(phaseSourceName(ra.phaseSource));
    else if (phase == Phase::Unknown)
        by = tr("nothing (no launch record, and neither its name nor its place in a step tells)");
    else if (s.nc && s.nc->namePhase == phase)
        by = tr("kernel name (no launch record)");
    else
        by = tr("heuristic: its place in the step (no launch record)");
    add(tr("Phase decided by"), by);
}

void DetailsPanel::addPlacement(const Subject& s)
{
    const Rank& r = s.trace.ranks[std::size_t(s.ref.rank)];
    const Lane& l = s.lane;
    section(tr("Where"));
    add(tr("Rank"), QString::fromStdString(r.label));
    if (!r.host.empty()) // where the trace names it
        add(tr("Host"), QString::fromStdString(r.host));
    if (l.device >= 0)
        add(tr("Device"), QString::number(l.device));
    add(l.isGpu() ? tr("Stream") : tr("Thread"),
        QString::fromStdString(l.name)
            + (l.isGpu() && l.stream >= 0 ? QStringLiteral(" (stream %1)").arg(l.stream) : QString()));
    if (!l.isGpu())
        add(tr("Nesting depth"), QString::number(l.intervals.depth(s.ref.interval)));
    if (s.analysis && l.isGpu()) {
        const int step = stepOfInterval(s.trace, *s.analysis, s.ref);
        const auto& steps = std::size_t(s.ref.rank) < s.analysis->ranks.size()
            ? s.analysis->ranks[std::size_t(s.ref.rank)].steps
            : std::vector<StepWindow> {};
        add(tr("Step"),
            step >= 0 && std::size_t(step) < steps.size() ? QString::fromStdString(steps[std::size_t(step)].name)
                                                          : tr("none"));
    }
}

void DetailsPanel::addLaunch(const Subject& s)
{
    if (!s.analysis || !s.lane.isGpu())
        return;
    section(tr("Launch"));
    for (const auto& [label, value] : launchTopic(s.trace, *s.analysis, s.ref))
        add(label, value);
}

void DetailsPanel::addTiming(const Subject& s)
{
    const IntervalTable& t = s.lane.intervals;
    section(tr("Timing"));
    const TimeNs dur = t.duration(s.ref.interval);
    add(tr("Start"), nsAndUnit(t.start(s.ref.interval)));
    add(tr("End"), nsAndUnit(t.end(s.ref.interval)));
    add(tr("Duration"), nsAndUnit(dur));
    if (s.analysis && s.category == Category::Communication) {
        const InstanceOverlap ov = instanceOverlap(s.trace, *s.analysis, s.ref);
        add(tr("Hidden"), partOf(ov.hiddenNs, dur));
        add(tr("Exposed"), partOf(ov.exposedNs, dur));
    }
}

void DetailsPanel::addAcrossRanks(const Subject& s)
{
    if (!s.collectives || s.category != Category::Communication || !s.lane.isGpu())
        return;
    section(tr("Across ranks"));
    const TimeNs dur = s.lane.intervals.duration(s.ref.interval);
    const CollectiveGroup* g = s.collectives->groupOf(s.ref);
    const CollectiveMember* me = s.collectives->member(s.ref);
    if (!g || !me) {
        add(tr("Peers"),
            s.trace.ranks.size() > 1 ? tr("no matching instance on other ranks")
                                     : tr("single-rank trace: no peers to wait for"));
        return;
    }
    const int rank = s.ref.rank;
    add(tr("Ranks in collective"), QString::number(g->members.size()));
    if (me && me->queuedNs > 0)
        add(tr("Queued"),
            tr("%1 behind %2 of the same communicator on another stream (neither waiting for a peer nor transfer)")
                .arg(durationText(me->queuedNs))
                .arg(me->behind < s.collectives->keys.size() ? QString::fromStdString(s.collectives->keys[me->behind])
                                                             : tr("another operation")));
    add(tr("Waiting for peers"), partOf(me->waitNs, dur));
    add(tr("Transfer"), partOf(me->transferNs, dur));
    auto labelOf = [&](int r) {
        return r >= 0 && std::size_t(r) < s.trace.ranks.size()
            ? QString::fromStdString(s.trace.ranks[std::size_t(r)].label)
            : QString::number(r);
    };
    const QString lastLabel = g->lastRank >= 0 ? labelOf(g->lastRank) : tr("?");
    if (g->lastRank == rank) {
        TimeNs firstStart = me->start;
        for (const auto& m : g->members)
            firstStart = std::min(firstStart, m.start);
        add(tr("Arrived last"),
            tr("this rank (%1), %2 after the first rank; the others waited for it")
                .arg(lastLabel, durationText(me->start - firstStart)));
    } else {
        add(tr("Arrived last"),
            tr("%1 arrived last, %2 after this rank").arg(lastLabel, durationText(g->lastArrival - me->start)));
    }
    m_summary = tr("Waiting for peers %1 (%2) · transfer %3 · %4 arrived last")
                    .arg(durationText(me->waitNs), percent(me->waitNs, dur), durationText(me->transferNs),
                        g->lastRank == rank ? tr("this rank") : lastLabel);
    if (g->processGroup < s.collectives->processGroups.size()) {
        const ProcessGroupMatch& pg = s.collectives->processGroups[g->processGroup];
        add(tr("Matched by"),
            pg.method == MatchMethod::Time
                ? tr("kernel name and end time (no process group or stream known)")
                : tr("%1 %2: collective %3 of its order")
                      .arg(pg.method == MatchMethod::ProcessGroup ? tr("process group") : tr("NCCL"),
                          QString::fromStdString(pg.name + (pg.ranks.empty() ? "" : " " + pg.ranks)))
                      .arg(g->ordinal + 1));
    }
    if (s.collectives->multipleHosts && !s.trace.clocks.applied)
        add(tr("Note"), tr("ranks on several hosts, clocks as recorded"));
    for (const auto& m : g->members) {
        if (m.rank == rank)
            continue;
        m_peers.append({ m.rank, m.lane, m.interval });
        m_peerLabels.append(tr("%1 (waited %2)").arg(labelOf(m.rank), durationText(m.waitNs)));
    }
}

void DetailsPanel::addLaunchParameters(const Subject& s)
{
    // Only what the trace recorded: a parameter the measurement did not fill in stays out.
    const Lane& l = s.lane;
    const std::uint32_t i = s.ref.interval;
    if (i >= l.launchParamIds.size() || l.launchParamIds[i] == kNoLaunchParams
        || l.launchParamIds[i] >= s.trace.launchParams.size())
        return;
    const KernelLaunchParams& p = s.trace.launchParams[l.launchParamIds[i]];
    section(tr("Launch parameters"));
    // "320 × 1 × 1 (320 blocks)" where the shape is recorded, else the count.
    auto shape = [](const std::array<std::uint32_t, 3>& d, std::uint64_t count, const QString& unit) {
        const QString n = QStringLiteral("%1 %2").arg(groupDigits(count), unit);
        if (d[0] == 0)
            return n;
        return QStringLiteral("%1 × %2 × %3 (%4)").arg(d[0]).arg(d[1]).arg(d[2]).arg(n);
    };
    if (p.blocksPerGrid > 0)
        add(tr("Grid"), shape(p.grid, p.blocksPerGrid, tr("blocks")));
    if (p.threadsPerBlock > 0)
        add(tr("Block"), shape(p.block, p.threadsPerBlock, tr("threads")));
    if (p.registersPerThread > 0)
        add(tr("Registers per thread"), QString::number(p.registersPerThread));
    if (p.sharedMemory > 0)
        add(tr("Shared memory"), byteCountText(p.sharedMemory, true));
    if (p.staticSharedMemory > 0)
        add(tr("Static shared memory"), byteCountText(p.staticSharedMemory, true));
    if (p.dynamicSharedMemory > 0)
        add(tr("Dynamic shared memory"), byteCountText(p.dynamicSharedMemory, true));
    if (p.localMemory > 0)
        add(tr("Local memory"), byteCountText(p.localMemory, true));
    if (p.occupancyPercent >= 0)
        add(tr("Estimated occupancy"), tr("%1 % (torch.profiler's estimate)").arg(p.occupancyPercent));
}

void DetailsPanel::addInstances(const Subject& s)
{
    if (!s.index || s.id >= s.index->nameStats.size() || s.index->nameStats[s.id].count == 0)
        return;
    const NameStats& st = s.index->nameStats[s.id];
    section(tr("All instances (all ranks)"));
    add(tr("Count"), groupDigits(st.count));
    add(tr("Total"), durationText(st.total));
    add(tr("Mean"), durationText(TimeNs(std::llround(double(st.total) / double(st.count)))));
    add(tr("Min"), durationText(st.min));
    add(tr("Max"), durationText(st.max));
}

void DetailsPanel::showFold(const Trace& trace, const Analysis* analysis, const ViewIndex* index,
    const TimelineHit& hit, const FoldComposition& composition, const CollectiveMatch* collectives)
{
    showInterval(trace, analysis, index, { hit.rank, hit.lane, hit.largest }, collectives);
    const bool cpu = !trace.ranks[hit.rank].lanes[hit.lane].isGpu();
    const QString things = cpu ? tr("regions") : tr("kernels");
    const auto& t = trace.ranks[hit.rank].lanes[hit.lane].intervals;
    const QString name = m_heading;
    const TimeNs span = std::max<TimeNs>(1, composition.span);
    auto percent = [&](TimeNs ns) -> QString {
        return QString::number(100.0 * double(ns) / double(span), 'f', 1) + QStringLiteral(" %");
    };
    m_heading = composition.classes.empty()
        ? tr("%1 %2").arg(groupDigits(hit.count), things)
        : tr("%1 %2, mostly %3").arg(groupDigits(hit.count), things, composition.dominant());
    QList<QPair<QString, QString>> foldFields = {
        { tr("Folded block"), tr("%1 %2 narrower than %3 px each").arg(groupDigits(hit.count), things).arg(2) },
        { tr("Block span"),
            QStringLiteral("%1 – %2 (%3)")
                .arg(durationText(hit.start), durationText(hit.end), durationText(hit.end - hit.start)) },
        { tr("Busy"), QStringLiteral("%1 (%2)").arg(percent(composition.busy), durationText(composition.busy)) },
    };
    for (const auto& [label, ns] : composition.classes)
        foldFields.append(
            { QStringLiteral("  ") + label, QStringLiteral("%1 (%2)").arg(percent(ns), durationText(ns)) });
    foldFields.append({ tr("Longest"), QStringLiteral("%1 (%2)").arg(name, durationText(t.duration(hit.largest))) });
    for (int i = 0; i < m_sections.size(); ++i)
        m_sections[i] += int(foldFields.size());
    m_sections.prepend(0);
    m_sectionTitles.prepend(tr("Fold (zoom in to separate)"));
    m_fields = foldFields + m_fields;
    render();
}

} // namespace exposure
