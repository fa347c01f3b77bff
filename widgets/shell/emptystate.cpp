// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/emptystate.h"

#include "common/theme.h"

#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace exposure {

EmptyState::EmptyState(QWidget* parent)
    : QWidget(parent)
    , m_open(new QPushButton(QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open Trace…"), this))
    , m_openFolder(new QPushButton(tr("Open Trace &Folder…"), this))
    , m_demo(new QPushButton(tr("Open &Demo Trace"), this))
{
    setObjectName(QStringLiteral("emptyState"));
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
    auto* title = new QLabel(tr("No trace open"), this);
    QFont big = title->font();
    big.setPointSizeF(big.pointSizeF() * 1.5);
    big.setBold(true);
    title->setFont(big);
    title->setAlignment(Qt::AlignCenter);
    auto* text = new QLabel(tr("Open a Score-P OTF2 archive (its traces.otf2 or its folder, or a folder of one archive "
                               "per rank), torch.profiler traces (.json, .json.gz) or Nsight Systems reports (.sqlite, "
                               ".nsys-rep), or drop one on this window."),
        this);
    text->setWordWrap(true);
    text->setAlignment(Qt::AlignCenter);
    text->setMaximumWidth(520);
    text->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    QPalette dim = text->palette();
    dim.setColor(QPalette::WindowText, dimmedText(palette()));
    text->setPalette(dim);
    text->setForegroundRole(QPalette::WindowText);
    m_open->setDefault(true);
    m_open->setToolTip(tr("An OTF2 anchor file (traces.otf2), a torch.profiler trace or an Nsight Systems report "
                          "(Ctrl+O)"));
    m_openFolder->setToolTip(
        tr("A folder holding one OTF2 archive, torch.profiler file or Nsight Systems report per rank "
           "(Ctrl+Shift+O)"));
    m_demo->setToolTip(tr("The bundled 2-rank demo trace"));
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_open);
    buttons->addWidget(m_openFolder);
    buttons->addWidget(m_demo);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addStretch(2);
    layout->addWidget(title);
    // Centred by stretches, not by an alignment flag: a word-wrapped label then gets the height its width needs.
    auto* textRow = new QHBoxLayout;
    textRow->addStretch(1);
    textRow->addWidget(text, 4);
    textRow->addStretch(1);
    layout->addLayout(textRow);
    layout->addSpacing(12);
    layout->addLayout(buttons);
    layout->addStretch(3);
    connect(m_open, &QPushButton::clicked, this, &EmptyState::openRequested);
    connect(m_openFolder, &QPushButton::clicked, this, &EmptyState::openFolderRequested);
    connect(m_demo, &QPushButton::clicked, this, &EmptyState::demoRequested);
}

void EmptyState::setDemoAvailable(bool available)
{
    m_demo->setVisible(available);
}

} // namespace exposure
