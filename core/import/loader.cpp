// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/loader.h"

#include "import/archivefinder.h"
#include "import/kinetoimporter.h"
#include "import/otf2importer.h"

#include <filesystem>

namespace exposure {

std::shared_ptr<Trace> loadTrace(const std::string& path, const LoadOptions& options)
{
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    // torch.profiler JSON: a .json / .json.gz file, or a folder of them that holds no OTF2 archive.
    std::error_code ec;
    const bool folder = std::filesystem::is_directory(path, ec);
    std::vector<ArchiveRef> archives;
    if (!folder && isKinetoFileName(path)) {
        importKineto(*trace, {path}, options);
        return trace;
    }
    try {
        archives = findArchives(path);
    } catch (const LoadError&) {
        const auto kineto = folder ? findKinetoFiles(path) : std::vector<std::string>();
        if (kineto.empty())
            throw;
        importKineto(*trace, kineto, options);
        return trace;
    }
    return loadArchives(path, archives, options);
}

std::shared_ptr<Trace> loadArchives(
    const std::string& path, const std::vector<ArchiveRef>& archives, const LoadOptions& options)
{
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    if (archives.empty()) {
        trace->finalize(true);
        return trace;
    }
    Otf2Importer importer(*trace, options);
    for (const auto& a : archives) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        importer.readDefinitions(a);
    }
    importer.readEvents();
    importer.finish();
    return trace;
}

} // namespace exposure
