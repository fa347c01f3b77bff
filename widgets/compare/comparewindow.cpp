// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare/comparewindow.h"

#include "common/theme.h"
#include "model/timeformat.h"
#include "run/openrun.h"
#include "timeline/palette.h"

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace exposure {

namespace {

QString duration(TimeNs ns)
{
    return CompareChart::durationLabel(ns);
}

QString percent(std::optional<double> v)
{
    return CompareChart::shareLabel(v);
}

std::optional<double> exposedShare(const RunSummary& s)
{
    return s.stepNs > 0 ? std::optional<double>(double(s.exposedNs) / double(s.stepNs)) : std::nullopt;
}

// A readable run name: the folder of an anchor file (Score-P names every anchor traces.otf2), else the last
// path component.
QString runName(const QString& path)
{
    QString p = QDir::cleanPath(path);
    QFileInfo info(p);
    if (info.suffix() == QLatin1String("otf2"))
        return info.dir().dirName() + QLatin1Char('/') + info.fileName();
    return info.fileName().isEmpty() ? p : info.fileName();
}

// The folder that holds a run and its siblings: a run folder's parent; for an anchor file (run/traces.otf2) the
// parent of its archive folder; for a torch.profiler file its folder.
QString siblingFolder(const QString& path)
{
    const QFileInfo info(QDir::cleanPath(path));
    if (info.suffix() == QLatin1String("otf2"))
        return QFileInfo(info.absolutePath()).absolutePath();
    return info.absolutePath(); // a folder's parent, a file's folder
}

QString csvField(const QString& s)
{
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')))
        return s;
    QString q = s;
    q.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------
// CompareWindow

namespace {

// Two widgets side by side (or one over the other) with these stretch factors and first sizes; never collapsed.
QSplitter* splitter(Qt::Orientation orientation, QWidget* first, QWidget* second, std::pair<int, int> stretch,
    QList<int> sizes, QWidget* parent)
{
    auto* split = new QSplitter(orientation, parent);
    split->addWidget(first);
    split->addWidget(second);
    split->setStretchFactor(0, stretch.first);
    split->setStretchFactor(1, stretch.second);
    split->setSizes(sizes);
    split->setChildrenCollapsible(false);
    return split;
}

} // namespace

struct CompareWindow::JobResult
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    std::optional<RunSummary> summary;
    QString error;
    int skipSteps = 0; // the value the summary was made with
};

CompareWindow::CompareWindow(QWidget* parent)
    : QDialog(parent)
    , m_list(new QListWidget(this))
    , m_model(new TableModel(columnTitles(), this))
    , m_table(new QTableView(this))
    , m_chart(new CompareChart(this))
    , m_skip(new QSpinBox(this))
    , m_caption(new QLabel(this))
    , m_finding(new QLabel(this))
    , m_errors(new QLabel(this))
    , m_remove(new QPushButton(tr("&Remove"), this))
    , m_up(new QPushButton(tr("Move &Up"), this))
    , m_down(new QPushButton(tr("Move &Down"), this))
    , m_copyCsv(new QPushButton(tr("&Copy as CSV"), this))
    , m_saveCsv(new QPushButton(tr("Save C&SV…"), this))
    , m_saveJson(new QPushButton(tr("Save &JSON…"), this))
{
    setWindowTitle(tr("Compare Runs — Exposure"));
    setModal(false);
    setSizeGripEnabled(true);
    setAcceptDrops(true);
    // A tool window of its own, with minimise/maximise, not a transient message box.
    setWindowFlags(Qt::Window | Qt::WindowTitleHint | Qt::WindowSystemMenuHint | Qt::WindowMinMaxButtonsHint
        | Qt::WindowCloseButtonHint);

    auto* left = buildRunList();
    setUpTable();
    auto* rightSplit = buildTableAndChart();
    auto* split = splitter(Qt::Horizontal, left, rightSplit, { 0, 1 }, { 200, 1080 }, this);

    auto* close = new QPushButton(tr("Close"), this);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_copyCsv);
    bottom->addWidget(m_saveCsv);
    bottom->addWidget(m_saveJson);
    bottom->addStretch(1);
    bottom->addWidget(close);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addLayout(bottom);

    connect(close, &QPushButton::clicked, this, &QWidget::close);
    connectButtons();

    // Wide enough for every number column next to the run list.
    resize(1400, 820);
    refresh();
}

// Left: the runs, in order; the first is the baseline.
QWidget* CompareWindow::buildRunList()
{
    auto* addFile = new QPushButton(QIcon::fromTheme(QStringLiteral("list-add")), tr("&Add Run…"), this);
    addFile->setToolTip(
        tr("Add a run: an OTF2 anchor file (traces.otf2), a torch.profiler or Chrome trace (.json, .json.gz) or "
           "an Nsight Systems report (.sqlite, .nsys-rep)"));
    auto* addFolder = new QPushButton(tr("Add &Folder…"), this);
    addFolder->setToolTip(tr("Add a run: a folder holding one OTF2 archive per rank"));
    m_list->setMinimumWidth(150);
    m_list->setTextElideMode(Qt::ElideMiddle);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setToolTip(tr("Runs to compare. The first run is the baseline of the scaling efficiency.\n"
                          "Folders and anchor files can also be dropped on this window."));
    auto* runsBox = new QVBoxLayout;
    auto* runsTitle = new QLabel(tr("<b>Runs</b> by GPU count (the first is the baseline)"), this);
    runsTitle->setWordWrap(true);
    runsBox->addWidget(runsTitle);
    runsBox->addWidget(m_list, 1);
    auto* runButtons = new QGridLayout;
    runButtons->addWidget(addFile, 0, 0);
    runButtons->addWidget(addFolder, 0, 1);
    runButtons->addWidget(m_up, 1, 0);
    runButtons->addWidget(m_down, 1, 1);
    runButtons->addWidget(m_remove, 2, 0, 1, 2);
    runsBox->addLayout(runButtons);
    auto* skipRow = new QHBoxLayout;
    auto* skipLabel = new QLabel(tr("Skip first steps:"), this);
    skipLabel->setBuddy(m_skip);
    // -1 (shown as "start-up"): the start-up rule of exposure-cli stats and compare (analysis/stepmean.h).
    m_skip->setRange(-1, 1000);
    m_skip->setSpecialValueText(tr("start-up"));
    m_skip->setValue(-1);
    m_skip->setToolTip(tr("start-up: leave out each rank's first step when it lasts more than %1x the median of its\n"
                          "later steps, then the next likewise (the rule of 'exposure-cli stats' and 'compare').\n"
                          "N: leave out exactly each rank's first N steps (as long as one step remains);\n"
                          "the same as 'exposure-cli compare --skip-steps N'.")
                           .arg(kStartupFactor));
    skipRow->addWidget(skipLabel);
    skipRow->addWidget(m_skip);
    skipRow->addStretch(1);
    runsBox->addLayout(skipRow);
    auto* left = new QWidget(this);
    left->setLayout(runsBox);
    runsBox->setContentsMargins(0, 0, 0, 0);

    connect(addFile, &QPushButton::clicked, this, [this] { addDialog(false); });
    connect(addFolder, &QPushButton::clicked, this, [this] { addDialog(true); });
    return left;
}

// The table: one row per run, sortable, with a tooltip per column.
void CompareWindow::setUpTable()
{
    // Numbers sort by their value (TableModel::SortRole), so "812 µs" sorts below "1.2 ms"; rows without a value
    // (failed, loading) go last in ascending order.
    m_table->setModel(m_model);
    const QString tips[ColCount] = { tr("Run (hover for the full path)"), tr("Number of ranks (GPUs)"),
        tr("(rank, step) pairs averaged over; '-' when no steps were found (whole trace per rank).\n"
           "Hover a run's name for the steps its means cover."),
        tr("Mean wall-clock step time"), tr("Mean time per step during which compute kernels run"),
        tr("Mean time per step during which at least one communication kernel runs"),
        tr("Communication overlapped by compute"),
        tr("Communication with no compute running: the GPU waits for the network"), tr("Hidden / communication busy"),
        tr("Exposed communication as a share of the step time"),
        tr("NCCL time spent waiting for the last peer to join a collective (per step)"),
        tr("NCCL time with all peers present (per step)"),
        tr("Weak-scaling efficiency: the baseline's step time / this run's step time.\n"
           "Needs a different GPU count than the baseline and the same per-GPU workload."),
        tr("Loading state, or what went wrong") };
    for (int c = 0; c < ColCount; ++c)
        m_model->setColumnToolTip(c, tips[c]);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Long run names (Score-P folders carry dates) must not push the efficiency out of view: the Run column is
    // sized to its contents up to a limit and elides in the middle, the full path is its tooltip.
    m_table->horizontalHeader()->setSectionResizeMode(ColRun, QHeaderView::Interactive);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->setSortingEnabled(true);
    m_table->horizontalHeader()->setSortIndicatorShown(true);
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
}

// Right: the table (with the errors and the caption) over the chart.
QWidget* CompareWindow::buildTableAndChart()
{
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::PlainText);
    m_caption->setForegroundRole(QPalette::PlaceholderText);
    m_caption->setText(tr("Per-step means over all ranks, start-up steps left out. Hidden = communication overlapped "
                          "by compute; exposed = communication with no compute running; waiting / transfer = NCCL "
                          "time before / after the last rank joined each collective. Efficiency compares runs with "
                          "different GPU counts and the same per-GPU workload."));

    auto* chartTitle = new QLabel(tr("<b>Where the step time goes</b> (mean step, all ranks)"), this);
    auto* chartBox = new QWidget(this);
    auto* chartLayout = new QVBoxLayout(chartBox);
    chartLayout->setContentsMargins(0, 6, 0, 0);
    chartLayout->addWidget(chartTitle);
    // The chart keeps the height its bars need and the finding sits right under it, whatever the window height.
    m_chart->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    chartLayout->addWidget(m_chart);
    m_finding->setWordWrap(true);
    m_finding->setTextFormat(Qt::PlainText);
    m_finding->setTextInteractionFlags(Qt::TextSelectableByMouse);
    chartLayout->addWidget(m_finding);
    chartLayout->addStretch(1);
    auto* tableBox = new QWidget(this);
    auto* tableLayout = new QVBoxLayout(tableBox);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    tableLayout->addWidget(m_table, 1);
    // Errors in plain sight too: the Status column may be scrolled out of view when run names are long.
    m_errors->setWordWrap(true);
    m_errors->setTextFormat(Qt::PlainText);
    m_errors->setTextInteractionFlags(Qt::TextSelectableByMouse);
    {
        QPalette errPal = m_errors->palette();
        errPal.setColor(QPalette::WindowText, readableOn(QColor(0xC0, 0x20, 0x20), errPal.color(QPalette::Window)));
        m_errors->setPalette(errPal);
    }
    tableLayout->addWidget(m_errors);
    tableLayout->addWidget(m_caption);
    auto* rightSplit = splitter(Qt::Vertical, tableBox, chartBox, { 1, 2 }, { 230, 470 }, this);

    return rightSplit;
}

