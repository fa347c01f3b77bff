// SPDX-License-Identifier: GPL-3.0-or-later
// The OTF2 importer: construction and progress reporting. The stages live in otf2definitions.cpp, otf2events.cpp
// and otf2finish.cpp; what they share is in otf2importer_p.h.
#include "import/otf2importer_p.h"

namespace exposure {

Otf2Importer::Otf2Importer(Trace& trace, const LoadOptions& options)
    : m_trace(trace)
    , m_options(options)
{
    otf2::silenceErrors();
}

Otf2Importer::~Otf2Importer() = default;

void Otf2Importer::checkAnchors(const std::vector<ArchiveRef>& archives)
{
    std::vector<std::string> anchors;
    anchors.reserve(archives.size());
    for (const auto& a : archives)
        anchors.push_back(a.anchor);
    otf2::checkAnchors(anchors);
}

void Otf2Importer::reportProgress(const std::string& file, bool force)
{
    if (!m_options.progress)
        return;
    std::lock_guard<std::mutex> lock(m_progressMutex);
    const auto now = nowNs();
    if (!force && now - m_lastProgressNs < 20'000'000)
        return;
    m_lastProgressNs = now;
    LoadProgress p;
    p.eventsRead = m_eventsRead.load(std::memory_order_relaxed);
    p.eventsTotal = m_totalEvents;
    p.currentFile = file;
    m_options.progress(p);
}

} // namespace exposure
