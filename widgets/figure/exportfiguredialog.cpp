// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/exportfiguredialog.h"

#include "analysis/analysis.h"
#include "analysis/stepmean.h"
#include "figure/figurerenderer.h"
#include "model/timeformat.h"
#include "timeline/timelineplot.h"
#include "view/viewindex.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QVBoxLayout>
#include <cmath>

namespace exposure {

namespace {

const char* kSettingsKey = "ExportFigure/spec";
constexpr int kPreviewWidth = 640;
constexpr int kPreviewHeight = 300;

// Where a form row of widgets side by side puts its spare width: after them, into the first one, or nowhere.
enum class Spare { End, First, None };

void addInlineRow(QFormLayout* form, const QString& label, std::initializer_list<QWidget*> widgets, Spare spare)
{
    auto* row = new QHBoxLayout;
    for (QWidget* w : widgets)
        row->addWidget(w, spare == Spare::First && w == *widgets.begin() ? 1 : 0);
    if (spare == Spare::End)
        row->addStretch();
    form->addRow(label, row);
}

// A combo box named `name` offering `choices`: (text, the value it stands for as the item's data).
QComboBox* choiceBox(const char* name, std::initializer_list<std::pair<QString, int>> choices)
{
    auto* box = new QComboBox;
    box->setObjectName(QLatin1String(name));
    for (const auto& [text, value] : choices)
        box->addItem(text, value);
    return box;
}

// A spin box named `name` (the tests find fields by name) over [lo, hi], its unit after the number.
template <class Box> Box* unitSpinBox(const char* name, int lo, int hi, const QString& suffix)
{
    auto* box = new Box;
    box->setObjectName(QLatin1String(name));
    box->setRange(lo, hi);
    box->setSuffix(suffix);
    return box;
}

QString timeText(TimeNs ns)
{
    // Exact and re-parsable: whole ns ("1500000ns" would be exact but unreadable; µs keeps 3 decimals).
    if (ns % 1000 == 0)
        return QString::number(ns / 1000) + QStringLiteral("us");
    return QString::number(ns) + QStringLiteral("ns");
}

template <typename T> void selectData(QComboBox* box, T value)
{
    const int i = box->findData(int(value));
    if (i >= 0)
        box->setCurrentIndex(i);
}

} // namespace

ExportFigureDialog::ExportFigureDialog(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const ViewIndex> index, TimeRange visible, QWidget* parent)
    : QDialog(parent)
    , m_trace(std::move(trace))
    , m_analysis(std::move(analysis))
    , m_visible(visible)
{
    setWindowTitle(tr("Export Figure"));
    m_renderer = std::make_unique<FigureRenderer>(m_trace, m_analysis, std::move(index));
    m_previewTimer.setSingleShot(true);
    m_previewTimer.setInterval(150);
    connect(&m_previewTimer, &QTimer::timeout, this, &ExportFigureDialog::renderPreview);
    buildUi();

    FigureSpec remembered;
    const QSettings settings;
    const QByteArray json = settings.value(QLatin1String(kSettingsKey)).toByteArray();
    if (!json.isEmpty()) {
        try {
            remembered = FigureSpec::fromJson(json, QStringLiteral("settings"));
        } catch (const std::exception&) {
            remembered = FigureSpec(); // stale settings from another version: start afresh
        }
    }
    setSpec(remembered);
}

ExportFigureDialog::~ExportFigureDialog() = default;

void ExportFigureDialog::setCollectives(std::shared_ptr<const CollectiveMatch> collectives)
{
    m_renderer->setCollectives(std::move(collectives));
    m_previewTimer.start();
}

void ExportFigureDialog::buildUi()
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    addSizeFields(form);
    addRangeFields(form);
    addRowFields(form);
    addLookFields(form);

    auto* settingsBox = new QGroupBox(tr("Figure"));
    settingsBox->setLayout(form);