void CompareWindow::connectButtons()
{
    connect(m_remove, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        removeRun(row);
        m_list->setCurrentRow(std::min(row, runCount() - 1));
    });
    connect(m_up, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        moveRun(row, row - 1);
    });
    connect(m_down, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        moveRun(row, row + 1);
    });
    connect(m_list, &QListWidget::currentRowChanged, this, &CompareWindow::updateButtons);
    connect(m_skip, qOverload<int>(&QSpinBox::valueChanged), this, [this] {
        for (auto& run : m_runs)
            if (run->trace && run->analysis)
                startJob(*run);
        refresh();
    });
    connect(m_copyCsv, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(csv()); });
    connect(m_saveCsv, &QPushButton::clicked, this, [this] { saveDialog(false); });
    connect(m_saveJson, &QPushButton::clicked, this, [this] { saveDialog(true); });
}

CompareWindow::~CompareWindow()
{
    // Every run's JobSlot is a child: cancelled here, it waits for its job when it is destroyed.
    for (auto& run : m_runs)
        if (run->job)
            run->job->cancel();
}

QStringList CompareWindow::columnTitles()
{
    // Two-line titles keep the thirteen number columns readable without scrolling sideways.
    return { tr("Run"), tr("Ranks"), tr("Steps\nused"), tr("Step\ntime"), tr("Compute"), tr("Comm.\nbusy"),
        tr("Hidden"), tr("Exposed"), tr("Overlap"), tr("Exposed\n/ step"), tr("NCCL\nwaiting"), tr("NCCL\ntransfer"),
        tr("Efficiency"), tr("Status") };
}

