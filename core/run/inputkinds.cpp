// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/inputkinds.h"

#include "import/chromeimporter.h"
#include "import/jsonstream.h"
#include "import/kinetoimporter.h"
#include "import/memorybudget.h"
#include "import/nsysimporter.h"
#include "import/otf2importer.h"

#include <cstdio>
#include <filesystem>

namespace exposure {

namespace {

// What every reader keeps: the trace it fills, its input, and its own copy of the options.
class StoredInputReader : public InputReader
{
public:
    StoredInputReader(Trace& trace, const RunInput& input, const LoadOptions& options)
        : m_trace(trace)
        , m_input(input)
        , m_options(options)
    { }

protected:
    Trace& m_trace;
    RunInput m_input;
    LoadOptions m_options;
};

// An InputKind's `open`: a new Reader over the input.
template <class Reader>
std::unique_ptr<InputReader> openReader(Trace& trace, const RunInput& input, const LoadOptions& options)
{
    return std::make_unique<Reader>(trace, input, options);
}

// ---- OTF2 (Score-P): an anchor file, an archive folder, or a folder of per-rank archives ----

std::optional<RunInput> detectOtf2(const std::string& path)
{
    RunInput input;
    input.path = path;
    input.archives = findArchives(path); // throws LoadError saying why the path holds no archive
    return input;
}

class Otf2Reader final : public StoredInputReader
{
public:
    Otf2Reader(Trace& trace, const RunInput& input, const LoadOptions& options)
        : StoredInputReader(trace, input, options)
        , m_importer(trace, m_options)
    { }
    MemoryNeed estimate() override
    {
        Otf2Importer::checkAnchors(m_input.archives);
        m_importer.readDefinitions(m_input.archives);
        // Event counts are known now (bounded by the event files' sizes).
        char events[32];
        std::snprintf(events, sizeof events, "%.1f M events", double(m_importer.totalEvents()) / 1e6);
        return { kBaseBytes + m_importer.totalEvents() * kBytesPerOtf2Event, events };
    }
    void read() override
    {
        m_importer.readEvents();
        m_importer.finish();
    }

private:
    Otf2Importer m_importer; // holds a reference to m_options
};

// ---- torch.profiler (Kineto) JSON: a .json / .json.gz file, or a folder of them ----

std::optional<RunInput> detectKineto(const std::string& path)
{
    std::error_code ec;
    RunInput input;
    input.path = path;
    if (!std::filesystem::is_directory(path, ec) && isKinetoFileName(path))
        input.files = { path }; // read (and reported when missing) by the importer
    else
        input.files = findKinetoFiles(path);
    if (input.files.empty())
        return std::nullopt;
    return input;
}

// Uncompressed size of a torch.profiler file: its size, or for gzip the ISIZE trailer (size mod 2^32) when it is
// plausible, else ten times the compressed size.
std::uint64_t jsonBytes(const std::string& file)
{
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(file, ec);
    if (ec)
        return 0;
    if (file.size() < 3 || file.compare(file.size() - 3, 3, ".gz") != 0)
        return size;
    const std::uint64_t isize = size >= 4 ? gzipTrailerSize(file).value_or(0) : 0;
    return size < (1ull << 32) && isize >= size ? isize : 10 * size;
}

class KinetoReader final : public StoredInputReader
{
public:
    using StoredInputReader::StoredInputReader;
    MemoryNeed estimate() override
    {
        std::uint64_t bytes = 0;
        for (const auto& f : m_input.files)
            bytes += jsonBytes(f);
        return { kBaseBytes + std::uint64_t(double(bytes) * kBytesPerJsonByte), formatBytes(bytes) + " of JSON" };
    }
    void read() override { importKineto(m_trace, m_input.files, m_options); }
};

// ---- Chrome Trace Event Format: one .json / .json.gz file that is a Chrome trace but no torch.profiler one ----

// A folder holding one JSON file that is a Chrome trace (a published timeline beside its description, say) opens as
// that file; a folder of several goes to the torch.profiler reader, which names what it finds.
std::optional<RunInput> detectChrome(const std::string& path)
{
    std::error_code ec;
    std::vector<std::string> files;
    if (std::filesystem::is_directory(path, ec))
        files = findKinetoFiles(path);
    else if (isKinetoFileName(path))
        files = { path };
    if (files.size() != 1 || !isChromeTraceFile(files.front()))
        return std::nullopt;
    RunInput input;
    input.path = path;
    input.files = std::move(files);
    return input;
}

class ChromeReader final : public StoredInputReader
{
public:
    using StoredInputReader::StoredInputReader;
    MemoryNeed estimate() override
    {
        const std::uint64_t bytes = jsonBytes(m_input.files.front());
        return { kBaseBytes + std::uint64_t(double(bytes) * kBytesPerJsonByte), formatBytes(bytes) + " of JSON" };
    }
    void read() override { importChrome(m_trace, m_input.files.front(), m_options); }
};

// ---- Nsight Systems: SQLite exports (a .nsys-rep is exported first), one file or a folder of them ----

std::optional<RunInput> detectNsys(const std::string& path)
{
    RunInput input;
    input.path = path;
    input.files = findNsysFiles(path);
    if (input.files.empty())
        return std::nullopt;
    return input;
}

class NsysReader final : public StoredInputReader
{
public:
    using StoredInputReader::StoredInputReader;
    MemoryNeed estimate() override
    {
        for (const auto& f : m_input.files)
            m_exports.push_back(isNsysReportFileName(f) && !hasSqliteHeader(f) ? exportNsysReport(f, m_options) : f);
        const std::uint64_t rows = countNsysRows(m_exports, m_options);
        return { kBaseBytes + rows * kBytesPerNsysRow, std::to_string(rows) + " rows of Nsight Systems exports" };
    }
    void read() override { importNsys(m_trace, m_exports, m_options); }

private:
    std::vector<std::string> m_exports;
};

} // namespace

const std::vector<InputKind>& inputKinds()
{
    // A new input kind: its importer in core/import, and one entry here.
    static const std::vector<InputKind> kinds = {
        { "OTF2", detectOtf2, true, openReader<Otf2Reader> },
        { "Chrome trace", detectChrome, false, openReader<ChromeReader> }, // before torch.profiler: both are JSON
        { "torch.profiler", detectKineto, false, openReader<KinetoReader> },
        { "Nsight Systems", detectNsys, false, openReader<NsysReader> },
    };
    return kinds;
}

const InputKind& otf2InputKind()
{
    return inputKinds().front();
}

RunInput detectInput(const std::string& path)
{
    std::optional<LoadError> firstError;
    for (const InputKind& kind : inputKinds()) {
        try {
            if (auto input = kind.detect(path)) {
                input->kind = &kind;
                return std::move(*input);
            }
        } catch (const LoadError& e) {
            if (!firstError)
                firstError = e;
        }
    }
    if (firstError)
        throw *firstError;
    throw LoadError(path, "not a trace this program reads");
}

} // namespace exposure