    m_previewLabel = new QLabel;
    m_previewLabel->setObjectName(QStringLiteral("preview"));
    m_previewLabel->setAlignment(Qt::AlignCenter);
    m_previewLabel->setMinimumSize(kPreviewWidth, kPreviewHeight);
    m_previewLabel->setFrameShape(QFrame::StyledPanel);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("status"));
    m_status->setWordWrap(true);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    auto* exportButton = buttons->addButton(tr("&Export…"), QDialogButtonBox::AcceptRole);
    exportButton->setDefault(true);
    auto* saveSpec = buttons->addButton(tr("&Save Spec…"), QDialogButtonBox::ActionRole);
    auto* loadSpec = buttons->addButton(tr("L&oad Spec…"), QDialogButtonBox::ActionRole);
    saveSpec->setToolTip(tr("Save these settings as a figure spec (JSON) to remake the figure later, "
                            "also with 'exposure-cli render --spec'"));
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportFigureDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ExportFigureDialog::reject);
    connect(saveSpec, &QPushButton::clicked, this, &ExportFigureDialog::saveSpecInteractively);
    connect(loadSpec, &QPushButton::clicked, this, &ExportFigureDialog::loadSpecInteractively);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(settingsBox);
    layout->addWidget(m_previewLabel, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    connectChanges();
}

void ExportFigureDialog::addSizeFields(QFormLayout* form)
{
    m_format = choiceBox("format",
        { { tr("PNG image"), int(FigureSpec::Format::Png) }, { tr("SVG (vector)"), int(FigureSpec::Format::Svg) },
            { tr("PDF (vector)"), int(FigureSpec::Format::Pdf) } });
    form->addRow(tr("&Format:"), m_format);

    // Size: pixels, or millimetres plus DPI.
    m_sizePx = new QRadioButton(tr("Pixels"));
    m_sizePx->setObjectName(QStringLiteral("sizePx"));
    m_sizeMm = new QRadioButton(tr("Millimetres"));
    m_sizeMm->setObjectName(QStringLiteral("sizeMm"));
    m_sizePreset = new QComboBox;
    m_sizePreset->setObjectName(QStringLiteral("sizePreset"));
    m_sizePreset->addItem(tr("Preset…"));
    m_sizePreset->addItem(tr("Single column, 85 mm"), 85.0);
    m_sizePreset->addItem(tr("1.5 column, 120 mm"), 120.0);
    m_sizePreset->addItem(tr("Double column, 178 mm"), 178.0);
    addInlineRow(form, tr("Size in:"), { m_sizePx, m_sizeMm, m_sizePreset }, Spare::End);

    m_widthPx = unitSpinBox<QSpinBox>("widthPx", 100, 20000, tr(" px"));
    m_heightPx = unitSpinBox<QSpinBox>("heightPx", 60, 20000, tr(" px"));
    m_widthMm = unitSpinBox<QDoubleSpinBox>("widthMm", 20, 2000, tr(" mm"));
    m_widthMm->setDecimals(1);
    m_heightMm = unitSpinBox<QDoubleSpinBox>("heightMm", 10, 2000, tr(" mm"));
    m_heightMm->setDecimals(1);
    m_dpi = unitSpinBox<QSpinBox>("dpi", 30, 2400, tr(" dpi"));
    addInlineRow(form, tr("Width × height:"),
        { m_widthPx, m_widthMm, new QLabel(QStringLiteral("×")), m_heightPx, m_heightMm, m_dpi }, Spare::End);
    m_sizeInfo = new QLabel;
    m_sizeInfo->setObjectName(QStringLiteral("sizeInfo"));
    form->addRow(QString(), m_sizeInfo);
}