void CompareWindow::addRun(const QString& path)
{
    auto run = std::make_unique<Run>();
    run->id = m_nextId++;
    run->path = path;
    run->name = runName(path);
    startJob(*run);
    m_runs.push_back(std::move(run));
    refresh();
}

void CompareWindow::addLoadedRun(
    const QString& path, std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    if (!trace || !analysis) {
        addRun(path);
        return;
    }
    auto run = std::make_unique<Run>();
    run->id = m_nextId++;
    run->path = path;
    run->name = runName(path);
    run->trace = std::move(trace);
    run->analysis = std::move(analysis);
    startJob(*run);
    m_runs.push_back(std::move(run));
    refresh();
}

void CompareWindow::removeRun(int index)
{
    if (index < 0 || index >= runCount())
        return;
    if (JobSlot* job = m_runs[std::size_t(index)]->job) {
        job->cancel();
        job->deleteLater();
    }
    m_runs.erase(m_runs.begin() + index);
    refresh();
}

void CompareWindow::moveRun(int from, int to)
{
    if (from < 0 || to < 0 || from >= runCount() || to >= runCount() || from == to)
        return;
    auto run = std::move(m_runs[std::size_t(from)]);
    m_runs.erase(m_runs.begin() + from);
    m_runs.insert(m_runs.begin() + to, std::move(run));
    refresh();
    m_list->setCurrentRow(to);
}

