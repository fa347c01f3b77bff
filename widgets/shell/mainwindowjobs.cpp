// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: files of different jobs read as one run (run/jobcheck.h). When the loaded run's warnings say so, the
// window offers to open each job in a window of its own, to compare them in Compare Runs, or to keep them as one run.
#include "compare/comparewindow.h"
#include "run/jobcheck.h"
#include "shell/mainwindow.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QTimer>
#include <algorithm>

namespace exposure {

namespace {

// The path that opens one job alone: its file, or for several files a folder of links to them (in the temporary
// folder, named after the run and the job) that every input kind reads like the files' own folder.
QString jobPath(const QString& runPath, const std::vector<FileJob>& files, const std::vector<std::size_t>& group,
    std::size_t number)
{
    if (group.size() == 1)
        return QString::fromStdString(files[group.front()].file);
    QCryptographicHash hash(QCryptographicHash::Sha1);
    for (const std::size_t i : group)
        hash.addData(QByteArray::fromStdString(files[i].file));
    const QString name = QStringLiteral("%1-job%2-%3")
                             .arg(QFileInfo(runPath).fileName())
                             .arg(number)
                             .arg(QString::fromLatin1(hash.result().toHex().left(8)));
    QDir dir(QDir::temp().filePath(QStringLiteral("exposure-jobs/") + name));
    dir.removeRecursively(); // the links of an earlier offer of the same job: made again
    if (!dir.mkpath(QStringLiteral(".")))
        return {};
    for (const std::size_t i : group) {
        const QFileInfo file(QString::fromStdString(files[i].file));
        if (!QFile::link(file.absoluteFilePath(), dir.filePath(file.fileName())))
            return {};
    }
    return dir.path();
}

MainWindow::JobChoice askJobChoice(QWidget* parent, const QString& warning, const QStringList& jobs)
{
    QMessageBox box(QMessageBox::Warning, MainWindow::tr("Different jobs"),
        MainWindow::tr("These files look like %1 different jobs, opened as one run.").arg(jobs.size()),
        QMessageBox::NoButton, parent);
    box.setInformativeText(warning);
    QPushButton* separately = box.addButton(MainWindow::tr("Open Separately"), QMessageBox::AcceptRole);
    separately->setToolTip(MainWindow::tr("Open each job in a window of its own"));
    QPushButton* compare = box.addButton(MainWindow::tr("Compare"), QMessageBox::ActionRole);
    compare->setToolTip(MainWindow::tr("Open the jobs side by side in Compare Runs"));
    QPushButton* one = box.addButton(MainWindow::tr("Open as One"), QMessageBox::RejectRole);
    box.setDefaultButton(separately);
    box.setEscapeButton(one);
    box.exec();
    if (box.clickedButton() == separately)
        return MainWindow::JobChoice::OpenSeparately;
    if (box.clickedButton() == compare)
        return MainWindow::JobChoice::Compare;
    return MainWindow::JobChoice::OpenAsOne;
}

} // namespace

void MainWindow::offerJobs(const QString& path)
{
    const auto loaded = trace();
    if (!loaded)
        return;
    const auto warning = std::find_if(loaded->warnings.begin(), loaded->warnings.end(), isJobWarning);
    if (warning == loaded->warnings.end())
        return;
    // The groups again from the files' metadata (a few small reads; only for a run the loader warned about).
    const std::vector<FileJob> files = describeFiles(*loaded);
    const JobSplit split = splitJobs(loaded->sourcePath, files);
    QStringList jobs;
    for (std::size_t g = 0; g < split.groups.size(); ++g)
        jobs << jobPath(path, files, split.groups[g], g + 1);
    if (jobs.size() < 2 || jobs.contains(QString()))
        return; // the warning stays in the list; nothing to open apart
    const QString text = QString::fromStdString(*warning);
    // After the other handlers of traceLoaded, with the run painted behind the question.
    QTimer::singleShot(0, this, [this, text, jobs] {
        const JobChoice choice = m_jobChooser ? m_jobChooser(text, jobs) : askJobChoice(this, text, jobs);
        if (choice == JobChoice::OpenSeparately) {
            for (qsizetype j = 1; j < jobs.size(); ++j) {
                auto* w = new MainWindow;
                w->setAttribute(Qt::WA_DeleteOnClose);
                w->setRemembersRecentFiles(m_remembersRecent);
                w->setMessageSink(m_sink);
                w->show();
                w->openTrace(jobs[j]);
            }
            openTrace(jobs.front());
        } else if (choice == JobChoice::Compare) {
            // The window File ▸ Compare Runs shows (one per main window), with the jobs as its runs.
            auto* w = findChild<CompareWindow*>();
            if (!w)
                w = new CompareWindow(this);
            for (const QString& job : jobs)
                w->addRun(job);
            w->show();
            w->raise();
        }
    });
}

} // namespace exposure