void ExportFigureDialog::addRangeFields(QFormLayout* form)
{
    // Range.
    m_rangeKind = choiceBox("rangeKind",
        { { tr("Whole trace"), int(FigureSpec::RangeKind::Whole) },
            { tr("Visible range (%1 – %2)")
                    .arg(QString::fromStdString(formatDuration(m_visible.start)),
                        QString::fromStdString(formatDuration(m_visible.end))),
                int(FigureSpec::RangeKind::Visible) },
            { tr("One training step"), int(FigureSpec::RangeKind::Step) },
            { tr("From – to"), int(FigureSpec::RangeKind::Custom) } });
    m_step = new QComboBox;
    m_step->setObjectName(QStringLiteral("step"));
    if (m_analysis) {
        // The steps of the first rank that has any, by StepWindow::number; the first step that is not start-up
        // (stepMean's rule) is the default.
        for (const auto& ra : m_analysis->ranks) {
            if (ra.steps.empty())
                continue;
            for (const auto& st : ra.steps)
                m_step->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(st.name),
                                    QString::fromStdString(formatDuration(st.range.duration()))),
                    st.number);
            m_step->setCurrentIndex(int(std::min(stepMean(ra.steps).startup.size(), ra.steps.size() - 1)));
            break;
        }
    }
    m_from = new QLineEdit;
    m_from->setObjectName(QStringLiteral("from"));
    m_from->setPlaceholderText(tr("e.g. 1.5ms"));
    m_to = new QLineEdit;
    m_to->setObjectName(QStringLiteral("to"));
    m_to->setPlaceholderText(tr("e.g. 20ms"));
    addInlineRow(form, tr("Range:"), { m_rangeKind, m_step, m_from, m_to }, Spare::None);
}

void ExportFigureDialog::addRowFields(QFormLayout* form)
{
    // Rows.
    m_rows = choiceBox("rows",
        { { tr("Automatic (all rows that are legible; GPU and overlap rows first)"), int(FigureSpec::RowsKind::Auto) },
            { tr("All rows"), int(FigureSpec::RowsKind::All) },
            { tr("GPU streams only"), int(FigureSpec::RowsKind::Gpu) },
            { tr("Overlap rows only"), int(FigureSpec::RowsKind::Overlap) },
            { tr("A row per group of ranks"), int(FigureSpec::RowsKind::Groups) },
            { tr("Chosen rows"), int(FigureSpec::RowsKind::List) } });
    m_overlapLanes = new QCheckBox(tr("Overlap rows (hidden / exposed)"));
    m_overlapLanes->setObjectName(QStringLiteral("overlapLanes"));
    addInlineRow(form, tr("Rows:"), { m_rows, m_overlapLanes }, Spare::End);
    m_rowList = new QListWidget;
    m_rowList->setObjectName(QStringLiteral("rowList"));
    m_rowList->setMaximumHeight(110);
    if (m_trace) {
        for (std::size_t r = 0; r < m_trace->ranks.size(); ++r) {
            const Rank& rank = m_trace->ranks[r];
            auto add = [&](const QString& key, const QString& text) {
                auto* item = new QListWidgetItem(text, m_rowList);
                item->setData(Qt::UserRole, key);
                item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
                item->setCheckState(Qt::Unchecked);
            };
            for (std::size_t l = 0; l < rank.lanes.size(); ++l)
                add(QStringLiteral("%1:%2").arg(r).arg(l),
                    QStringLiteral("%1 · %2").arg(
                        QString::fromStdString(rank.label), QString::fromStdString(rank.lanes[l].name)));
            add(QStringLiteral("%1:overlap").arg(r),
                QStringLiteral("%1 · overlap").arg(QString::fromStdString(rank.label)));
        }
    }
    form->addRow(QString(), m_rowList);
}

void ExportFigureDialog::addLookFields(QFormLayout* form)
{
    // Look.
    m_palette = choiceBox("palette",
        { { tr("Default"), int(PaletteKind::Default) }, { tr("Colour-blind safe"), int(PaletteKind::ColorBlind) },
            { tr("Greyscale with hatching"), int(PaletteKind::Grayscale) } });
    form->addRow(tr("&Palette:"), m_palette);
    m_fontFamily = new QFontComboBox;
    m_fontFamily->setObjectName(QStringLiteral("fontFamily"));
    m_fontSize = unitSpinBox<QDoubleSpinBox>("fontSize", 2, 72, tr(" pt"));
    m_fontSize->setDecimals(1);
    m_fontSize->setSingleStep(0.5);
    addInlineRow(form, tr("Font:"), { m_fontFamily, m_fontSize }, Spare::First);
    m_legend = new QCheckBox(tr("Show"));
    m_legend->setObjectName(QStringLiteral("legend"));
    m_legendPosition = choiceBox("legendPosition",
        { { tr("Above the plot"), int(LegendPosition::Top) }, { tr("Below the plot"), int(LegendPosition::Bottom) },
            { tr("Right of the plot"), int(LegendPosition::Right) },
            { tr("Inside, top right"), int(LegendPosition::InsideTopRight) } });
    addInlineRow(form, tr("Legend:"), { m_legend, m_legendPosition }, Spare::End);
    m_title = new QLineEdit;
    m_title->setObjectName(QStringLiteral("title"));
    m_title->setPlaceholderText(tr("no title"));
    form->addRow(tr("&Title:"), m_title);
    m_axisLabel = new QLineEdit;
    m_axisLabel->setObjectName(QStringLiteral("axisLabel"));
    m_timeUnit = choiceBox("timeUnit",
        { { tr("automatic unit"), int(TimeUnit::Auto) }, { QStringLiteral("ns"), int(TimeUnit::Nanoseconds) },
            { QStringLiteral("µs"), int(TimeUnit::Microseconds) },
            { QStringLiteral("ms"), int(TimeUnit::Milliseconds) }, { QStringLiteral("s"), int(TimeUnit::Seconds) } });
    addInlineRow(form, tr("Time axis:"), { m_axisLabel, m_timeUnit }, Spare::First);
}