QString CompareWindow::runPath(int index) const
{
    return index >= 0 && index < runCount() ? m_runs[std::size_t(index)]->path : QString();
}

bool CompareWindow::isLoading() const
{
    return std::any_of(m_runs.begin(), m_runs.end(), [](const auto& r) { return r->busy; });
}

void CompareWindow::setRunOptions(RunOptions options)
{
    // What a job reports through its own JobContext, never through these.
    options.load.progress = nullptr;
    options.stageStarted = nullptr;
    options.viewIndex = false;
    options.collectives = false;
    options.analyse = true;
    m_runOptions = std::move(options);
}

void CompareWindow::setSkipSteps(int n)
{
    m_skip->setValue(n);
}

int CompareWindow::skipSteps() const
{
    return m_skip->value();
}

void CompareWindow::startJob(Run& run)
{
    if (!run.job)
        run.job = new JobSlot(this);
    run.busy = true;
    run.error.clear();
    // Everything the job needs is captured by value: it never touches the window.
    run.job->start<JobResult>(
        [path = run.path, trace = run.trace, analysis = run.analysis, skip = m_skip->value(), load = m_runOptions](
            const JobContext& job) mutable -> JobResult {
            JobResult result;
            result.skipSteps = skip;
            try {
                if (!trace) {
                    load.load.cancel = job.cancelFlag();
                    OpenedRun opened = openRun(path.toStdString(), load);
                    trace = std::move(opened.trace);
                    analysis = std::move(opened.analysis);
                }
            } catch (const LoadError& e) {
                result.error = QString::fromStdString(e.what()); // "<file>: <problem>", shown in the run's row
                return result;
            }
            if (job.cancelled())
                throw LoadCancelled();
            CompareOptions compare;
            compare.skipSteps = skip;
            result.summary = summarizeRun(*trace, *analysis, compare);
            result.trace = trace;
            result.analysis = analysis;
            return result;
        },
        [this, id = run.id](const JobResult& result) { finishJob(id, result); });
}

