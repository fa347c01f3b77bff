// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the main window shows while no trace is open (at start, after a failed or cancelled first load, after Close
// Trace): how to open one, instead of an empty timeline with a meaningless time axis.
#include <QWidget>

class QPushButton;

namespace exposure {

class EmptyState : public QWidget
{
    Q_OBJECT
public:
    explicit EmptyState(QWidget* parent = nullptr);
    // Hides "Open Demo Trace" when no demo trace is installed.
    void setDemoAvailable(bool available);

    QPushButton* openButton() const { return m_open; }
    QPushButton* openFolderButton() const { return m_openFolder; }
    QPushButton* demoButton() const { return m_demo; }

signals:
    void openRequested();
    void openFolderRequested();
    void demoRequested();

private:
    QPushButton* m_open;
    QPushButton* m_openFolder;
    QPushButton* m_demo;
};

} // namespace exposure