void ExportFigureDialog::connectChanges()
{
    // Every change re-renders the preview (debounced) and updates which fields apply.
    auto changed = [this] {
        if (m_loading)
            return;
        updateEnabled();
        schedulePreview();
    };
    for (QComboBox* c : { m_format, m_rangeKind, m_step, m_rows, m_palette, m_legendPosition, m_timeUnit })
        connect(c, qOverload<int>(&QComboBox::currentIndexChanged), this, changed);
    for (QSpinBox* s : { m_widthPx, m_heightPx, m_dpi })
        connect(s, qOverload<int>(&QSpinBox::valueChanged), this, changed);
    for (QDoubleSpinBox* s : { m_widthMm, m_heightMm, m_fontSize })
        connect(s, qOverload<double>(&QDoubleSpinBox::valueChanged), this, changed);
    for (QLineEdit* e : { m_from, m_to, m_title, m_axisLabel })
        connect(e, &QLineEdit::textChanged, this, changed);
    for (QAbstractButton* b : std::initializer_list<QAbstractButton*> { m_sizePx, m_sizeMm, m_overlapLanes, m_legend })
        connect(b, &QAbstractButton::toggled, this, changed);
    connect(m_fontFamily, &QFontComboBox::currentFontChanged, this, changed);
    connect(m_rowList, &QListWidget::itemChanged, this, changed);
    connect(m_sizePreset, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int i) {
        if (i <= 0)
            return;
        const double w = m_sizePreset->itemData(i).toDouble();
        m_sizeMm->setChecked(true);
        m_widthMm->setValue(w);
        m_heightMm->setValue(std::round(w * 0.4));
        if (m_dpi->value() < 300)
            m_dpi->setValue(300);
        m_sizePreset->setCurrentIndex(0);
    });
}

void ExportFigureDialog::updateEnabled()
{
    const bool mm = m_sizeMm->isChecked();
    m_widthPx->setVisible(!mm);
    m_heightPx->setVisible(!mm);
    m_widthMm->setVisible(mm);
    m_heightMm->setVisible(mm);
    const auto kind = FigureSpec::RangeKind(m_rangeKind->currentData().toInt());
    m_step->setVisible(kind == FigureSpec::RangeKind::Step);
    m_from->setVisible(kind == FigureSpec::RangeKind::Custom);
    m_to->setVisible(kind == FigureSpec::RangeKind::Custom);
    m_rowList->setEnabled(FigureSpec::RowsKind(m_rows->currentData().toInt()) == FigureSpec::RowsKind::List);
    m_legendPosition->setEnabled(m_legend->isChecked());
    const FigureSpec s = spec();
    const QSize px = s.pixelSize();
    const QSizeF phys = s.sizeMm();
    m_sizeInfo->setText(tr("%1 × %2 px, %3 × %4 mm at %5 dpi")
                            .arg(px.width())
                            .arg(px.height())
                            .arg(phys.width(), 0, 'f', 1)
                            .arg(phys.height(), 0, 'f', 1)
                            .arg(s.dpi));
}