void CompareWindow::finishJob(quint64 id, const JobResult& result)
{
    Run* run = findRun(id);
    if (!run)
        return; // removed meanwhile
    if (result.summary && result.skipSteps != m_skip->value()) {
        // Skip-steps changed while this run was still being read: summarise again from what was loaded.
        run->trace = result.trace;
        run->analysis = result.analysis;
        startJob(*run);
        return;
    }
    run->busy = false;
    run->trace = result.trace;
    run->analysis = result.analysis;
    run->summary = result.summary;
    run->error = result.error;
    if (!run->error.isEmpty())
        run->summary.reset();
    placeByGpuCount(id);
    refresh();
}

void CompareWindow::placeByGpuCount(quint64 id)
{
    // Runs stay ordered by GPU count as they load (runs still loading or failed keep their places): a run moves
    // up before the first loaded run with more GPUs, or down after the last loaded one with fewer.
    auto at = std::find_if(m_runs.begin(), m_runs.end(), [id](const auto& r) { return r->id == id; });
    if (at == m_runs.end() || !(*at)->summary)
        return;
    const int from = int(at - m_runs.begin());
    const int gpus = (*at)->summary->ranks;
    auto loaded = [this](int i) -> const RunSummary* {
        const Run& r = *m_runs[std::size_t(i)];
        return r.summary && !r.busy ? &*r.summary : nullptr;
    };
    int to = from;
    for (int i = 0; i < from; ++i)
        if (const RunSummary* s = loaded(i); s && s->ranks > gpus) {
            to = i;
            break;
        }
    if (to == from)
        for (int i = runCount() - 1; i > from; --i)
            if (const RunSummary* s = loaded(i); s && s->ranks < gpus) {
                to = i;
                break;
            }
    if (to == from)
        return;
    auto run = std::move(m_runs[std::size_t(from)]);
    m_runs.erase(m_runs.begin() + from);
    m_runs.insert(m_runs.begin() + to, std::move(run));
}

CompareWindow::Run* CompareWindow::findRun(quint64 id)
{
    for (auto& r : m_runs)
        if (r->id == id)
            return r.get();
    return nullptr;
}

std::vector<RunSummary> CompareWindow::summaries() const
{
    std::vector<RunSummary> out;
    for (const auto& r : m_runs)
        if (r->summary && !r->busy)
            out.push_back(*r->summary);
    return out;
}

void CompareWindow::refresh()
{
    const int current = m_list->currentRow();
    m_list->clear();
    for (int i = 0; i < runCount(); ++i) {
        const Run& r = *m_runs[std::size_t(i)];
        QString text = r.name;
        if (r.busy)
            text += tr(" — loading…");
        else if (r.summary)
            text += r.summary->ranks == 1 ? tr(" — 1 GPU") : tr(" — %1 GPUs").arg(r.summary->ranks);
        else
            text += tr(" — failed");
        if (i == 0)
            text += tr(" (baseline)");
        auto* item = new QListWidgetItem(text, m_list);
        item->setToolTip(r.error.isEmpty() ? r.path : r.error);
        if (!r.error.isEmpty()) {
            item->setIcon(QIcon::fromTheme(QStringLiteral("dialog-error")));
            item->setForeground(readableOn(QColor(0xC0, 0x20, 0x20), m_list->palette().color(QPalette::Base)));
        }
    }
    m_list->setCurrentRow(std::min(current, runCount() - 1));
    fillTable();

    std::vector<CompareChart::Bar> bars;
    for (const auto& r : m_runs)
        if (r->summary && !r->busy)
            bars.push_back({ r->summary->ranks == 1 ? tr("%1 · 1 GPU").arg(r->name)
                                                    : tr("%1 · %2 GPUs").arg(r->name).arg(r->summary->ranks),
                *r->summary });
    m_chart->setBars(std::move(bars));
    m_errors->setText(errorText());
    m_errors->setVisible(!m_errors->text().isEmpty());
    m_finding->setText(finding());
    m_finding->setVisible(!m_finding->text().isEmpty());
    updateButtons();
    emit runsChanged();
}

