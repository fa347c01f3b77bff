// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: progressive loading. While a run of many files is read, the loader's previews (the ranks read so far,
// each analysed on its own) are shown in the timeline and the heat map, grouped as the whole run will be; the window
// stays usable. The full trace replaces the last preview as any load does (applyLoaded); a failed or cancelled load
// brings back the trace shown before the first preview.
#include "common/elidedlabel.h"
#include "panels/heatmappanel.h"
#include "shell/findbar.h"
#include "shell/mainwindow.h"
#include "timeline/timelineplot.h"

#include <QDockWidget>
#include <algorithm>

namespace exposure {

void MainWindow::connectPreviews()
{
    m_loader->setProgressive(true);
    connect(m_loader, &TraceLoader::previewed, this, &MainWindow::applyPreview);
}

void MainWindow::applyPreview(const LoadedTrace& preview, int ranksRead, int ranksTotal)
{
    if (!m_loader->isLoading() || !preview.trace)
        return;
    if (!m_beforePreview)
        m_beforePreview = m_current;
    m_current = preview;
    m_timeline->setTrace(preview.trace, preview.analysis, preview.index);
    applyDefaultGrouping(std::size_t(std::max(ranksTotal, 0)));
    m_timeline->setCollectives(nullptr);
    m_findBar->setTrace(preview.trace, preview.analysis);
    m_heatMap->setTrace(preview.trace, preview.analysis, nullptr);
    if (std::size_t(ranksTotal) > std::size_t(HeatMapPanel::kAutoOpenRanks)) {
        m_heatMapDock->show();
        m_heatMapDock->raise();
    }
    m_statusText->setText(tr("Read %1 of %2 ranks: showing those read so far").arg(ranksRead).arg(ranksTotal));
    updateTitle();
    updateActions();
    emit previewShown(ranksRead, ranksTotal);
}

void MainWindow::dropPreview()
{
    if (!m_beforePreview)
        return;
    const LoadedTrace before = std::move(*m_beforePreview);
    m_beforePreview.reset();
    applyLoaded(before);
}

} // namespace exposure
