// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the figure spec reader (FigureSpec::fromJson + validate, what `exposure-cli render --spec` and the
// Export Figure dialog load) and the --rows argument parser. Bad input must give a FigureSpecError naming the source
// on one line; a valid spec must survive toJson → fromJson unchanged.
#include "figure/figurespec.h"
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    const QString source = QStringLiteral("fuzz.json");
    {
        FigureSpec rows;
        QString error;
        if (!parseRowsArgument(QString::fromUtf8(bytes), &rows, &error) && error.isEmpty())
            fuzz::violated("parseRowsArgument failed without a message", bytes.left(80).toStdString());
    }
    FigureSpec spec;
    try {
        spec = FigureSpec::fromJson(bytes, source);
        spec.validate(source);
    } catch (const FigureSpecError& e) {
        fuzz::checkNamedOneLine(e.what(), "fuzz.json", "figure spec");
        return 0;
    }
    (void)spec.pixelSize();
    (void)spec.sizeMm();
    const QByteArray json = spec.toJson();
    FigureSpec again;
    try {
        again = FigureSpec::fromJson(json, QStringLiteral("round trip"));
    } catch (const FigureSpecError& e) {
        fuzz::violated("toJson output does not read back", e.what());
    }
    if (!(again == spec))
        fuzz::violated("round trip changed the spec", json.toStdString());
    return 0;
}