QString CompareWindow::errorText() const
{
    QStringList lines;
    for (const auto& r : m_runs)
        if (!r->busy && !r->error.isEmpty())
            lines << r->error;
    return lines.join(QLatin1Char('\n'));
}

QString CompareWindow::finding() const
{
    const auto loaded = summaries();
    if (loaded.size() < 2)
        return {};
    const RunSummary& a = loaded.front();
    const RunSummary* largest = &loaded.back();
    for (const auto& r : loaded)
        if (r.ranks >= largest->ranks)
            largest = &r;
    const RunSummary& b = *largest;
    auto gpus = [](int n) { return n == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(n); };
    if (a.ranks == b.ranks)
        return tr("Every run has %1: step time %2 (baseline) → %3. Scaling efficiency needs runs with different GPU "
                  "counts (and the same per-GPU workload).")
            .arg(gpus(a.ranks), duration(a.stepNs), duration(b.stepNs));
    return tr("From %1 to %2: step time %3 → %4 (efficiency %5); exposed communication %6 → %7 per step "
              "(%8 → %9 of the step).")
        .arg(gpus(a.ranks), gpus(b.ranks), duration(a.stepNs), duration(b.stepNs), percent(weakScalingEfficiency(a, b)),
            duration(a.exposedNs), duration(b.exposedNs), percent(exposedShare(a)), percent(exposedShare(b)));
}

