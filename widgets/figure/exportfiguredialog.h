// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "figure/figurerenderer.h"
#include "figure/figurespec.h"

#include <QDialog>
#include <QImage>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFontComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QMenu;
class QRadioButton;
class QSpinBox;

namespace exposure {

struct Analysis;
struct Trace;
struct ViewIndex;
class FigureRenderer;

// What the Export Figure action needs from the window at the moment it is triggered.
struct FigureSource
{
    std::shared_ptr<const Trace> trace; // null: nothing to export (the action is disabled)
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const ViewIndex> index;
    TimeRange visible { 0, 0 };
    std::shared_ptr<const CollectiveMatch> collectives; // null: no waiting drawn
    RankGrouping grouping = RankGrouping::None; // the timeline's: "A row per group of ranks" groups alike
};

// File ▸ Export Figure…: every setting of a figure spec, a live preview rendered by the same FigureRenderer as
// `exposure-cli render`, Save/Load Spec buttons, and the last settings remembered in QSettings
// ("ExportFigure/spec"). Export asks before replacing a file and writes atomically.
//
// Widgets carry object names (format, sizePx, sizeMm, widthPx, heightPx, widthMm, heightMm, dpi, rangeKind,
// step, from, to, rows, rowList, overlapLanes, palette, fontFamily, fontSize, legend, legendPosition, title,
// axisLabel, timeUnit, preview) so tests can drive the dialog.
class ExportFigureDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ExportFigureDialog)
public:
    // `visible` is the timeline's visible range (used by the "Visible range" choice). Starts from the
    // remembered settings.
    ExportFigureDialog(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const ViewIndex> index, TimeRange visible, QWidget* parent = nullptr);
    ~ExportFigureDialog() override;

    FigureSpec spec() const;
    // Matched collectives of the trace: figures draw the waiting for peers as the timeline does.
    void setCollectives(std::shared_ptr<const CollectiveMatch> collectives);
    // Shows `spec` (the trace path stays the dialog's trace; a "visible" range becomes a typed range).
    void setSpec(const FigureSpec& spec);

    // The last preview, at the figure's aspect ratio (rendered synchronously if a change is pending).
    QImage previewImage();

    // The actions behind the buttons, without file dialogs; false with lastError() set on failure.
    bool saveSpecTo(const QString& path);
    bool loadSpecFrom(const QString& path);
    bool exportTo(const QString& path, bool overwrite);
    QString lastError() const { return m_error; }
    // After exportTo() refused an illegible figure: what would make it legible.
    std::optional<FigureProposal> lastProposal() const { return m_proposal; }

    void rememberSettings() const;

    // Adds "Export Figure…" (Ctrl+Shift+E) to `menu` before `before` (or at the end), enabled while `source`
    // gives a trace; triggering it opens the dialog on what `source` returns. For MainWindow:
    //   ExportFigureDialog::installAction(fileMenu(), fileMenuExtensionAnchor(), this, [this] {
    //       return FigureSource{trace(), analysis(), timeline()->viewIndex(), visibleRange()}; });
    static QAction* installAction(QMenu* menu, QAction* before, QWidget* window, std::function<FigureSource()> source);

public slots:
    void accept() override; // asks for the file name, then exports

signals:
    // A figure was written (exportTo succeeded): the window that opened the dialog confirms it in its status bar.
    void figureSaved(const QString& path);

private:
    void buildUi();
    void addSizeFields(QFormLayout* form);
    void addRangeFields(QFormLayout* form);
    void addRowFields(QFormLayout* form);
    void addLookFields(QFormLayout* form);
    void connectChanges();
    void updateEnabled();
    void schedulePreview();
    void renderPreview();
    void saveSpecInteractively();
    void loadSpecInteractively();
    bool fail(const QString& message);
    void offerProposal();
    void applyProposal(const FigureProposal& p);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    std::unique_ptr<FigureRenderer> m_renderer;
    TimeRange m_visible;
    QString m_error;
    std::optional<FigureProposal> m_proposal; // of the last export refused as illegible
    QTimer m_previewTimer;
    QImage m_preview;
    bool m_loading = false;

    QComboBox* m_format = nullptr;
    QRadioButton* m_sizePx = nullptr;
    QRadioButton* m_sizeMm = nullptr;
    QComboBox* m_sizePreset = nullptr;
    QSpinBox* m_widthPx = nullptr;
    QSpinBox* m_heightPx = nullptr;
    QDoubleSpinBox* m_widthMm = nullptr;
    QDoubleSpinBox* m_heightMm = nullptr;
    QSpinBox* m_dpi = nullptr;
    QLabel* m_sizeInfo = nullptr;
    QComboBox* m_rangeKind = nullptr;
    QComboBox* m_step = nullptr;
    QLineEdit* m_from = nullptr;
    QLineEdit* m_to = nullptr;
    QComboBox* m_rows = nullptr;
    QListWidget* m_rowList = nullptr;
    QCheckBox* m_overlapLanes = nullptr;
    RankGrouping m_grouping = RankGrouping::Auto; // rows "groups": the spec's grouping, kept as it came
    QComboBox* m_palette = nullptr;
    QFontComboBox* m_fontFamily = nullptr;
    QDoubleSpinBox* m_fontSize = nullptr;
    QCheckBox* m_legend = nullptr;
    QComboBox* m_legendPosition = nullptr;
    QLineEdit* m_title = nullptr;
    QLineEdit* m_axisLabel = nullptr;
    QComboBox* m_timeUnit = nullptr;
    QLabel* m_previewLabel = nullptr;
    QLabel* m_status = nullptr;
};

} // namespace exposure