FigureSpec ExportFigureDialog::spec() const
{
    FigureSpec s;
    s.tracePath = m_trace ? QString::fromStdString(m_trace->sourcePath) : QString();
    s.format = FigureSpec::Format(m_format->currentData().toInt());
    s.sizeUnit = m_sizeMm->isChecked() ? FigureSpec::SizeUnit::Millimetres : FigureSpec::SizeUnit::Pixels;
    s.widthPx = m_widthPx->value();
    s.heightPx = m_heightPx->value();
    s.widthMm = m_widthMm->value();
    s.heightMm = m_heightMm->value();
    s.dpi = m_dpi->value();
    s.rangeKind = FigureSpec::RangeKind(m_rangeKind->currentData().toInt());
    if (s.rangeKind == FigureSpec::RangeKind::Visible) {
        s.range = m_visible;
    } else if (s.rangeKind == FigureSpec::RangeKind::Custom) {
        const auto a = parseDuration(m_from->text().trimmed().toStdString());
        const auto b = parseDuration(m_to->text().trimmed().toStdString());
        s.range = { a.value_or(0), b.value_or(0) };
    } else if (s.rangeKind == FigureSpec::RangeKind::Step) {
        s.step = m_step->currentData().toInt();
    }
    s.rows = FigureSpec::RowsKind(m_rows->currentData().toInt());
    if (s.rows == FigureSpec::RowsKind::List) {
        for (int i = 0; i < m_rowList->count(); ++i)
            if (m_rowList->item(i)->checkState() == Qt::Checked)
                s.rowList << m_rowList->item(i)->data(Qt::UserRole).toString();
    }
    s.overlapLanes = m_overlapLanes->isChecked();
    s.grouping = m_grouping;
    s.palette = PaletteKind(m_palette->currentData().toInt());
    s.fontFamily = m_fontFamily->currentFont().family();
    s.fontSize = m_fontSize->value();
    s.legend = m_legend->isChecked();
    s.legendPosition = LegendPosition(m_legendPosition->currentData().toInt());
    s.title = m_title->text();
    s.timeAxisLabel = m_axisLabel->text();
    s.timeUnit = TimeUnit(m_timeUnit->currentData().toInt());
    return s;
}

void ExportFigureDialog::setSpec(const FigureSpec& spec)
{
    m_loading = true;
    selectData(m_format, spec.format);
    (spec.sizeUnit == FigureSpec::SizeUnit::Millimetres ? m_sizeMm : m_sizePx)->setChecked(true);
    m_widthPx->setValue(spec.widthPx);
    m_heightPx->setValue(spec.heightPx);
    m_widthMm->setValue(spec.widthMm);
    m_heightMm->setValue(spec.heightMm);
    m_dpi->setValue(spec.dpi);
    FigureSpec::RangeKind kind = spec.rangeKind;
    if (kind == FigureSpec::RangeKind::Visible && spec.range != m_visible) {
        kind = FigureSpec::RangeKind::Custom; // another session's view: keep its exact times
    }
    selectData(m_rangeKind, kind);
    if (spec.rangeKind == FigureSpec::RangeKind::Custom || spec.rangeKind == FigureSpec::RangeKind::Visible) {
        m_from->setText(timeText(spec.range.start));
        m_to->setText(timeText(spec.range.end));
    }
    if (spec.rangeKind == FigureSpec::RangeKind::Step)
        selectData(m_step, spec.step);
    selectData(m_rows, spec.rows);
    m_grouping = spec.grouping;
    for (int i = 0; i < m_rowList->count(); ++i)
        m_rowList->item(i)->setCheckState(
            spec.rowList.contains(m_rowList->item(i)->data(Qt::UserRole).toString()) ? Qt::Checked : Qt::Unchecked);
    m_overlapLanes->setChecked(spec.overlapLanes);
    selectData(m_palette, spec.palette);
    m_fontFamily->setCurrentFont(QFont(spec.fontFamily));
    m_fontSize->setValue(spec.fontSize);
    m_legend->setChecked(spec.legend);
    selectData(m_legendPosition, spec.legendPosition);
    m_title->setText(spec.title);
    m_axisLabel->setText(spec.timeAxisLabel);
    selectData(m_timeUnit, spec.timeUnit);
    m_loading = false;
    updateEnabled();
    schedulePreview();
}