void CompareWindow::fillTable()
{
    m_table->setSortingEnabled(false);
    std::vector<TableModel::Row> rows(static_cast<std::size_t>(runCount()), TableModel::Row(ColCount));
    const auto loaded = summaries();
    const RunSummary* base = loaded.empty() ? nullptr : &loaded.front();
    const Run* baseRun = nullptr; // the run whose summary is `base`
    for (const auto& r : m_runs)
        if (!baseRun && r->summary && !r->busy)
            baseRun = r.get();
    const QColor errorColour = readableOn(QColor(0xC0, 0x20, 0x20), m_table->palette().color(QPalette::Base));
    for (int row = 0; row < runCount(); ++row) {
        const Run& r = *m_runs[std::size_t(row)];
        TableModel::Row& cells = rows[std::size_t(row)];
        auto set = [&](int col, const QString& text, std::optional<double> key, Qt::Alignment align) -> TableCell& {
            TableCell& cell = cells[std::size_t(col)];
            cell.text = text;
            if (key)
                cell.sortKey = *key;
            cell.alignment = align | Qt::AlignVCenter;
            return cell;
        };
        TableCell& nameItem = set(ColRun, r.name, double(row), Qt::AlignLeft);
        nameItem.toolTip = r.path;
        nameItem.bold = row == 0;
        if (r.busy) {
            set(ColStatus, tr("loading…"), std::nullopt, Qt::AlignLeft);
            continue;
        }
        if (!r.summary) {
            TableCell& item = set(ColStatus, r.error, std::nullopt, Qt::AlignLeft);
            item.foreground = errorColour;
            item.toolTip = r.error;
            item.icon = QIcon::fromTheme(QStringLiteral("dialog-error"));
            nameItem.foreground = errorColour;
            continue;
        }
        const RunSummary& s = *r.summary;
        const Qt::Alignment num = Qt::AlignRight;
        set(ColRanks, QString::number(s.ranks), double(s.ranks), num);
        set(ColSteps, s.stepsUsed > 0 ? QString::number(s.stepsUsed) : QStringLiteral("-"), double(s.stepsUsed), num);
        set(ColStep, duration(s.stepNs), double(s.stepNs), num);
        set(ColCompute, duration(s.computeNs), double(s.computeNs), num);
        set(ColCommBusy, duration(s.commBusyNs), double(s.commBusyNs), num);
        set(ColHidden, duration(s.hiddenNs), double(s.hiddenNs), num);
        TableCell& exposed = set(ColExposed, duration(s.exposedNs), double(s.exposedNs), num);
        if (s.worstExposedRank >= 0 && s.ranks > 1)
            exposed.toolTip
                = tr("Worst rank: %1 with %2 exposed per step").arg(s.worstExposedRank).arg(duration(s.worstExposedNs));
        set(ColOverlap, percent(s.overlapRatio), s.overlapRatio, num);
        set(ColExposedShare, percent(exposedShare(s)), exposedShare(s), num);
        const bool multi = s.ranks > 1;
        set(ColWaiting, multi ? duration(s.waitNs) : QStringLiteral("-"),
            multi ? std::optional<double>(double(s.waitNs)) : std::nullopt, num);
        set(ColTransfer, multi ? duration(s.transferNs) : QStringLiteral("-"),
            multi ? std::optional<double>(double(s.transferNs)) : std::nullopt, num);
        const bool isBase = base && &r == baseRun;
        const EfficiencyNote why = base ? efficiencyNote(*base, s, isBase) : EfficiencyNote::None;
        QString effText = isBase ? tr("baseline") : QStringLiteral("-");
        std::optional<double> effKey; // sorts the baseline as 100 %
        if (isBase)
            effKey = 1.0;
        if (const auto eff = base ? weakScalingEfficiency(*base, s) : std::nullopt; eff.has_value()) {
            effText = percent(*eff);
            effKey = *eff;
        }
        TableCell& effItem = set(ColEfficiency, effText, effKey, num);
        if (why != EfficiencyNote::None && !isBase)
            effItem.toolTip = tr("No efficiency: %1. Scaling efficiency compares runs with different GPU counts "
                                 "and the same per-GPU workload.")
                                  .arg(QLatin1String(efficiencyNoteText(why)));
        // Notes on a run that loaded go in the tooltip: the Status column is only shown for loading and errors.
        QString note = r.path;
        if (s.stepsUsed == 0)
            note += tr("\nNo steps found: whole trace per rank.");
        else if (s.stepSource != StepSource::None)
            note += tr("\nSteps from: %1").arg(QLatin1String(stepSourceName(s.stepSource)));
        if (!s.stepsCovered.empty())
            note += tr("\nMeans over %1 on the first rank").arg(QString::fromStdString(s.stepsCovered));
        if (s.unmatchedCollectives > 0) {
            note += tr("\n%1 collective(s) not matched across ranks.").arg(s.unmatchedCollectives);
            set(ColStatus, tr("%1 collective(s) not matched").arg(s.unmatchedCollectives), std::nullopt, Qt::AlignLeft);
        }
        nameItem.toolTip = note;
    }
    const bool anyStatus
        = std::any_of(rows.begin(), rows.end(), [](const TableModel::Row& r) { return r[ColStatus].present(); });
    m_model->setRows(std::move(rows));
    m_table->setSortingEnabled(true);
    m_table->resizeColumnToContents(ColRun);
    m_table->setColumnWidth(ColRun, std::min(m_table->columnWidth(ColRun), 180));
    m_table->setColumnHidden(ColStatus, !anyStatus);
    // The last section only stretches into free room; without room it keeps the width it had (after the reset
    // above, the default), so the status is sized to its text.
    if (anyStatus)
        m_table->resizeColumnToContents(ColStatus);
}

void CompareWindow::updateButtons()
{
    const int row = m_list->currentRow();
    m_remove->setEnabled(row >= 0);
    m_up->setEnabled(row > 0);
    m_down->setEnabled(row >= 0 && row + 1 < runCount());
    const bool any = !summaries().empty();
    m_copyCsv->setEnabled(any);
    m_saveCsv->setEnabled(any);
    m_saveJson->setEnabled(any);
}

QString CompareWindow::csv() const
{
    // Plain numbers (ns, %) rather than the table's readable units, so a spreadsheet can compute with them.
    QString out = QStringLiteral("run,trace,ranks,steps_used,step_ns,compute_ns,comm_busy_ns,hidden_ns,exposed_ns,"
                                 "overlap_pct,exposed_pct_of_step,waiting_ns,transfer_ns,efficiency_pct\n");
    auto pct = [](std::optional<double> v) { return v ? QString::number(*v * 100.0, 'f', 2) : QString(); };
    const auto loaded = summaries();
    int firstLoaded = 0;
    while (firstLoaded < runCount()
        && (!m_runs[std::size_t(firstLoaded)]->summary || m_runs[std::size_t(firstLoaded)]->busy))
        ++firstLoaded;
    for (const auto& r : m_runs) {
        if (!r->summary || r->busy)
            continue;
        const RunSummary& s = *r->summary;
        const bool multi = s.ranks > 1;
        QStringList f { csvField(r->name), csvField(r->path), QString::number(s.ranks), QString::number(s.stepsUsed),
            QString::number(s.stepNs), QString::number(s.computeNs), QString::number(s.commBusyNs),
            QString::number(s.hiddenNs), QString::number(s.exposedNs), pct(s.overlapRatio), pct(exposedShare(s)),
            multi ? QString::number(s.waitNs) : QString(), multi ? QString::number(s.transferNs) : QString(),
            &s == &*m_runs[std::size_t(firstLoaded)]->summary ? pct(1.0)
                                                              : pct(weakScalingEfficiency(loaded.front(), s)) };
        out += f.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

QString CompareWindow::json() const
{
    return QString::fromStdString(compareJson(summaries()));
}

QString CompareWindow::lastFolder() const
{
    // Where runs of the same training usually sit: beside the run added last (the open trace when the window was
    // made from the main window), else where a run was last added or saved, else the last trace opened.
    if (!m_runs.empty())
        return siblingFolder(m_runs.back()->path);
    const QString remembered = QSettings().value(QStringLiteral("compare/lastFolder")).toString();
    if (!remembered.isEmpty() && QFileInfo(remembered).isDir())
        return remembered;
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    if (!recent.isEmpty())
        return siblingFolder(recent.front());
    return QDir::homePath();
}

void CompareWindow::rememberFolder(const QString& path)
{
    QFileInfo info(path);
    QSettings().setValue(
        QStringLiteral("compare/lastFolder"), info.isDir() ? info.dir().absolutePath() : info.absolutePath());
}

void CompareWindow::addDialog(bool folder)
{
    if (folder) {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Add Run (Trace Folder)"), lastFolder());
        if (dir.isEmpty())
            return;
        rememberFolder(dir);
        addRun(dir);
        return;
    }
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Add Run (OTF2 Anchor)"), lastFolder(),
        tr("Traces (*.otf2 *.json *.json.gz *.sqlite *.nsys-rep *.qdrep);;All files (*)"));
    for (const auto& f : files)
        addRun(f);
    if (!files.isEmpty())
        rememberFolder(files.front());
}

void CompareWindow::saveDialog(bool asJson)
{
    const QString suggested
        = QDir(lastFolder()).filePath(asJson ? QStringLiteral("compare.json") : QStringLiteral("compare.csv"));
    const QString path
        = QFileDialog::getSaveFileName(this, asJson ? tr("Save Comparison as JSON") : tr("Save Comparison as CSV"),
            suggested, asJson ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    QSaveFile file(path);
    const QByteArray bytes = (asJson ? json() : csv()).toUtf8();
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        QMessageBox::warning(this, tr("Save Failed"), tr("%1: %2").arg(path, file.errorString()));
        return;
    }
    rememberFolder(path);
}

void CompareWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void CompareWindow::dropEvent(QDropEvent* event)
{
    const auto urls = event->mimeData()->urls();
    for (const auto& url : urls)
        if (url.isLocalFile())
            addRun(url.toLocalFile());
    event->acceptProposedAction();
}

} // namespace exposure