void ExportFigureDialog::schedulePreview()
{
    m_previewTimer.start();
}

void ExportFigureDialog::renderPreview()
{
    m_previewTimer.stop();
    FigureSpec s = spec();
    // The same layout at a lower resolution: the preview must not cost a 600 dpi render per keystroke.
    const QSizeF mm = s.sizeMm();
    const double maxDpi = 2.0 * kPreviewWidth * 25.4 / std::max(1.0, mm.width());
    s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
    s.widthMm = mm.width();
    s.heightMm = mm.height();
    const double scale = std::min(1.0, maxDpi / s.dpi);
    s.dpi = std::max(30, int(std::floor(s.dpi * scale)));
    try {
        m_preview = m_renderer->renderImage(s);
        const QString warning = m_renderer->crowdingWarning();
        m_status->setText(warning.isEmpty() ? m_renderer->selectionNote() : warning);
        const QSize box = m_previewLabel->contentsRect().size().expandedTo(QSize(kPreviewWidth, kPreviewHeight) / 2);
        m_previewLabel->setPixmap(
            QPixmap::fromImage(m_preview.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
    } catch (const std::exception& e) {
        m_preview = QImage();
        m_previewLabel->setPixmap(QPixmap());
        m_status->setText(QString::fromUtf8(e.what()));
    }
}

QImage ExportFigureDialog::previewImage()
{
    if (m_previewTimer.isActive() || m_preview.isNull())
        renderPreview();
    return m_preview;
}

bool ExportFigureDialog::fail(const QString& message)
{
    m_error = message;
    m_status->setText(message);
    return false;
}

bool ExportFigureDialog::saveSpecTo(const QString& path)
{
    try {
        const FigureSpec s = spec();
        s.validate(tr("figure"));
        s.save(path);
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    m_error.clear();
    return true;
}

bool ExportFigureDialog::loadSpecFrom(const QString& path)
{
    try {
        setSpec(FigureSpec::load(path));
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    m_error.clear();
    return true;
}

bool ExportFigureDialog::exportTo(const QString& path, bool overwrite)
{
    m_proposal.reset();
    try {
        m_renderer->renderToFile(spec(), path, overwrite);
    } catch (const FigureLegibilityError& e) {
        // Not written: say why in the dialog's words, and keep the proposal for accept() to offer.
        m_proposal = e.proposal;
        const QSizeF mm = spec().sizeMm();
        return fail(tr("Not exported: the figure is not legible at %1 × %2 mm (%3). Try %4.")
                        .arg(mm.width(), 0, 'g', 4)
                        .arg(mm.height(), 0, 'g', 4)
                        .arg(m_renderer->check().problem(), e.proposal.text(false)));
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    m_error.clear();
    emit figureSaved(path);
    return true;
}

void ExportFigureDialog::rememberSettings() const
{
    QSettings settings;
    settings.setValue(QLatin1String(kSettingsKey), spec().toJson());
}

void ExportFigureDialog::accept()
{
    const FigureSpec s = spec();
    try {
        s.validate(tr("figure"));
        if (m_trace)
            s.resolveRange(*m_trace, m_analysis.get());
    } catch (const std::exception& e) {
        fail(QString::fromUtf8(e.what()));
        return;
    }
    const QString ext = figureFormatName(s.format);
    const QString base = m_trace ? QFileInfo(QString::fromStdString(m_trace->sourcePath)).completeBaseName()
                                 : QStringLiteral("figure");
    QSettings settings;
    const QString dir = settings.value(QStringLiteral("ExportFigure/dir")).toString();
    const QString suggested
        = (dir.isEmpty() ? QString() : dir + QLatin1Char('/')) + base + QStringLiteral("-timeline.") + ext;
    // We ask about replacing ourselves (below), so the question is the same on every platform dialog.
    QString path = QFileDialog::getSaveFileName(this, tr("Export Figure"), suggested,
        tr("%1 files (*.%2)").arg(ext.toUpper(), ext), nullptr, QFileDialog::DontConfirmOverwrite);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QLatin1Char('.') + ext;
    // A typed name of another format is followed: "fig.png" is written as PNG whatever the format chosen before.
    FigureSpec::Format named = s.format;
    if (figureFormatFromName(QFileInfo(path).suffix(), &named) && named != s.format)
        selectData(m_format, named);
    bool overwrite = false;
    if (QFileInfo::exists(path)) {
        if (QMessageBox::question(this, tr("Replace File?"),
                tr("%1 already exists. Replace it?").arg(QFileInfo(path).fileName()),
                QMessageBox::Yes | QMessageBox::No, QMessageBox::No)
            != QMessageBox::Yes)
            return;
        overwrite = true;
    }
    if (!exportTo(path, overwrite)) {
        offerProposal();
        return;
    }
    settings.setValue(QStringLiteral("ExportFigure/dir"), QFileInfo(path).absolutePath());
    rememberSettings();
    QDialog::accept();
}

void ExportFigureDialog::offerProposal()
{
    if (!m_proposal) {
        QMessageBox::warning(this, tr("Export Figure"), m_error);
        return;
    }
    QMessageBox box(QMessageBox::Warning, tr("Export Figure"), m_error, QMessageBox::Cancel, this);
    QPushButton* apply = box.addButton(tr("Use the Proposal"), QMessageBox::AcceptRole);
    box.exec();
    if (box.clickedButton() == apply)
        applyProposal(*m_proposal);
}

void ExportFigureDialog::applyProposal(const FigureProposal& p)
{
    // One change at a time, the first that the proposal names: the preview then shows whether it is enough.
    if (p.heightMm > 0) {
        const FigureSpec s = spec();
        m_sizeMm->setChecked(true);
        m_widthMm->setValue(s.sizeMm().width());
        m_heightMm->setValue(p.heightMm);
        if (s.sizeUnit == FigureSpec::SizeUnit::Pixels)
            m_dpi->setValue(s.dpi);
    } else if (p.hasRows) {
        selectData(m_rows, p.rows);
    } else if (p.fontPt > 0) {
        m_fontSize->setValue(p.fontPt);
    }
}

void ExportFigureDialog::saveSpecInteractively()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Figure Spec"), QStringLiteral("figure.json"), tr("Figure specs (*.json)"));
    if (!path.isEmpty() && !saveSpecTo(path))
        QMessageBox::warning(this, tr("Save Figure Spec"), m_error);
}

void ExportFigureDialog::loadSpecInteractively()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Load Figure Spec"), QString(), tr("Figure specs (*.json);;All files (*)"));
    if (!path.isEmpty() && !loadSpecFrom(path))
        QMessageBox::warning(this, tr("Load Figure Spec"), m_error);
}

QAction* ExportFigureDialog::installAction(
    QMenu* menu, QAction* before, QWidget* window, std::function<FigureSource()> source)
{
    auto* action = new QAction(tr("Export &Figure…"), window);
    action->setObjectName(QStringLiteral("exportFigure"));
    action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    action->setStatusTip(tr("Save the timeline as a PNG, SVG or PDF figure for a paper"));
    if (before)
        menu->insertAction(before, action);
    else
        menu->addAction(action);
    auto update = [source, action] { action->setEnabled(source().trace != nullptr); };
    update();
    connect(menu, &QMenu::aboutToShow, action, update);
    connect(action, &QAction::triggered, window, [window, source] {
        const FigureSource s = source();
        if (!s.trace)
            return;
        ExportFigureDialog dialog(s.trace, s.analysis, s.index, s.visible, window);
        dialog.setCollectives(s.collectives);
        if (s.grouping != RankGrouping::None) {
            FigureSpec grouped = dialog.spec();
            grouped.grouping = s.grouping;
            dialog.setSpec(grouped);
        }
        // The dialog closes after saving: the window says what was written, and where.
        if (auto* main = qobject_cast<QMainWindow*>(window))
            connect(&dialog, &ExportFigureDialog::figureSaved, main, [main](const QString& path) {
                const QFileInfo info(path);
                main->statusBar()->showMessage(tr("Saved figure %1 (%2 KB)")
                                                   .arg(QDir::toNativeSeparators(info.absoluteFilePath()))
                                                   .arg((info.size() + 1023) / 1024),
                    15000);
            });
        dialog.exec();
    });
    return action;
}

} // namespace exposure
